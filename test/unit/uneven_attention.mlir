func.func @main(%x: tensor<60x128xf16>) -> tensor<60x128xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 31, std = 0.05> : tensor<128x128xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 32, std = 0.05> : tensor<128x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 33, std = 0.05> : tensor<128x32xf16>
  %q = graph.matmul %x, %wq : (tensor<60x128xf16>, tensor<128x128xf16>) -> tensor<60x128xf16>
  %k = graph.matmul %x, %wk : (tensor<60x128xf16>, tensor<128x32xf16>) -> tensor<60x32xf16>
  %v = graph.matmul %x, %wv : (tensor<60x128xf16>, tensor<128x32xf16>) -> tensor<60x32xf16>
  %qh = graph.split_heads %q {heads = 8 : i64} : tensor<60x128xf16> -> tensor<8x60x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<60x32xf16> -> tensor<2x60x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<60x32xf16> -> tensor<2x60x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "streamed", causal} : (tensor<8x60x16xf16>, tensor<2x60x16xf16>, tensor<2x60x16xf16>) -> tensor<8x60x16xf16>
  %m = graph.merge_heads %a : tensor<8x60x16xf16> -> tensor<60x128xf16>
  func.return %m : tensor<60x128xf16>
}
