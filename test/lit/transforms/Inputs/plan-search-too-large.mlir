// Input of plan-search.mlir: a [8192x4096] x [4096x4096] fp16 matmul that no grid fits on sim16.
func.func @main(%x: tensor<8192x4096xf16>) -> tensor<8192x4096xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<4096x4096xf16>
  %y = graph.matmul %x, %w : (tensor<8192x4096xf16>, tensor<4096x4096xf16>) -> tensor<8192x4096xf16>
  func.return %y : tensor<8192x4096xf16>
}
