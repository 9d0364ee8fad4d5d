// RUN: ipu-opt %s | filecheck %s
// RUN: ipu-opt %s --print-op-generic | ipu-opt | filecheck %s

// plan.conv round-trips: a 3x3 stride-2 convolution over a (batch, rows, out channels, in
// channels) = (1, 2, 2, 2) grid, the input channel split giving partial sums over dimension 3.
func.func @f(%x: !plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, %w: !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [], [3], [2]], memory = interleaved>>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>> {
  %y = plan.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (!plan.tensor<1x8x8x32xf16, #plan.layout<grid = [1, 8, 2, 1], split = [[0], [1], [2], [3]], memory = standard>>, !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[], [], [3], [2]], memory = interleaved>>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>>
  func.return %y : !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], partial = 3, memory = interleaved>>
}
// CHECK: %y = plan.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (!plan.tensor<1x8x8x32xf16, {{.*}}>, !plan.tensor<3x3x32x32xf16, {{.*}}>) -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = {{\[\[}}0], [1], [], [2]], partial = 3, memory = interleaved>>

// A depthwise convolution: filters [3, 3, 1, 24], the channels split over grid dimension 2 for the
// filters and the result alike (dimension 3 of 1 part), in standard memory (the vector path).
func.func @dw(%x: !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>>, %w: !plan.tensor<3x3x1x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[], [], [], [2]], memory = standard>>) -> !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[0], [1], [], [2]], memory = standard>> {
  %y = plan.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, depthwise} : (!plan.tensor<1x8x8x24xf16, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>>, !plan.tensor<3x3x1x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[], [], [], [2]], memory = standard>>) -> !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[0], [1], [], [2]], memory = standard>>
  func.return %y : !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = [[0], [1], [], [2]], memory = standard>>
}
// CHECK: %y = plan.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, depthwise} : (!plan.tensor<1x8x8x24xf16, {{.*}}>, !plan.tensor<3x3x1x24xf16, {{.*}}>) -> !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = {{\[\[}}0], [1], [], [2]], memory = standard>>
