// The most trips a loop counts, each a matmul: the run is over the emulator's cycle budget
func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<16x16xf16>
  %y = graph.repeat 2147483647 iter(%h = %x) : (tensor<8x16xf16>) {
    %m = graph.matmul %h, %w : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
    graph.yield %m : tensor<8x16xf16>
  }
  func.return %y : tensor<8x16xf16>
}
