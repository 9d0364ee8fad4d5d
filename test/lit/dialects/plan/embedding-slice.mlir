// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// The multiSlice form of an embedding lookup: the table split [[0], [1]] over a (pv, pd) grid,
// the ids replicated on it, the slice partial over grid dim 0 (f32) and summed by plan.reduce.
// With one row block (pv = 1) the slice is the lookup itself, in the table's element type.
// CHECK-LABEL: func.func @partial
func.func @partial(%emb: !plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, %ids: !plan.tensor<1x8xi32, #plan.layout<grid = [4, 4], split = [[], []], memory = standard>>) -> !plan.tensor<8x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>> {
  // CHECK: %p = plan.embedding_slice %emb, %ids : (!plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<1x8xi32, #plan.layout<grid = [4, 4], split = [[], []], memory = standard>>) -> !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>>
  %p = plan.embedding_slice %emb, %ids : (!plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<1x8xi32, #plan.layout<grid = [4, 4], split = [[], []], memory = standard>>) -> !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>>
  // CHECK-NEXT: %x = plan.reduce %p {value = "x"}
  %x = plan.reduce %p {value = "x"} : !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>> -> !plan.tensor<8x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>
  func.return %x : !plan.tensor<8x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>
}

// CHECK-LABEL: func.func @whole_rows
func.func @whole_rows(%emb: !plan.tensor<64x32xf32, #plan.layout<grid = [1, 16], split = [[0], [1]], memory = standard>>, %ids: !plan.tensor<8xi32, #plan.layout<grid = [1, 16], split = [[]], memory = standard>>) -> !plan.tensor<8x32xf32, #plan.layout<grid = [1, 16], split = [[], [1]], memory = standard>> {
  // CHECK: %x = plan.embedding_slice %emb, %ids {value = "x"} : {{.*}} -> !plan.tensor<8x32xf32, #plan.layout<grid = [1, 16], split = [[], [1]], memory = standard>>
  %x = plan.embedding_slice %emb, %ids {value = "x"} : (!plan.tensor<64x32xf32, #plan.layout<grid = [1, 16], split = [[0], [1]], memory = standard>>, !plan.tensor<8xi32, #plan.layout<grid = [1, 16], split = [[]], memory = standard>>) -> !plan.tensor<8x32xf32, #plan.layout<grid = [1, 16], split = [[], [1]], memory = standard>>
  func.return %x : !plan.tensor<8x32xf32, #plan.layout<grid = [1, 16], split = [[], [1]], memory = standard>>
}
