// fold-attention-scale.mlir's run: a GPT-2-style attention (q, k and v from one input, biased,
// 4 heads of 16: scale 1/4) through the whole ladder, which fuses the projections and folds the
// scale into the q columns of the fused weight and bias; the attention's output and every
// unscaled value are checked by name against the unfolded reference.
func.func @main(%x: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 1, std = 0.1> : tensor<64x64xf16>
  %q = graph.matmul %x, %wq : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 2, std = 0.1> : tensor<64x64xf16>
  %k = graph.matmul %x, %wk : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 3, std = 0.1> : tensor<64x64xf16>
  %v = graph.matmul %x, %wv : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %bq = graph.parameter "bq" #graph.gaussian<seed = 4, std = 0.5> : tensor<64xf16>
  %bk = graph.parameter "bk" #graph.gaussian<seed = 5, std = 0.5> : tensor<64xf16>
  %bv = graph.parameter "bv" #graph.gaussian<seed = 6, std = 0.5> : tensor<64xf16>
  %qb = graph.add %q, %bq : (tensor<32x64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %kb = graph.add %k, %bk : (tensor<32x64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %vb = graph.add %v, %bv : (tensor<32x64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %qh = graph.split_heads %qb {heads = 4 : i64} : tensor<32x64xf16> -> tensor<4x32x16xf16>
  %kh = graph.split_heads %kb {heads = 4 : i64} : tensor<32x64xf16> -> tensor<4x32x16xf16>
  %vh = graph.split_heads %vb {heads = 4 : i64} : tensor<32x64xf16> -> tensor<4x32x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "materialized", causal} : (tensor<4x32x16xf16>, tensor<4x32x16xf16>, tensor<4x32x16xf16>) -> tensor<4x32x16xf16>
  %m = graph.merge_heads %a : tensor<4x32x16xf16> -> tensor<32x64xf16>
  func.return %m : tensor<32x64xf16>
}
