func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %y = graph.softmax %x {axis = 2 : i64} : tensor<8x16xf16> -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
