// A padded max pool of a signed value reaching plan-ops unexpanded: plan-pool.mlir expects a refusal.
func.func @main(%x: tensor<1x8x8x16xf16>) -> tensor<1x4x4x16xf16> {
  %y = graph.pool %x {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x16xf16> -> tensor<1x4x4x16xf16>
  func.return %y : tensor<1x4x4x16xf16>
}
