// RUN: ipu-opt %s | filecheck %s
// RUN: ipu-opt %s | ipu-opt | filecheck %s
// RUN: ipu-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// graph.conv (NHWC input, HWIO filters) and graph.pool (max and average, ceil mode) round-trip.

// CHECK-LABEL: func.func @windows
func.func @windows(%x: tensor<2x9x9x16xf16>, %w: tensor<3x3x4x32xf16>) -> (tensor<2x5x5x32xf16>, tensor<2x5x5x32xf16>, tensor<2x3x3x32xf16>) {
  // CHECK-NEXT: %y = graph.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<2x9x9x16xf16>, tensor<3x3x4x32xf16>) -> tensor<2x5x5x32xf16>
  %y = graph.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<2x9x9x16xf16>, tensor<3x3x4x32xf16>) -> tensor<2x5x5x32xf16>
  // CHECK-NEXT: %m = graph.pool %y {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<2x5x5x32xf16> -> tensor<2x5x5x32xf16>
  %m = graph.pool %y {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<2x5x5x32xf16> -> tensor<2x5x5x32xf16>
  // CHECK-NEXT: %a = graph.pool %m {kind = "avg", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, count_include_pad} : tensor<2x5x5x32xf16> -> tensor<2x3x3x32xf16>
  %a = graph.pool %m {kind = "avg", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, count_include_pad} : tensor<2x5x5x32xf16> -> tensor<2x3x3x32xf16>
  func.return %y, %m, %a : tensor<2x5x5x32xf16>, tensor<2x5x5x32xf16>, tensor<2x3x3x32xf16>
}
// GENERIC: %y = "graph.conv"(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64}

// An average pool with dilated taps (ONNX's AveragePool from opset 19): its divisor counts the taps.
// CHECK-LABEL: func.func @dilated_average
// CHECK-NEXT:    %a = graph.pool %x {kind = "avg", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 2, 2>} : tensor<1x9x9x4xf32> -> tensor<1x5x5x4xf32>
func.func @dilated_average(%x: tensor<1x9x9x4xf32>) -> tensor<1x5x5x4xf32> {
  %a = graph.pool %x {kind = "avg", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 2, 2>} : tensor<1x9x9x4xf32> -> tensor<1x5x5x4xf32>
  func.return %a : tensor<1x5x5x4xf32>
}
