// A ReLU's 3x3/2 max pool, planned (plan-pool.mlir runs it and expects the check to pass).
func.func @main(%x: tensor<2x9x8x24xf16>) -> tensor<2x5x4x24xf16> {
  %r = graph.relu %x : tensor<2x9x8x24xf16> -> tensor<2x9x8x24xf16>
  %y = graph.pool %r {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<2x9x8x24xf16> -> tensor<2x5x4x24xf16>
  func.return %y : tensor<2x5x4x24xf16>
}
