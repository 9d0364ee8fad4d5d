// A pin: gelu on stage 1, so stage 0 holds exp alone (the cut the cost would not choose).
func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %e = graph.exp %x : tensor<16x32xf32> -> tensor<16x32xf32>
  %a = graph.gelu %e {ipu.stage = 1 : i64} : tensor<16x32xf32> -> tensor<16x32xf32>
  %b = graph.relu %a : tensor<16x32xf32> -> tensor<16x32xf32>
  %c = graph.tanh %b : tensor<16x32xf32> -> tensor<16x32xf32>
  func.return %c : tensor<16x32xf32>
}
