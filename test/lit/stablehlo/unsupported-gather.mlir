// RUN: not ipu-translate --import-stablehlo %s 2>&1 | filecheck %s

// An embedding lookup into a table passed at run time (the graph level gathers rows of weights
// only): the embedding lookup's refusal (shared with the ONNX frontend), naming the StableHLO op.

// CHECK: error: stablehlo import: stablehlo.gather: runtime indices into a computed tensor are not supported
func.func @main(%table: tensor<10x8xf32>, %ids: tensor<4xi32>) -> tensor<4x8xf32> {
  %0 = stablehlo.reshape %ids : (tensor<4xi32>) -> tensor<4x1xi32>
  %1 = "stablehlo.gather"(%table, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}> : (tensor<10x8xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
