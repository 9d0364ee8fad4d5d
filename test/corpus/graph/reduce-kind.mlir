func.func @main(%x: tensor<8x16xf16>) -> tensor<8xf16> {
  %y = graph.reduce %x {kind = "median", axis = 1 : i64} : tensor<8x16xf16> -> tensor<8xf16>
  func.return %y : tensor<8xf16>
}
