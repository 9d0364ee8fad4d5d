func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %r = graph.repeat 2 iter(%c = %x) : (tensor<8x16xf16>) {
    %y = graph.cast %c : tensor<8x16xf16> -> tensor<8x16xf32>
    graph.yield %y : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf16>
}
