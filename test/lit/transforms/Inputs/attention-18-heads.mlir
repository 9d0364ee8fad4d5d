// 18 causal query heads over 3 KV heads with a per-head bias: more heads than sim16's tiles
// (split-attention-heads.mlir runs it).
func.func @gqa(%q: tensor<18x8x4xf32>, %k: tensor<3x8x4xf32>, %v: tensor<3x8x4xf32>, %b: tensor<18x8x8xf32>) -> tensor<18x8x4xf32> {
  %y = graph.attention %q, %k, %v bias %b {form = "materialized", causal} : (tensor<18x8x4xf32>, tensor<3x8x4xf32>, tensor<3x8x4xf32>, tensor<18x8x8xf32>) -> tensor<18x8x4xf32>
  func.return %y : tensor<18x8x4xf32>
}
