// RUN: not ipu-opt %s -p map-tiles 2>&1 | filecheck %s

// A function map-tiles cannot map is refused by name, not skipped or crashed on: here a
// graph-level function (not planned), refused as the wrong level.
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]} {
  %t = graph.tanh %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}

// CHECK-NOT: Traceback
// CHECK:     error: map-tiles: works on plan-level (plan-ops' finalists) IR; this module is graph-level IR
