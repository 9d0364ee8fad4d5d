// fuse-sibling-matmuls.mlir's run: q, k and v projections of a normed input, fused by the
// ladder, each slice checked by its name against the unfused reference.
func.func @main(%x: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %g = graph.parameter "g" #graph.gaussian<seed = 7, std = 0.5> : tensor<64xf16>
  %b = graph.parameter "b" #graph.gaussian<seed = 8, std = 0.5> : tensor<64xf16>
  %n = graph.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : (tensor<32x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %wq = graph.parameter "wq" #graph.gaussian<seed = 1, std = 0.1> : tensor<64x64xf16>
  %q = graph.matmul %n, %wq : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 2, std = 0.1> : tensor<64x32xf16>
  %k = graph.matmul %n, %wk : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 3, std = 0.1> : tensor<64x32xf16>
  %v = graph.matmul %n, %wv : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  %kv = graph.concat %k, %v {axis = 1 : i64} : (tensor<32x32xf16>, tensor<32x32xf16>) -> tensor<32x64xf16>
  %s = graph.add %q, %kv : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  func.return %s : tensor<32x64xf16>
}
