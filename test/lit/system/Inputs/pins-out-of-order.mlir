// Pins: gelu on stage 1, then relu on stage 0 (refused on two stages: stages run in order).
func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %e = graph.exp %x : tensor<16x32xf32> -> tensor<16x32xf32>
  %a = graph.gelu %e {ipu.stage = 1 : i64} : tensor<16x32xf32> -> tensor<16x32xf32>
  %b = graph.relu %a {ipu.stage = 0 : i64} : tensor<16x32xf32> -> tensor<16x32xf32>
  %c = graph.tanh %b : tensor<16x32xf32> -> tensor<16x32xf32>
  func.return %c : tensor<16x32xf32>
}
