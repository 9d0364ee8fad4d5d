func.func @main(%x: tensor<1x8x8x16xf32>, %w: tensor<3x3x8x32xf32>) -> tensor<1x6x6x32xf32> {
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 3 : i64} : (tensor<1x8x8x16xf32>, tensor<3x3x8x32xf32>) -> tensor<1x6x6x32xf32>
  func.return %y : tensor<1x6x6x32xf32>
}
