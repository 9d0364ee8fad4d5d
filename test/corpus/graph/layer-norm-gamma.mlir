func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %g = graph.parameter "g" dense<1.0> : tensor<8xf16> : tensor<8xf16>
  %b = graph.parameter "b" dense<0.0> : tensor<16xf16> : tensor<16xf16>
  %y = graph.layer_norm %x, %g, %b : (tensor<8x16xf16>, tensor<8xf16>, tensor<16xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
