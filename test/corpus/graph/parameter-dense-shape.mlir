func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = graph.parameter "w" dense<[1.0, 2.0]> : tensor<2xf16> : tensor<16xf16>
  %y = graph.add %x, %w : (tensor<8x16xf16>, tensor<16xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
