// A loop count past the device's 31-bit loop counter (it compiled, and the emulator never finished)
func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<16x16xf16>
  %y = graph.repeat 4294967295 iter(%h = %x) : (tensor<8x16xf16>) {
    %m = graph.matmul %h, %w : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
    graph.yield %m : tensor<8x16xf16>
  }
  func.return %y : tensor<8x16xf16>
}
