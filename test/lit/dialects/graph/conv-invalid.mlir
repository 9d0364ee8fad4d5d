// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @groups(%x: tensor<1x8x8x16xf32>, %w: tensor<3x3x8x32xf32>) -> tensor<1x6x6x32xf32> {
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 3 : i64} : (tensor<1x8x8x16xf32>, tensor<3x3x8x32xf32>) -> tensor<1x6x6x32xf32>
  func.return %y : tensor<1x6x6x32xf32>
}
// CHECK: Operation does not verify: graph.conv: 3 groups of input channels 16 and output channels 32: the filters' input channels 8 must be 16 / 3

// -----

func.func @shape(%x: tensor<1x8x8x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<1x8x8x32xf32> {
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x8x8x16xf32>, tensor<3x3x16x32xf32>) -> tensor<1x8x8x32xf32>
  func.return %y : tensor<1x8x8x32xf32>
}
// CHECK: Operation does not verify: graph.conv: result shape (1, 8, 8, 32), expected (1, 6, 6, 32)

// -----

func.func @kernel_too_big(%x: tensor<1x2x2x4xf32>, %w: tensor<5x5x4x4xf32>) -> tensor<1x1x1x4xf32> {
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x2x2x4xf32>, tensor<5x5x4x4xf32>) -> tensor<1x1x1x4xf32>
  func.return %y : tensor<1x1x1x4xf32>
}
// CHECK: Operation does not verify: graph.conv: the 5x5 kernel does not fit the padded 2x2 input

// -----

func.func @stride0(%x: tensor<1x4x4x4xf32>, %w: tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = graph.conv %x, %w {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}
// CHECK: Operation does not verify: graph.conv: strides (0, 1) and dilations (1, 1) must lie in [1, 2^20], pads (0, 0, 0, 0) in [0, 2^20]

// -----

func.func @pool_kind(%x: tensor<1x4x4x4xf32>) -> tensor<1x2x2x4xf32> {
  %y = graph.pool %x {kind = "min", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x4xf32> -> tensor<1x2x2x4xf32>
  func.return %y : tensor<1x2x2x4xf32>
}
// CHECK: Operation does not verify: graph.pool: kind 'min' is not one of max, avg

// -----

func.func @pool_pads(%x: tensor<1x4x4x4xf32>) -> tensor<1x3x3x4xf32> {
  %y = graph.pool %x {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 2, 0, 0, 0>} : tensor<1x4x4x4xf32> -> tensor<1x3x3x4xf32>
  func.return %y : tensor<1x3x3x4xf32>
}
// CHECK: Operation does not verify: graph.pool: pads (2, 0, 0, 0) as large as the window: a window of padding only

// -----

func.func @pool_ceil_too_far(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x2x4xf32> {
  %y = graph.pool %x {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x4xf32> -> tensor<1x4x2x4xf32>
  func.return %y : tensor<1x4x2x4xf32>
}
// CHECK: Operation does not verify: graph.pool: result shape (1, 4, 2, 4), expected (1, 2, 2, 4) (or one more window
