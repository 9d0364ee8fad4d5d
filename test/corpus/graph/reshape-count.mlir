func.func @main(%x: tensor<8x16xf16>) -> tensor<8x8xf16> {
  %y = graph.reshape %x : tensor<8x16xf16> -> tensor<8x8xf16>
  func.return %y : tensor<8x8xf16>
}
