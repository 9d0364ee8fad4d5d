// A splat of 10^10 elements (40 GB): refused by its size, before anything is allocated
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c = graph.parameter "c" dense<1.0> : tensor<100000x100000xf32> : tensor<100000x100000xf32>
  func.return %x : tensor<8x16xf32>
}
