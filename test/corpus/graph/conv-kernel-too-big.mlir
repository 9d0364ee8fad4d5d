func.func @main(%x: tensor<1x2x2x4xf32>, %w: tensor<5x5x4x4xf32>) -> tensor<1x1x1x4xf32> {
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x2x2x4xf32>, tensor<5x5x4x4xf32>) -> tensor<1x1x1x4xf32>
  func.return %y : tensor<1x1x1x4xf32>
}
