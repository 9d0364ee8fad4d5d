func.func @main(%x: tensor<2x8x4xf16>) -> tensor<8x16xf16> {
  %y = graph.merge_heads %x : tensor<2x8x4xf16> -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
