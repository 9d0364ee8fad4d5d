// A Gaussian initializer with a negative seed (NumPy's generator refused it at run time)
func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = -1, std = 0.1> : tensor<8x16xf16>
  %y = graph.add %x, %w : (tensor<8x16xf16>, tensor<8x16xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
