// A plan.choice on an op that has no implementation to choose: plan-pin.mlir expects a refusal.
func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x1024xf16> {
  %g = graph.gelu %x {plan.choice = #plan.choice<gemm, grid = [4, 4, 1]>} : tensor<64x1024xf16> -> tensor<64x1024xf16>
  func.return %g : tensor<64x1024xf16>
}
