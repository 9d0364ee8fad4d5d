// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%w: tensor<3x8x8xf16>) -> tensor<8x8xf16> {
  %s = graph.iteration_slice %w : tensor<3x8x8xf16> -> tensor<8x8xf16>
  func.return %s : tensor<8x8xf16>
}
// CHECK: Operation does not verify: graph.iteration_slice: must sit directly in the body of a graph.repeat

// -----

func.func @f(%x: tensor<4x8xf16>, %w: tensor<3x8x8xf16>) -> tensor<4x8xf16> {
  %o = graph.repeat 2 iter(%h = %x) : (tensor<4x8xf16>) {
    %s = graph.iteration_slice %w : tensor<3x8x8xf16> -> tensor<8x8xf16>
    %y = graph.matmul %h, %s : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
    graph.yield %y : tensor<4x8xf16>
  }
  func.return %o : tensor<4x8xf16>
}
// CHECK: Operation does not verify: graph.iteration_slice: stacks 3 slices in a graph.repeat of 2 iterations

// -----

func.func @f(%x: tensor<4x8xf16>, %w: tensor<3x8x8xf16>) -> tensor<4x8xf16> {
  %o = graph.repeat 3 iter(%h = %x) : (tensor<4x8xf16>) {
    %s = graph.iteration_slice %w : tensor<3x8x8xf16> -> tensor<8x4xf16>
    graph.yield %h : tensor<4x8xf16>
  }
  func.return %o : tensor<4x8xf16>
}
// CHECK: Operation does not verify: graph.iteration_slice: result tensor<8x4xf16> is not one slice of tensor<3x8x8xf16>
