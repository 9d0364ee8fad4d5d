// RUN: not ipu-opt %s -p map-tiles 2>&1 | filecheck %s

// An op that no map-tiles pattern matches is refused by name (here a graph op left in a function
// that claims to be planned), not skipped or crashed on.
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]} {
  %t = graph.tanh %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}

// CHECK-NOT: Traceback
// CHECK:     error: map-tiles: no tile mapping for graph.tanh
