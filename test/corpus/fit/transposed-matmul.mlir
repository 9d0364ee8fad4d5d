// Transposed matmul operands verify but are not planned (use graph.transpose).
func.func @main(%x: tensor<16x8xf16>, %w: tensor<16x16xf16>) -> tensor<8x16xf16> {
  %y = graph.matmul %x, %w {transpose_lhs} : (tensor<16x8xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
