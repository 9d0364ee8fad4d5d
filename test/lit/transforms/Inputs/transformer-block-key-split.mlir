// transformer_block_small (examples/) with its attention pinned to a (kv heads 2, group 4, query
// blocks 4, key blocks 2) grid, so the key split and the partial states' combine are seen (the
// planner's own choice on sim64 is one key block: transformer.mlir, ATT1).
func.func @main(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %g1 = graph.parameter "ln1_gamma" dense<1.0> : tensor<128xf16> : tensor<128xf16>
  %b1 = graph.parameter "ln1_beta" dense<0.0> : tensor<128xf16> : tensor<128xf16>
  %wq = graph.parameter "wq" #graph.gaussian<seed = 21, std = 0.05> : tensor<128x128xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 22, std = 0.05> : tensor<128x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 23, std = 0.05> : tensor<128x32xf16>
  %wo = graph.parameter "wo" #graph.gaussian<seed = 24, std = 0.05> : tensor<128x128xf16>
  %g2 = graph.parameter "ln2_gamma" dense<1.0> : tensor<128xf16> : tensor<128xf16>
  %b2 = graph.parameter "ln2_beta" dense<0.0> : tensor<128xf16> : tensor<128xf16>
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 25, std = 0.05> : tensor<128x512xf16>
  %c1 = graph.parameter "c1" #graph.gaussian<seed = 26, std = 0.02> : tensor<512xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 27, std = 0.05> : tensor<512x128xf16>
  %c2 = graph.parameter "c2" #graph.gaussian<seed = 28, std = 0.02> : tensor<128xf16>
  %n1 = graph.layer_norm %x, %g1, %b1 : (tensor<64x128xf16>, tensor<128xf16>, tensor<128xf16>) -> tensor<64x128xf16>
  %q = graph.matmul %n1, %wq : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  %k = graph.matmul %n1, %wk : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %v = graph.matmul %n1, %wv : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %qh = graph.split_heads %q {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x64x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "materialized", causal, plan.choice = #plan.choice<attention, grid = [2, 4, 4, 2]>} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  %m = graph.merge_heads %a : tensor<8x64x16xf16> -> tensor<64x128xf16>
  %o = graph.matmul %m, %wo : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  %r1 = graph.add %x, %o : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %n2 = graph.layer_norm %r1, %g2, %b2 : (tensor<64x128xf16>, tensor<128xf16>, tensor<128xf16>) -> tensor<64x128xf16>
  %h = graph.matmul %n2, %w1 : (tensor<64x128xf16>, tensor<128x512xf16>) -> tensor<64x512xf16>
  %hb = graph.add %h, %c1 : (tensor<64x512xf16>, tensor<512xf16>) -> tensor<64x512xf16>
  %ge = graph.gelu %hb : tensor<64x512xf16> -> tensor<64x512xf16>
  %f = graph.matmul %ge, %w2 : (tensor<64x512xf16>, tensor<512x128xf16>) -> tensor<64x128xf16>
  %fb = graph.add %f, %c2 : (tensor<64x128xf16>, tensor<128xf16>) -> tensor<64x128xf16>
  %y = graph.add %r1, %fb : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
