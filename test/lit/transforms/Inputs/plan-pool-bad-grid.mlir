// A pool pinned to a grid the planner cannot emit (3 row blocks of 4 rows repeat a split): plan-pool.mlir expects a refusal.
func.func @main(%x: tensor<1x8x8x16xf16>) -> tensor<1x4x4x16xf16> {
  %r = graph.relu %x : tensor<1x8x8x16xf16> -> tensor<1x8x8x16xf16>
  %y = graph.pool %r {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, plan.choice = #plan.choice<pool, grid = [1, 3, 2, 1]>} : tensor<1x8x8x16xf16> -> tensor<1x4x4x16xf16>
  func.return %y : tensor<1x4x4x16xf16>
}
