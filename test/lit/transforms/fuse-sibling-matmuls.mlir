// RUN: ipu-opt %s --split-input-file -p fuse-sibling-matmuls | filecheck %s
// RUN: ipu-opt %s --split-input-file -p fuse-sibling-matmuls | ipu-opt --split-input-file | filecheck %s
// RUN: ipu-run %S/Inputs/fuse-qkv.mlir --target sim16 --check all | filecheck %s --check-prefix=EMU

// fuse-sibling-matmuls: three projections of one input (q, k, v) by weights of their own become
// one matmul over the weights side by side; each old result is a column slice of it with the
// old name (its checkpoint), and the fused product is derived (no value of the reference).
// Seeded weights are materialized, joined along the columns in the matmuls' order.

// CHECK-LABEL: func.func @qkv
// CHECK:       %[[W:.*]] = graph.parameter "wq+wk+wv" dense<{{.*}}> : tensor<8x24xf32>
// CHECK-NEXT:  %[[F:.*]] = graph.matmul %x, %[[W]] {ipu.derived} : (tensor<4x8xf32>, tensor<8x24xf32>) -> tensor<4x24xf32>
// CHECK-NEXT:  %q = graph.slice %[[F]] {starts = array<i64: 0, 0>} : tensor<4x24xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %k = graph.slice %[[F]] {starts = array<i64: 0, 8>} : tensor<4x24xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %v = graph.slice %[[F]] {starts = array<i64: 0, 16>} : tensor<4x24xf32> -> tensor<4x8xf32>
// CHECK-NOT:   graph.matmul
func.func @qkv(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 1, std = 0.5> : tensor<8x8xf32>
  %q = graph.matmul %x, %wq : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 2, std = 0.5> : tensor<8x8xf32>
  %k = graph.matmul %x, %wk : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 3, std = 0.5> : tensor<8x8xf32>
  %v = graph.matmul %x, %wv : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  func.return %q, %k, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Dense weights of different widths (a grouped-query k projection narrower than q) are joined
// at their own values: [[1, 2], [3, 4]] and [[5], [6]] give [[1, 2, 5], [3, 4, 6]].
// CHECK-LABEL: func.func @dense
// CHECK:       graph.parameter "a+b" dense<{{\[\[}}1.000000e+00, 2.000000e+00, 5.000000e+00], [3.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK:       %p = graph.slice %{{.*}} {starts = array<i64: 0, 0>} : tensor<3x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:  %r = graph.slice %{{.*}} {starts = array<i64: 0, 2>} : tensor<3x3xf32> -> tensor<3x1xf32>
func.func @dense(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x1xf32>) {
  %a = graph.parameter "a" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32> : tensor<2x2xf32>
  %b = graph.parameter "b" dense<[[5.0], [6.0]]> : tensor<2x1xf32> : tensor<2x1xf32>
  %p = graph.matmul %x, %a : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %r = graph.matmul %x, %b : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  func.return %p, %r : tensor<3x2xf32>, tensor<3x1xf32>
}

// -----

// Not siblings: a weight read twice (tied), a pinned plan, a different lhs. Nothing changes.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: graph.matmul
// CHECK-NOT:   graph.slice
func.func @kept(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.5> : tensor<8x8xf32>
  %a = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = graph.matmul %y, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %u = graph.parameter "u" #graph.gaussian<seed = 2, std = 0.5> : tensor<8x8xf32>
  %c = graph.matmul %x, %u {plan.choice = #plan.choice<gemm, grid = [1, 1, 1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %t = graph.parameter "t" #graph.gaussian<seed = 3, std = 0.5> : tensor<8x8xf32>
  %d = graph.matmul %y, %t : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  func.return %a, %b, %c, %d : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// EMU: numericalTest=PASS
