// f16 partials pinned on a float32 matmul: half-partials.mlir expects a refusal naming the op.
func.func @main(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x256xf32>
  %h = graph.matmul %x, %w1 {plan.choice = #plan.choice<gemm, grid = [1, 2, 8], partials = f16>} : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  func.return %h : tensor<64x256xf32>
}
