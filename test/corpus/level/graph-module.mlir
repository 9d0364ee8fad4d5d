// A valid graph-level model used by the level, npz and target cases
func.func @main(%x: tensor<8x16xf16>) -> tensor<16x8xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<16x16xf16>
  %y = graph.matmul %x, %w : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
  %t = graph.transpose %y {perm = array<i64: 1, 0>} : tensor<8x16xf16> -> tensor<16x8xf16>
  %s = graph.softmax %t : tensor<16x8xf16> -> tensor<16x8xf16>
  func.return %s : tensor<16x8xf16>
}
