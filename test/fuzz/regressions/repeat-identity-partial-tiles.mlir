// Fuzz regression: a graph.repeat whose carried value lives on fewer tiles than a program group
// (2x8 f16 on 8 of sim16's 16 tiles). lower-to-tasm emitted the copy of the init into the
// carried slot only into programs fully inside the value's tile group, but no program boundary
// was made at tile 8, so the copy was dropped and the output read zeros. Fixed in
// transforms/tasm/lower_to_tasm.py (program boundaries at every carried group).
// TARGET: sim16
func.func @main(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %r2 = graph.repeat 1 iter(%c1 = %x) : (tensor<2x8xf16>) {
    graph.yield %c1 : tensor<2x8xf16>
  }
  func.return %r2 : tensor<2x8xf16>
}
