// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1},map-tiles' | filecheck %s

// A convolution's input arrives in a patch move of real elements only, so a split contraction
// whose sum only feeds convolutions (through a ReLU) never has its padding read: its partials
// move as whole padded blocks when their padded extent is the result's (7 rows in 2 row blocks
// of 4 partials, 4 result blocks of 2: both 8): the staging buffer is written in full, padding
// included, and not zeroed.
func.func @whole(%x: tensor<1x7x7x32xf16>) -> tensor<1x7x7x16xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.1> : tensor<3x3x32x32xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 2, std = 0.1> : tensor<1x1x32x16xf16>
  %a = graph.conv %x, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 1 : i64, plan.choice = #plan.choice<conv, grid = [1, 2, 1, 2]>} : (tensor<1x7x7x32xf16>, tensor<3x3x32x32xf16>) -> tensor<1x7x7x32xf16>
  %r = graph.relu %a : tensor<1x7x7x32xf16> -> tensor<1x7x7x32xf16>
  %y = graph.conv %r, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x7x7x32xf16>, tensor<1x1x32x16xf16>) -> tensor<1x7x7x16xf16>
  func.return %y : tensor<1x7x7x16xf16>
}
// CHECK-LABEL: func.func @whole(
// CHECK:       %a_stage = tilemap.move %a_partial
// CHECK:       {reason = "reduce"} : !tilemap.buffer<1x4x7x32xf32, {{.*}}> -> !tilemap.buffer<2x1x2x7x32xf32,
// CHECK:       tilemap.run "reduce_sum"(%a_stage)

// -----

// 8 rows in 3 row blocks of 3 partials (9), but 6 result blocks of 2 (12): the blocks past the
// partials' extent are never written, so the staging buffer is zeroed first.
func.func @uneven(%x: tensor<1x8x8x32xf16>) -> tensor<1x8x8x16xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.1> : tensor<3x3x32x32xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 2, std = 0.1> : tensor<1x1x32x16xf16>
  %a = graph.conv %x, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 1 : i64, plan.choice = #plan.choice<conv, grid = [1, 3, 1, 2]>} : (tensor<1x8x8x32xf16>, tensor<3x3x32x32xf16>) -> tensor<1x8x8x32xf16>
  %r = graph.relu %a : tensor<1x8x8x32xf16> -> tensor<1x8x8x32xf16>
  %y = graph.conv %r, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x8x8x32xf16>, tensor<1x1x32x16xf16>) -> tensor<1x8x8x16xf16>
  func.return %y : tensor<1x8x8x16xf16>
}
// CHECK-LABEL: func.func @uneven(
// CHECK:       %a_stage = tilemap.move %a_partial
// CHECK:       {reason = "reduce", zero_fill}
// CHECK:       tilemap.run "reduce_sum"(%a_stage)
