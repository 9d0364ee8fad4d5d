// Fuzz regression (open bug): a graph.repeat whose yield swaps its two carried values. lower-to-tasm
// (`_Emitter.copy` at tilemap.yield) copies each yielded value into its carried slot one after
// another, so the second copy reads the slot the first one already overwrote: output1 holds x, not y.
// The yield is a parallel copy; a permutation of carried slots needs a temporary (or a cycle order).
// TARGET: sim16
// XFAIL: transforms/lower_to_tasm.py: yield copies into carried slots are sequential, not parallel
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a, %b = graph.repeat 1 iter(%c1 = %x, %c2 = %y) : (tensor<4x8xf32>, tensor<4x8xf32>) {
    graph.yield %c2, %c1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
