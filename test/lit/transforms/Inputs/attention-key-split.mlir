// attention_small (examples/) with its attention pinned to a (kv heads 2, group 4, query blocks
// 4, key blocks 2) grid, so the partial states' staging and combine are seen (the planner's own
// choice on sim64 is one key block: transformer.mlir, ATT1).
func.func @main(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 11, std = 0.05> : tensor<128x128xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 12, std = 0.05> : tensor<128x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 13, std = 0.05> : tensor<128x32xf16>
  %wo = graph.parameter "wo" #graph.gaussian<seed = 14, std = 0.05> : tensor<128x128xf16>
  %q = graph.matmul %x, %wq : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  %k = graph.matmul %x, %wk : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %v = graph.matmul %x, %wv : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %qh = graph.split_heads %q {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x64x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "materialized", plan.choice = #plan.choice<attention, grid = [2, 4, 4, 2]>} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  %m = graph.merge_heads %a : tensor<8x64x16xf16> -> tensor<64x128xf16>
  %o = graph.matmul %m, %wo : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  func.return %o : tensor<64x128xf16>
}
