// RUN: not ipu-translate --import-stablehlo %s 2>&1 | filecheck %s

// A reduction the graph dialect has no kind for (a product here): refused, naming the op and why.

// CHECK: error: stablehlo import: stablehlo.reduce over stablehlo.multiply is not supported (only sums, maxima and minima of one operand)
func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.multiply across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
