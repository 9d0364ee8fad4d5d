// Fuzz regression: graph.reduce of a 4x4 value on sim16. The reduce's input has one
// row per tile (grid [4]), so reduce_rows writes one result element per tile, but the result's
// rank-1 layout (grid [4]) pads its only axis to an even block of 2, so its host binding and
// checkpoint read elements 0-1 from tile 0 and 2-3 from tile 1: the output is wrong.
// Any reduce with an odd number of rows per tile (e.g. 8x8, 16x16, 48 rows) on sim16 failed alike.
// Fixed in plan-ops (commit 801b5b6: the reduce input takes an even row count per tile).
// TARGET: sim16
func.func @main(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %r = graph.reduce %x {kind = "max", axis = 1 : i64} : tensor<4x4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
