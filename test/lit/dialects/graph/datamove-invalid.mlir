// RUN: ipu-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @slice_out(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %s = graph.slice %x {starts = array<i64: 0, 6>} : tensor<4x8xf32> -> tensor<4x3xf32>
  func.return %s : tensor<4x3xf32>
}
// CHECK: graph.slice: axis 1: window [6, 9) does not lie in [0, 8)

// -----

func.func @slice_rank(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %s = graph.slice %x {starts = array<i64: 0>} : tensor<4x8xf32> -> tensor<4x3xf32>
  func.return %s : tensor<4x3xf32>
}
// CHECK: graph.slice: 1 starts for a rank-2 input

// -----

func.func @pad_fit(%x: tensor<4x8xf32>) -> tensor<5x8xf32> {
  %p = graph.pad %x {low = array<i64: 2, 0>} : tensor<4x8xf32> -> tensor<5x8xf32>
  func.return %p : tensor<5x8xf32>
}
// CHECK: graph.pad: axis 0: input of 4 at 2 does not fit the result's 5

// -----

func.func @concat_sum(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>) -> tensor<7x8xf32> {
  %c = graph.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<7x8xf32>
  func.return %c : tensor<7x8xf32>
}
// CHECK: graph.concat: inputs sum to 6 along axis 0, result has 7

// -----

func.func @concat_off_axis(%x: tensor<4x8xf32>, %y: tensor<2x7xf32>) -> tensor<6x8xf32> {
  %c = graph.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<2x7xf32>) -> tensor<6x8xf32>
  func.return %c : tensor<6x8xf32>
}
// CHECK: graph.concat: input (2, 7) does not match result (6, 8) off axis 0
