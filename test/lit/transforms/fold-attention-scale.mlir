// RUN: ipu-opt %s --split-input-file -p fold-attention-scale | filecheck %s
// RUN: ipu-opt %s --split-input-file -p fold-attention-scale | ipu-opt --split-input-file | filecheck %s
// RUN: ipu-opt %S/Inputs/fold-scale-attention.mlir -p fuse-sibling-matmuls,fold-attention-scale | filecheck %s --check-prefix=FUSED
// RUN: ipu-run %S/Inputs/fold-scale-attention.mlir --target sim16 --check all --checked --poison | filecheck %s --check-prefix=EMU

// fold-attention-scale: an attention's scale, when a power of two, goes into the weights (and
// bias) of the projection that computes q; the attention runs at scale 1 and every value from
// the weights to the attention is derived (scaled: no checkpoint).

// 2 heads of 4: the default scale 1/sqrt(4) = 0.5 halves wq and bq.
// CHECK-LABEL: func.func @biased
// CHECK:       %wq = graph.parameter "wq" dense<{{\[\[}}5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00, 2.500000e+00, 3.000000e+00, 3.500000e+00, 4.000000e+00]]> : tensor<1x8xf32> : tensor<1x8xf32>
// CHECK-NEXT:  %q = graph.matmul %x, %wq {ipu.derived}
// CHECK:       %bq = graph.parameter "bq" dense<[2.500000e-01, -2.500000e-01, 5.000000e-01, -5.000000e-01, 1.000000e+00, -1.000000e+00, 2.000000e+00, -2.000000e+00]> : tensor<8xf32> : tensor<8xf32>
// CHECK-NEXT:  %qb = graph.add %q, %bq {ipu.derived}
// CHECK-NEXT:  %qh = graph.split_heads %qb {heads = 2 : i64, ipu.derived}
// CHECK-NEXT:  %kh = graph.split_heads %k {heads = 2 : i64} :
// CHECK-NEXT:  %a = graph.attention %qh, %kh, %kh {form = "materialized", scale = 1.000000e+00 : f64}
func.func @biased(%x: tensor<4x1xf32>, %k: tensor<4x8xf32>) -> tensor<2x4x4xf32> {
  %wq = graph.parameter "wq" dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]> : tensor<1x8xf32> : tensor<1x8xf32>
  %q = graph.matmul %x, %wq : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %bq = graph.parameter "bq" dense<[0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0]> : tensor<8xf32> : tensor<8xf32>
  %qb = graph.add %q, %bq : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %qh = graph.split_heads %qb {heads = 2 : i64} : tensor<4x8xf32> -> tensor<2x4x4xf32>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<4x8xf32> -> tensor<2x4x4xf32>
  %a = graph.attention %qh, %kh, %kh {form = "materialized"} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  func.return %a : tensor<2x4x4xf32>
}

// -----

// q is an input, k a projection by a weight that another matmul also reads: k's gets a scaled
// copy of its own (an explicit scale of 1/8 here), the other reader keeps the original.
// CHECK-LABEL: func.func @keys
// CHECK:       %w = graph.parameter "w.scaled" dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]>
// CHECK-NEXT:  %w_1 = graph.parameter "w" dense<{{\[\[}}8.000000e+00, 1.600000e+01, 2.400000e+01, 3.200000e+01]]>
// CHECK-NEXT:  %k = graph.matmul %y, %w {ipu.derived}
// CHECK-NEXT:  %u = graph.matmul %y, %w_1 :
// CHECK:       graph.attention %qh, %kh, %qh {form = "streamed", scale = 1.000000e+00 : f64}
func.func @keys(%q: tensor<4x4xf32>, %y: tensor<4x1xf32>) -> (tensor<1x4x4xf32>, tensor<4x4xf32>) {
  %w = graph.parameter "w" dense<[[8.0, 16.0, 24.0, 32.0]]> : tensor<1x4xf32> : tensor<1x4xf32>
  %k = graph.matmul %y, %w : (tensor<4x1xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %u = graph.matmul %y, %w : (tensor<4x1xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %qh = graph.split_heads %q {heads = 1 : i64} : tensor<4x4xf32> -> tensor<1x4x4xf32>
  %kh = graph.split_heads %k {heads = 1 : i64} : tensor<4x4xf32> -> tensor<1x4x4xf32>
  %a = graph.attention %qh, %kh, %qh {form = "streamed", scale = 0.125 : f64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  func.return %a, %u : tensor<1x4x4xf32>, tensor<4x4xf32>
}

// -----

// Left alone: a scale that is not a power of two (1/sqrt(2): the weights would round again),
// a projection whose result another op also reads, a transposed weight, and keys that are also
// the values (scaling them would scale the output).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:   ipu.derived
// CHECK-NOT:   scale = 1.000000e+00
func.func @kept(%x: tensor<4x1xf32>, %t: tensor<4x4xf32>) -> (tensor<2x4x2xf32>, tensor<1x4x4xf32>, tensor<4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) {
  %w = graph.parameter "w" dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32> : tensor<1x4xf32>
  %q = graph.matmul %x, %w : (tensor<4x1xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %qh = graph.split_heads %q {heads = 2 : i64} : tensor<4x4xf32> -> tensor<2x4x2xf32>
  %t2 = graph.split_heads %t {heads = 2 : i64} : tensor<4x4xf32> -> tensor<2x4x2xf32>
  %a = graph.attention %qh, %t2, %t2 {form = "materialized"} : (tensor<2x4x2xf32>, tensor<2x4x2xf32>, tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
  %v = graph.parameter "v" dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32> : tensor<1x4xf32>
  %p = graph.matmul %x, %v : (tensor<4x1xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %ph = graph.split_heads %p {heads = 1 : i64} : tensor<4x4xf32> -> tensor<1x4x4xf32>
  %th = graph.split_heads %t {heads = 1 : i64} : tensor<4x4xf32> -> tensor<1x4x4xf32>
  %b = graph.attention %ph, %th, %th {form = "materialized"} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %z = graph.parameter "z" dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32> : tensor<4x1xf32>
  %r = graph.matmul %x, %z {transpose_rhs} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  %rh = graph.split_heads %r {heads = 1 : i64} : tensor<4x4xf32> -> tensor<1x4x4xf32>
  %c = graph.attention %rh, %th, %th {form = "materialized", scale = 0.5 : f64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %o = graph.parameter "o" dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32> : tensor<1x4xf32>
  %s = graph.matmul %x, %o : (tensor<4x1xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %sh = graph.split_heads %s {heads = 1 : i64} : tensor<4x4xf32> -> tensor<1x4x4xf32>
  %d = graph.attention %th, %sh, %sh {form = "materialized", scale = 0.5 : f64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  func.return %a, %b, %p, %c, %d : tensor<2x4x2xf32>, tensor<1x4x4xf32>, tensor<4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
}

// Fused q, k and v (fuse-sibling-matmuls): only the q columns of the fused weight and bias are
// scaled (4 heads of 16: 1/4); the k and v slices stay checked against the reference.
// FUSED:       graph.parameter "wq+wk+wv" dense
// FUSED:       %qb = graph.slice %q_fused_biased {starts = array<i64: 0, 0>, ipu.derived}
// FUSED-NEXT:  %kb = graph.slice %q_fused_biased {starts = array<i64: 0, 64>} :
// FUSED-NEXT:  %vb = graph.slice %q_fused_biased {starts = array<i64: 0, 128>} :
// FUSED-NEXT:  %qh = graph.split_heads %qb {heads = 4 : i64, ipu.derived}
// FUSED:       graph.attention %qh, %kh, %vh {form = "materialized", causal, scale = 1.000000e+00 : f64}

// EMU: numericalTest=PASS
