func.func @main(%x: tensor<4x8xf99>) -> tensor<4x8xf99> {
  func.return %x : tensor<4x8xf99>
}
