// A trillion trips (the loop counter overflowed uint32 in lower-to-tasm)
func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<16x16xf16>
  %y = graph.repeat 1000000000000 iter(%h = %x) : (tensor<8x16xf16>) {
    %m = graph.matmul %h, %w : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
    graph.yield %m : tensor<8x16xf16>
  }
  func.return %y : tensor<8x16xf16>
}
