func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = -0.5> : tensor<16xf16>
  %y = graph.add %x, %w : (tensor<8x16xf16>, tensor<16xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
