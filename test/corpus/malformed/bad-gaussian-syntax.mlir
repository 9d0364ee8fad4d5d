func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = one, std = 0.1> : tensor<8x8xf16>
  %y = graph.matmul %x, %w : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}
