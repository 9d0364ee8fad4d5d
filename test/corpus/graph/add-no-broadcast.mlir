func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %b = graph.parameter "b" #graph.gaussian<seed = 1, std = 0.1> : tensor<8xf16>
  %y = graph.add %x, %b : (tensor<8x16xf16>, tensor<8xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
