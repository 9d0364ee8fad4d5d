func.func @main(%x: tensor<8x16xf16>) -> tensor<16x8xf32> {
  %y = graph.cast %x : tensor<8x16xf16> -> tensor<16x8xf32>
  func.return %y : tensor<16x8xf32>
}
