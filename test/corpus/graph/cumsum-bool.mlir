func.func @main(%x: tensor<4x8xi1>) -> tensor<4x8xi1> {
  %y = graph.cumsum %x : tensor<4x8xi1> -> tensor<4x8xi1>
  func.return %y : tensor<4x8xi1>
}
