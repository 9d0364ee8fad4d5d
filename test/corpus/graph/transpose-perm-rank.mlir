func.func @main(%x: tensor<8x16xf16>) -> tensor<16x8xf16> {
  %y = graph.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<8x16xf16> -> tensor<16x8xf16>
  func.return %y : tensor<16x8xf16>
}
