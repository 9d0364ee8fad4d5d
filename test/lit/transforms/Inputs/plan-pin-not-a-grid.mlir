// A pinned matmul grid that plan-pin.mlir expects the planner to refuse.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x1024xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x1024xf16>
  %h = graph.matmul %x, %w1 {plan.choice = #plan.choice<gemm, grid = [1, 5, 3]>} : (tensor<64x256xf16>, tensor<256x1024xf16>) -> tensor<64x1024xf16>
  func.return %h : tensor<64x1024xf16>
}
