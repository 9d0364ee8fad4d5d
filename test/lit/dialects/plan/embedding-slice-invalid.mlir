// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The table replicated over the row-block dimension: the whole table on every tile.
func.func @f(%emb: !plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[], [1]], memory = standard>>, %ids: !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) {
  %p = plan.embedding_slice %emb, %ids : (!plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[], [1]], memory = standard>>, !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) -> !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>>
  func.return
}
// CHECK: plan.embedding_slice: the table must be [V, D] split [[0], [1]] over a 2-d grid

// -----

// The ids split over the tiles instead of replicated on each.
func.func @f(%emb: !plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, %ids: !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[1]], memory = standard>>) {
  %p = plan.embedding_slice %emb, %ids : (!plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[1]], memory = standard>>) -> !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>>
  func.return
}
// CHECK: plan.embedding_slice: indices must be replicated on every tile of the table's grid

// -----

func.func @f(%emb: !plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, %ids: !plan.tensor<8xf32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) {
  %p = plan.embedding_slice %emb, %ids : (!plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<8xf32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) -> !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>>
  func.return
}
// CHECK: plan.embedding_slice: indices must be i32, got f32

// -----

// Four row blocks, but the result claims to be the lookup itself.
func.func @f(%emb: !plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, %ids: !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) {
  %p = plan.embedding_slice %emb, %ids : (!plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) -> !plan.tensor<8x32xf16, #plan.layout<grid = [4, 4], split = [[], [1]], memory = standard>>
  func.return
}
// CHECK: plan.embedding_slice: more than one row block gives a result partial over grid dim 0, and vice versa

// -----

func.func @f(%emb: !plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, %ids: !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) {
  %p = plan.embedding_slice %emb, %ids : (!plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) -> !plan.tensor<8x32xf16, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>>
  func.return
}
// CHECK: plan.embedding_slice: result element type must be f32

// -----

func.func @f(%emb: !plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, %ids: !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) {
  %p = plan.embedding_slice %emb, %ids : (!plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<8xi32, #plan.layout<grid = [4, 4], split = [[]], memory = standard>>) -> !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[1], []], partial = 0, memory = standard>>
  func.return
}
// CHECK: plan.embedding_slice: result must be [8, 32] split [[], [1]] on the table's grid
