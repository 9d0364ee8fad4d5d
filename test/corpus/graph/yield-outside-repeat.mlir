func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  graph.yield %x : tensor<8x16xf16>
  func.return %x : tensor<8x16xf16>
}
