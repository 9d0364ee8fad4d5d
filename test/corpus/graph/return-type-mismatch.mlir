func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf32> {
  %y = graph.relu %x : tensor<8x16xf16> -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf32>
}
