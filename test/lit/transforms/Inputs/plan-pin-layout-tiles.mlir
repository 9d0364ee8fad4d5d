// A pinned result layout over more tiles than sim16 has: plan-pin.mlir expects a refusal.
func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x1024xf16> {
  %g = graph.gelu %x {plan.layout = #plan.layout<grid = [32], split = [[0], []], memory = standard>} : tensor<64x1024xf16> -> tensor<64x1024xf16>
  func.return %g : tensor<64x1024xf16>
}
