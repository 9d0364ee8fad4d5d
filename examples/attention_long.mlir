// Long causal attention: seq 4096, d_model 4096, 32 query heads, 8 KV heads, head_dim 128;
// q/k/v/o projections, keys and values streamed in blocks with an online softmax.
func.func @main(%x: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 11, std = 0.02> : tensor<4096x4096xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 12, std = 0.02> : tensor<4096x1024xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 13, std = 0.02> : tensor<4096x1024xf16>
  %wo = graph.parameter "wo" #graph.gaussian<seed = 14, std = 0.02> : tensor<4096x4096xf16>
  %q = graph.matmul %x, %wq : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  %k = graph.matmul %x, %wk : (tensor<4096x4096xf16>, tensor<4096x1024xf16>) -> tensor<4096x1024xf16>
  %v = graph.matmul %x, %wv : (tensor<4096x4096xf16>, tensor<4096x1024xf16>) -> tensor<4096x1024xf16>
  %qh = graph.split_heads %q {heads = 32 : i64} : tensor<4096x4096xf16> -> tensor<32x4096x128xf16>
  %kh = graph.split_heads %k {heads = 8 : i64} : tensor<4096x1024xf16> -> tensor<8x4096x128xf16>
  %vh = graph.split_heads %v {heads = 8 : i64} : tensor<4096x1024xf16> -> tensor<8x4096x128xf16>
  %a = graph.attention %qh, %kh, %vh {form = "streamed", causal} : (tensor<32x4096x128xf16>, tensor<8x4096x128xf16>, tensor<8x4096x128xf16>) -> tensor<32x4096x128xf16>
  %m = graph.merge_heads %a : tensor<32x4096x128xf16> -> tensor<4096x4096xf16>
  %o = graph.matmul %m, %wo : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  func.return %o : tensor<4096x4096xf16>
}
