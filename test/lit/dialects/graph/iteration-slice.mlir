// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// graph.iteration_slice: a rolled layer's own weight, slice i of a stacked parameter on trip i
// of the enclosing graph.repeat (what roll-layers writes for each per-layer weight).

// CHECK-LABEL: func.func @rolled
func.func @rolled(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // CHECK: %w.all = graph.parameter "h.*.w" #graph.gaussian<seed = 1, std = 0.1> : tensor<3x8x8xf16>
  %w.all = graph.parameter "h.*.w" #graph.gaussian<seed = 1, std = 0.1> : tensor<3x8x8xf16>
  // CHECK-NEXT: %y.out = graph.repeat 3 iter(%h = %x) : (tensor<4x8xf16>) {
  %y.out = graph.repeat 3 iter(%h = %x) : (tensor<4x8xf16>) {
    // CHECK-NEXT: %w.i = graph.iteration_slice %w.all : tensor<3x8x8xf16> -> tensor<8x8xf16>
    %w.i = graph.iteration_slice %w.all : tensor<3x8x8xf16> -> tensor<8x8xf16>
    // CHECK-NEXT: %y = graph.matmul %h, %w.i
    %y = graph.matmul %h, %w.i : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
    graph.yield %y : tensor<4x8xf16>
  // CHECK: } {rolled}
  } {rolled}
  func.return %y.out : tensor<4x8xf16>
}
