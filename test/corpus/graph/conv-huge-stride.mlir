func.func @main(%x: tensor<1x4x4x4xf32>, %w: tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32> {
  %y = graph.conv %x, %w {strides = array<i64: 4294967296, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32>
  func.return %y : tensor<1x1x1x4xf32>
}
