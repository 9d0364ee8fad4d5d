// A hexadecimal f16 literal of more than 16 bits
func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %c = graph.parameter "c" dense<0x1FC00> : tensor<8x16xf16> : tensor<8x16xf16>
  %y = graph.max %x, %c : (tensor<8x16xf16>, tensor<8x16xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
