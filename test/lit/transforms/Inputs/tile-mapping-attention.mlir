// An attention block (seq 256, d_model 64, 4 query heads, 2 KV heads, head_dim 16) on which
// screen-tiles picks a non-identity tile mapping on sim16 under the PopLibs-derived kernel costs
// (test/lit/transforms/tile-mapping.mlir, test/unit/test_tile_mapping.py).
func.func @main(%x: tensor<256x64xf16>) -> tensor<256x64xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 41, std = 0.05> : tensor<64x64xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 42, std = 0.05> : tensor<64x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 43, std = 0.05> : tensor<64x32xf16>
  %q = graph.matmul %x, %wq : (tensor<256x64xf16>, tensor<64x64xf16>) -> tensor<256x64xf16>
  %k = graph.matmul %x, %wk : (tensor<256x64xf16>, tensor<64x32xf16>) -> tensor<256x32xf16>
  %v = graph.matmul %x, %wv : (tensor<256x64xf16>, tensor<64x32xf16>) -> tensor<256x32xf16>
  %qh = graph.split_heads %q {heads = 4 : i64} : tensor<256x64xf16> -> tensor<4x256x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<256x32xf16> -> tensor<2x256x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<256x32xf16> -> tensor<2x256x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "materialized", causal} : (tensor<4x256x16xf16>, tensor<2x256x16xf16>, tensor<2x256x16xf16>) -> tensor<4x256x16xf16>
  %m = graph.merge_heads %a : tensor<4x256x16xf16> -> tensor<256x64xf16>
  func.return %m : tensor<256x64xf16>
}
