// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s -p convert-stablehlo-to-graph | filecheck %s --check-prefix=GRAPH
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// Flax's CNN ops in JAX's spellings: stablehlo.convolution in its pretty syntax (NHWC input,
// HWIO kernel, strided and padded, then depthwise: feature_group_count = channels) and
// stablehlo.reduce_window in the generic form JAX always writes (a max pool from -inf, a sum
// pool from 0 as flax's avg_pool computes before its division). They print back the same way,
// convert to graph.conv and graph.pool, and run.

// CHECK-LABEL: func.func @main
// CHECK:      %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK:      %d = stablehlo.convolution(%c, %dw) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<1x4x4x4xf32>, tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK:      "stablehlo.reduce_window"(%d, %ninf) <{padding = dense<{{\[\[}}0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}>
// CHECK:      stablehlo.maximum
// CHECK:      "stablehlo.reduce_window"(%m, %zero) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}>
// CHECK:      stablehlo.add

// GRAPH-LABEL: func.func @main
// GRAPH-COUNT-2: graph.conv
// GRAPH-COUNT-2: graph.pool
// GRAPH-NOT:  = stablehlo.

// EMU: numericalTest=PASS
func.func @main(%x: tensor<1x8x8x3xf32>) -> tensor<1x1x1x4xf32> {
  %w = stablehlo.constant dense<[[[[0.1, -0.2, 0.3, 0.05], [0.2, 0.1, -0.1, 0.3], [-0.3, 0.2, 0.1, 0.1]], [[0.1, 0.1, 0.1, 0.1], [0.2, -0.2, 0.2, -0.2], [0.3, 0.3, -0.3, 0.0]], [[0.0, 0.1, 0.2, 0.3], [0.1, 0.0, -0.1, 0.2], [0.2, 0.1, 0.0, -0.1]]], [[[0.1, -0.2, 0.3, 0.05], [0.2, 0.1, -0.1, 0.3], [-0.3, 0.2, 0.1, 0.1]], [[0.1, 0.1, 0.1, 0.1], [0.2, -0.2, 0.2, -0.2], [0.3, 0.3, -0.3, 0.0]], [[0.0, 0.1, 0.2, 0.3], [0.1, 0.0, -0.1, 0.2], [0.2, 0.1, 0.0, -0.1]]], [[[0.1, -0.2, 0.3, 0.05], [0.2, 0.1, -0.1, 0.3], [-0.3, 0.2, 0.1, 0.1]], [[0.1, 0.1, 0.1, 0.1], [0.2, -0.2, 0.2, -0.2], [0.3, 0.3, -0.3, 0.0]], [[0.0, 0.1, 0.2, 0.3], [0.1, 0.0, -0.1, 0.2], [0.2, 0.1, 0.0, -0.1]]]]> : tensor<3x3x3x4xf32>
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
  %dw = stablehlo.constant dense<0.25> : tensor<3x3x1x4xf32>
  %d = stablehlo.convolution(%c, %dw) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<1x4x4x4xf32>, tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = "stablehlo.reduce_window"(%d, %ninf) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x2x2x4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = "stablehlo.reduce_window"(%m, %zero) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<1x2x2x4xf32>, tensor<f32>) -> tensor<1x1x1x4xf32>
  return %s : tensor<1x1x1x4xf32>
}
