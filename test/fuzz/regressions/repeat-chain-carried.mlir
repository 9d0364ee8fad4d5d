// Regression: a graph.repeat whose yield passes a carried value on to another carried slot while
// its own slot takes a new value (c1' = exp(c1), c2' = c1). The yield is a parallel copy: c2's slot
// must read c1's before c1's slot is overwritten. Copied in yield order, c2 got exp(c1).
// TARGET: sim16
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a, %b = graph.repeat 2 iter(%c1 = %x, %c2 = %y) : (tensor<4x8xf32>, tensor<4x8xf32>) {
    %t = graph.exp %c1 : tensor<4x8xf32> -> tensor<4x8xf32>
    graph.yield %t, %c1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
