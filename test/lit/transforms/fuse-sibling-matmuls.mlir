// RUN: ipu-opt %s --split-input-file -p fuse-sibling-matmuls | filecheck %s
// RUN: ipu-opt %s --split-input-file -p fuse-sibling-matmuls | ipu-opt --split-input-file | filecheck %s
// RUN: ipu-run %S/Inputs/fuse-qkv.mlir --target sim16 --check all | filecheck %s --check-prefix=EMU
// RUN: ipu-run %S/Inputs/fuse-qkv-bias.mlir --target sim16 --check all --checked --poison | filecheck %s --check-prefix=EMU
// RUN: ipu-opt %S/Inputs/fuse-qkv-bias.mlir -p fuse-sibling-matmuls | filecheck %s --check-prefix=BIAS

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

// -----

// Each product's only use adds a bias vector of its own ([n] or [1, n], on either side): the
// biases are joined as the weights are and added once to the fused product (derived too), and
// each slice is the biased value, under the add's name. A bias read elsewhere too (`bk`, BERT's
// export shares one zero bias among its adds) stays for its other reader.
// CHECK-LABEL: func.func @biased
// CHECK-NOT:   graph.parameter "bq"
// CHECK:       %bk = graph.parameter "bk"
// CHECK-NEXT:  %[[W:.*]] = graph.parameter "wq+wk" dense<{{.*}}> : tensor<2x3xf32>
// CHECK-NEXT:  %[[F:.*]] = graph.matmul %x, %[[W]] {ipu.derived} : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:  %[[B:.*]] = graph.parameter "wq+wk.bias" dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32> : tensor<3xf32>
// CHECK-NEXT:  %[[FB:.*]] = graph.add %[[F]], %[[B]] {ipu.derived} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:  %qb = graph.slice %[[FB]] {starts = array<i64: 0, 0>} : tensor<4x3xf32> -> tensor<4x2xf32>
// CHECK-NEXT:  %kb = graph.slice %[[FB]] {starts = array<i64: 0, 2>} : tensor<4x3xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  %y = graph.add %x, %bk
func.func @biased(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x1xf32>, tensor<4x2xf32>) {
  %wq = graph.parameter "wq" dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32> : tensor<2x2xf32>
  %wk = graph.parameter "wk" dense<[[2.0], [3.0]]> : tensor<2x1xf32> : tensor<2x1xf32>
  %bq = graph.parameter "bq" dense<[1.0, 2.0]> : tensor<2xf32> : tensor<2xf32>
  %bk = graph.parameter "bk" dense<[[3.0]]> : tensor<1x1xf32> : tensor<1x1xf32>
  %q = graph.matmul %x, %wq : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %k = graph.matmul %x, %wk : (tensor<4x2xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  %qb = graph.add %q, %bq : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %kb = graph.add %bk, %k : (tensor<1x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = graph.add %x, %bk : (tensor<4x2xf32>, tensor<1x1xf32>) -> tensor<4x2xf32>
  func.return %qb, %kb, %y : tensor<4x2xf32>, tensor<4x1xf32>, tensor<4x2xf32>
}

// -----

// A product with no bias beside biased ones: the weights are fused, the adds stay on the slices.
// CHECK-LABEL: func.func @partly
// CHECK:       %q = graph.slice
// CHECK:       %k = graph.slice
// CHECK:       %qb = graph.add %q, %bq
func.func @partly(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 1, std = 0.5> : tensor<2x2xf32>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 2, std = 0.5> : tensor<2x2xf32>
  %bq = graph.parameter "bq" #graph.gaussian<seed = 3, std = 0.5> : tensor<2xf32>
  %q = graph.matmul %x, %wq : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %k = graph.matmul %x, %wk : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %qb = graph.add %q, %bq : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %qb, %k : tensor<4x2xf32>, tensor<4x2xf32>
}

// BIAS:     %[[FB:.*]] = graph.add %{{.*}}, %{{.*}} {ipu.derived} : (tensor<32x128xf16>, tensor<128xf16>) -> tensor<32x128xf16>
// BIAS:     %qb = graph.slice %[[FB]]
// BIAS:     %kb = graph.slice %[[FB]]
// BIAS:     %vb = graph.slice %[[FB]]

// EMU: numericalTest=PASS
