// RUN: ipu-opt %s --split-input-file -p 'plan-decide{target=sim64}' | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim64}' --log-level info -o %t 2>&1 | filecheck %s --check-prefix=GROUPS

// plan-decide prices a matmul's grid with the conversion its consumer will make: a layer norm
// (here behind an elementwise op, which keeps its operand's layout) reads whole rows, so the
// [64x64] x [64x512] matmul takes fewer column blocks (4 x 16: 16 incoming fragments per row
// tile) than the same matmul whose result goes straight out (2 x 32). (Under the PopLibs-derived
// kernel costs and a fragment weight of 80, a K = 128 contraction makes the matmul dear enough
// that both pick 2 x 32; with K = 64 the consumer's gather decides. The 4 x 16 grid runs its
// AMP swapped: a tile's 32 weight columns as the AMP's rows, its 16 tokens one output group.)

func.func @normed(%x: tensor<64x64xf16>) -> tensor<64x512xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<64x512xf16>
  %g = graph.parameter "g" dense<1.0> : tensor<512xf16> : tensor<512xf16>
  %b = graph.parameter "b" dense<0.0> : tensor<512xf16> : tensor<512xf16>
  %x1 = graph.relu %x : tensor<64x64xf16> -> tensor<64x64xf16>
  %y = graph.matmul %x1, %w : (tensor<64x64xf16>, tensor<64x512xf16>) -> tensor<64x512xf16>
  %r = graph.gelu %y : tensor<64x512xf16> -> tensor<64x512xf16>
  %n = graph.layer_norm %r, %g, %b : (tensor<64x512xf16>, tensor<512xf16>, tensor<512xf16>) -> tensor<64x512xf16>
  func.return %n : tensor<64x512xf16>
}
// CHECK-LABEL: func.func @normed(
// CHECK:       graph.matmul {{.*}}plan.choice = #plan.choice<gemm, grid = [4, 16, 1], weight = resident, orientation = swapped>

// -----

func.func @plain(%x: tensor<64x64xf16>) -> tensor<64x512xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<64x512xf16>
  %x1 = graph.relu %x : tensor<64x64xf16> -> tensor<64x64xf16>
  %y = graph.matmul %x1, %w : (tensor<64x64xf16>, tensor<64x512xf16>) -> tensor<64x512xf16>
  %r = graph.gelu %y : tensor<64x512xf16> -> tensor<64x512xf16>
  func.return %r : tensor<64x512xf16>
}
// CHECK-LABEL: func.func @plain(
// CHECK:       graph.matmul {{.*}}plan.choice = #plan.choice<gemm, grid = [2, 32, 1], weight = resident>

// -----

// Two identical layers: the search decides the two first matmuls together and the two second
// ones together (two groups for four decision points).
func.func @layers(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.05> : tensor<128x512xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 2, std = 0.05> : tensor<512x128xf16>
  %w3 = graph.parameter "w3" #graph.gaussian<seed = 3, std = 0.05> : tensor<128x512xf16>
  %w4 = graph.parameter "w4" #graph.gaussian<seed = 4, std = 0.05> : tensor<512x128xf16>
  %h1 = graph.matmul %x, %w1 : (tensor<64x128xf16>, tensor<128x512xf16>) -> tensor<64x512xf16>
  %a1 = graph.gelu %h1 : tensor<64x512xf16> -> tensor<64x512xf16>
  %y1 = graph.matmul %a1, %w2 : (tensor<64x512xf16>, tensor<512x128xf16>) -> tensor<64x128xf16>
  %r1 = graph.relu %y1 : tensor<64x128xf16> -> tensor<64x128xf16>
  %h2 = graph.matmul %r1, %w3 : (tensor<64x128xf16>, tensor<128x512xf16>) -> tensor<64x512xf16>
  %a2 = graph.gelu %h2 : tensor<64x512xf16> -> tensor<64x512xf16>
  %y2 = graph.matmul %a2, %w4 : (tensor<64x512xf16>, tensor<512x128xf16>) -> tensor<64x128xf16>
  %r2 = graph.relu %y2 : tensor<64x128xf16> -> tensor<64x128xf16>
  func.return %r2 : tensor<64x128xf16>
}
// GROUPS: searched operator plans decision_points=4 decision_groups=2 evaluated=
