// RUN: ipu-opt %s -p 'expand-windows{expand_all=true}' | filecheck %s
// RUN: ipu-opt %s -p 'expand-windows{expand_all=true},plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU
// RUN: ipu-opt %s -p expand-windows | filecheck %s --check-prefix=KEEP

// expand-windows: a strided 3x3 conv becomes the padded input, its stride phases moved to the
// front once (one permutation), nine windows that are row ranges of one 2-D view (over a "wide"
// output, cropped at the end), nine matmuls and their adds; a depthwise one is
// the per-channel multiply-accumulate; a max pool pads with the dtype's lowest value by concat;
// an average pool multiplies the windows' sum by a column of reciprocal counts. Expansion values
// carry ipu.derived (no checkpoint); the result keeps the op's name.
func.func @main(%x: tensor<1x8x8x16xf32>, %w: tensor<3x3x16x32xf32>, %d: tensor<3x3x1x32xf32>) -> (tensor<1x4x4x32xf32>, tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>) {
  %y = graph.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 1 : i64} : (tensor<1x8x8x16xf32>, tensor<3x3x16x32xf32>) -> tensor<1x4x4x32xf32>
  %z = graph.conv %y, %d {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x4x4x32xf32>, tensor<3x3x1x32xf32>) -> tensor<1x4x4x32xf32>
  %m = graph.pool %z {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x32xf32> -> tensor<1x2x2x32xf32>
  %a = graph.pool %z {kind = "avg", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x32xf32> -> tensor<1x2x2x32xf32>
  func.return %y, %m, %a : tensor<1x4x4x32xf32>, tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
}

// By default both convolutions stay for the conv plan family (plan.conv: the one-group
// 16-channel one on the AMP, the depthwise one on the vector path); the pools expand.
// KEEP:     %y = graph.conv %x, %w
// KEEP:     %z = graph.conv %y, %d
// KEEP-NOT: graph.pool

// CHECK-NOT:  graph.conv
// CHECK:      graph.pad %x {low = array<i64: 0, 1, 1, 0>, ipu.derived} : tensor<1x8x8x16xf32> -> tensor<1x10x10x16xf32>
// CHECK-NEXT: graph.reshape {{.*}} -> tensor<1x5x2x5x2x16xf32>
// CHECK-NEXT: graph.transpose {{.*}} {perm = array<i64: 2, 4, 0, 1, 3, 5>, ipu.derived} : tensor<1x5x2x5x2x16xf32> -> tensor<2x2x1x5x5x16xf32>
// CHECK-NEXT: graph.reshape {{.*}} -> tensor<100x16xf32>
// the nine windows are row ranges of the phase-major [100, 16] view: phase (a, b) starts at
// 25 (2 a + b), kernel row i // 2 adds 5 rows of the phase, column j // 2 one
// CHECK:      graph.slice {{.*}} {starts = array<i64: 0, 0>, ipu.derived} : tensor<100x16xf32> -> tensor<24x16xf32>
// CHECK-NEXT: graph.slice {{.*}} {starts = array<i64: 25, 0>, ipu.derived}
// CHECK-NEXT: graph.slice {{.*}} {starts = array<i64: 1, 0>, ipu.derived}
// CHECK-NEXT: graph.slice {{.*}} {starts = array<i64: 50, 0>, ipu.derived}
// CHECK-NEXT: graph.slice {{.*}} {starts = array<i64: 75, 0>, ipu.derived}
// CHECK-NEXT: graph.slice {{.*}} {starts = array<i64: 51, 0>, ipu.derived}
// CHECK-NEXT: graph.slice {{.*}} {starts = array<i64: 5, 0>, ipu.derived}
// CHECK-NEXT: graph.slice {{.*}} {starts = array<i64: 30, 0>, ipu.derived}
// CHECK-NEXT: graph.slice {{.*}} {starts = array<i64: 6, 0>, ipu.derived}
// CHECK-COUNT-9: graph.matmul {{.*}} : (tensor<24x16xf32>, tensor<16x32xf32>) -> tensor<24x32xf32>
// the wide output (24 rows: 3 x 5 + 4, rounded up to 8) padded to the 5 x 5 phase grid, of
// which 4 x 4 are outputs
// CHECK:      graph.pad {{.*}} : tensor<24x32xf32> -> tensor<25x32xf32>
// CHECK-NEXT: graph.reshape {{.*}} -> tensor<1x5x5x32xf32>
// CHECK-NEXT: graph.slice {{.*}} -> tensor<1x4x4x32xf32>
// CHECK:      %y = graph.reshape %{{.*}} : tensor<16x32xf32> -> tensor<1x4x4x32xf32>
// CHECK-COUNT-9: graph.mul {{.*}} : (tensor<{{[0-9]+}}x32xf32>, tensor<32xf32>) -> tensor<{{[0-9]+}}x32xf32>
// CHECK:      graph.parameter "m.pad1lo" dense<-3.40282347e+38> : tensor<1xf32> {ipu.derived} : tensor<1x1x4x32xf32>
// CHECK-COUNT-8: graph.max
// CHECK:      %m = graph.reshape
// CHECK:      graph.parameter "a.divisors" dense<[[2.500000e-01], [0.166666672], [0.166666672], [0.111111112]]> : tensor<4x1xf32> {ipu.derived}
// CHECK:      graph.mul {{.*}} : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
// CHECK-NEXT: %a = graph.reshape

// PLAN-COUNT-9: plan.gemm
// PLAN-NOT:  graph.conv
// PLAN-NOT:  graph.pool

// EMU: numericalTest=PASS
