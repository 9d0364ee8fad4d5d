func.func @main(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %y = graph.relu %x : tensor<4x8xi32> -> tensor<4x8xi32>
  func.return %y : tensor<4x8xi32>
}
