// RUN: ipu-opt %s | filecheck %s
// RUN: ipu-opt %s | ipu-opt | filecheck %s

// Data movement of computed tensors round-trips: a window, a zero pad, a concatenation.
func.func @main(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>) -> (tensor<4x3xf32>, tensor<6x9xf32>, tensor<6x8xf32>) {
  %s = graph.slice %x {starts = array<i64: 0, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
  %p = graph.pad %x {low = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<6x9xf32>
  %c = graph.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
  func.return %s, %p, %c : tensor<4x3xf32>, tensor<6x9xf32>, tensor<6x8xf32>
}
// CHECK: %s = graph.slice %x {starts = array<i64: 0, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
// CHECK: %p = graph.pad %x {low = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<6x9xf32>
// CHECK: %c = graph.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
