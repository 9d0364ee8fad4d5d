func.func @main(%x: tensor<8x16xf16>) -> tensor<3x8x5xf16> {
  %y = graph.split_heads %x {heads = 3 : i64} : tensor<8x16xf16> -> tensor<3x8x5xf16>
  func.return %y : tensor<3x8x5xf16>
}
