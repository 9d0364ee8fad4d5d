// Fuzz regression (open limitation): a graph.repeat whose yield swaps its two carried values. The
// yield is a parallel copy; lower-to-tasm orders chains of copies so each slot is read before it is
// overwritten, but a cycle (this swap) needs a temporary buffer. It used to compute output1 = x
// silently; it is now refused with a diagnostic. Supporting it needs a scratch slot from place-storage.
// TARGET: sim16
// XFAIL: lower-to-tasm refuses carried values passed around in a cycle (needs a temporary buffer)
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a, %b = graph.repeat 1 iter(%c1 = %x, %c2 = %y) : (tensor<4x8xf32>, tensor<4x8xf32>) {
    graph.yield %c2, %c1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
