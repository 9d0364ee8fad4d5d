// A 1x1 convolution whose filter fetch and input patch run in one exchange (join-phases.mlir runs it).
func.func @main(%x: tensor<2x8x8x64xf16>) -> tensor<2x8x8x32xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<1x1x64x32xf16>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64, plan.choice = #plan.choice<conv, grid = [2, 2, 2, 1]>} : (tensor<2x8x8x64xf16>, tensor<1x1x64x32xf16>) -> tensor<2x8x8x32xf16>
  func.return %y : tensor<2x8x8x32xf16>
}
