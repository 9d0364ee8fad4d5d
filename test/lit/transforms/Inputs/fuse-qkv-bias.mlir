// fuse-sibling-matmuls.mlir's run with biases: q, k and v projections each add a bias vector of
// their own, so the ladder fuses the biases too (one add on the fused product); every biased
// slice is checked by its name against the unfused reference.
func.func @main(%x: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 1, std = 0.1> : tensor<64x64xf16>
  %q = graph.matmul %x, %wq : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 2, std = 0.1> : tensor<64x32xf16>
  %k = graph.matmul %x, %wk : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 3, std = 0.1> : tensor<64x32xf16>
  %v = graph.matmul %x, %wv : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  %bq = graph.parameter "bq" #graph.gaussian<seed = 4, std = 0.5> : tensor<64xf16>
  %bk = graph.parameter "bk" #graph.gaussian<seed = 5, std = 0.5> : tensor<32xf16>
  %bv = graph.parameter "bv" #graph.gaussian<seed = 6, std = 0.5> : tensor<32xf16>
  %qb = graph.add %q, %bq : (tensor<32x64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %kb = graph.add %k, %bk : (tensor<32x32xf16>, tensor<32xf16>) -> tensor<32x32xf16>
  %vb = graph.add %v, %bv : (tensor<32x32xf16>, tensor<32xf16>) -> tensor<32x32xf16>
  %kv = graph.concat %kb, %vb {axis = 1 : i64} : (tensor<32x32xf16>, tensor<32x32xf16>) -> tensor<32x64xf16>
  %s = graph.add %qb, %kv : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  func.return %s : tensor<32x64xf16>
}
