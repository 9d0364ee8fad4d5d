func.func @main(%x: tensor<1x4x4x4xf32>) -> tensor<1x3x3x4xf32> {
  %y = graph.pool %x {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 2, 0, 0, 0>} : tensor<1x4x4x4xf32> -> tensor<1x3x3x4xf32>
  func.return %y : tensor<1x3x3x4xf32>
}
