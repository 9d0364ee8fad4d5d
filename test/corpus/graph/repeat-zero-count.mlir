func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %r = graph.repeat 0 iter(%c = %x) : (tensor<8x16xf16>) {
    %y = graph.relu %c : tensor<8x16xf16> -> tensor<8x16xf16>
    graph.yield %y : tensor<8x16xf16>
  }
  func.return %r : tensor<8x16xf16>
}
