// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The result's rows do not follow from the input, kernel, stride and pads.
func.func @f(%x: !plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, %w: !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [], [3], [2]], memory = interleaved>>) -> !plan.tensor<1x5x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>> {
  %y = plan.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (!plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [], [3], [2]], memory = interleaved>>) -> !plan.tensor<1x5x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>>
  func.return %y : !plan.tensor<1x5x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>>
}
// CHECK: plan.conv: (1, 8, 8, 32) * (3, 3, 32, 32) gives [1, 4, 4, 32], not [1, 5, 4, 32]

// -----

// An input channel split whose result is not a partial sum.
func.func @f(%x: !plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, %w: !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [], [3], [2]], memory = interleaved>>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], memory = interleaved>> {
  %y = plan.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (!plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [], [3], [2]], memory = interleaved>>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], memory = interleaved>>
  func.return %y : !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], memory = interleaved>>
}
// CHECK: plan.conv: the result splits batch, rows and output channels over grid dimensions 0, 1 and 2, with partial sums over dimension 3 when it splits the input channels

// -----

// Filters in standard memory: the AMP streams them with 128-bit loads.
func.func @f(%x: !plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, %w: !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [], [3], [2]], memory = standard>>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>> {
  %y = plan.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (!plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [], [3], [2]], memory = standard>>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>>
  func.return %y : !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>>
}
// CHECK: plan.conv: AMP filters and result live in interleaved memory

// -----

// Filters split over the kernel's columns.
func.func @f(%x: !plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, %w: !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [0], [3], [2]], memory = interleaved>>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>> {
  %y = plan.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (!plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [0], [3], [2]], memory = interleaved>>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>>
  func.return %y : !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>>
}
// CHECK: plan.conv: the filters split input and output channels over the result's grid

// -----

// A depthwise convolution whose filters carry every input channel.
func.func @f(%x: !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>>, %w: !plan.tensor<3x3x24x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[], [], [], [2]], memory = standard>>) -> !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[0], [1], [], [2]], memory = standard>> {
  %y = plan.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, depthwise} : (!plan.tensor<1x8x8x24xf16, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>>, !plan.tensor<3x3x24x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[], [], [], [2]], memory = standard>>) -> !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[0], [1], [], [2]], memory = standard>>
  func.return %y : !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[0], [1], [], [2]], memory = standard>>
}
// CHECK: plan.conv: a depthwise convolution of (1, 8, 8, 24) takes filters [KH, KW, 1, 24] and gives [1, 8, 8, 24]; got [3, 3, 24, 24] and [1, 8, 8, 24]

// -----

// A depthwise convolution with a fourth grid dimension of 2 parts (it has no contraction to split).
func.func @f(%x: !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>>, %w: !plan.tensor<3x3x1x24xf16, #plan.layout<grid = [1, 2, 3, 2], split = [[], [], [], [2]], memory = standard>>) -> !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 2], split = [[0], [1], [], [2]], memory = standard>> {
  %y = plan.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, depthwise} : (!plan.tensor<1x8x8x24xf16, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>>, !plan.tensor<3x3x1x24xf16, #plan.layout<grid = [1, 2, 3, 2], split = [[], [], [], [2]], memory = standard>>) -> !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 2], split = [[0], [1], [], [2]], memory = standard>>
  func.return %y : !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 2], split = [[0], [1], [], [2]], memory = standard>>
}
// CHECK: plan.conv: a depthwise result splits batch, rows and channels over grid dimensions 0, 1 and 2 (dimension 3 of 1 part)
