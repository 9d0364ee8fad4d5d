// A column-vector broadcast ([8, 1] onto [8, 16]) verifies but is not planned.
func.func @main(%x: tensor<8x16xf16>, %c: tensor<8x1xf16>) -> tensor<8x16xf16> {
  %y = graph.add %x, %c : (tensor<8x16xf16>, tensor<8x1xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
