func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  func.return %x : tensor<4x8xf16>
}
func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  func.return %x : tensor<4x8xf16>
}
