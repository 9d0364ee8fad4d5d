func.func @main(%x: tensor<8x16xf16>) -> tensor<8xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<16xf16>
  %y = graph.matmul %x, %w : (tensor<8x16xf16>, tensor<16xf16>) -> tensor<8xf16>
  func.return %y : tensor<8xf16>
}
