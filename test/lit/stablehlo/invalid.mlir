// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%a: tensor<2x8xf32>, %b: tensor<9x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<9x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: 'stablehlo.dot_general' op lhs dimension 1 (size 8) and rhs dimension 0 (size 9) differ

// -----

func.func @f(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK: 'stablehlo.dot_general' op result shape [4, 2] differs from the expected [2, 4]

// -----

func.func @f(%a: tensor<3xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
// CHECK: 'stablehlo.broadcast_in_dim' op operand dimension 0 (size 3) cannot broadcast to result dimension 1 (8)

// -----

func.func @f(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 1] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}
// CHECK: 'stablehlo.transpose' op permutation [1, 1] is not a permutation of 2 dimensions

// -----

func.func @f(%a: tensor<4x8xf32>) -> tensor<5x8xf32> {
  %0 = stablehlo.reshape %a : (tensor<4x8xf32>) -> tensor<5x8xf32>
  func.return %0 : tensor<5x8xf32>
}
// CHECK: 'stablehlo.reshape' op cannot reshape [4, 8] (32 elements) to [5, 8] (40)

// -----

func.func @f(%a: tensor<4x8xf32>, %c: tensor<f32>) -> tensor<8xf32> {
  %0 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}
// CHECK: 'stablehlo.reduce' op result #0 shape [8] differs from the reduced [4]

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>) -> tensor<4x8xi1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<4x8xf32>, tensor<4x8xi32>) -> tensor<4x8xi1>
  func.return %0 : tensor<4x8xi1>
}
// CHECK: 'stablehlo.compare' op operands must have one type

// -----

func.func @f(%p: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.select %p, %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
// CHECK: 'stablehlo.select' op pred must be a tensor of i1

// -----

func.func @f(%a: tensor<4x8xf32>) -> tensor<4x9xf32> {
  %0 = stablehlo.slice %a [0:4, 0:9] : (tensor<4x8xf32>) -> tensor<4x9xf32>
  func.return %0 : tensor<4x9xf32>
}
// CHECK: 'stablehlo.slice' op slice 0:9:1 is out of bounds for dimension 1 (size 8)

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x3xf32>) -> tensor<4x12xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x12xf32>
  func.return %0 : tensor<4x12xf32>
}
// CHECK: 'stablehlo.concatenate' op inputs add up to 11 along dimension 1, the result has 12

// -----

func.func @f(%a: tensor<4x8xf32>, %c: tensor<f32>) -> tensor<4x8xf32> {
  %0 = stablehlo.pad %a, %c, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
// CHECK: 'stablehlo.pad' op result shape [4, 8] differs from the padded shape [4, 9]

// -----

func.func @f(%t: tensor<10x8xf32>, %i: tensor<3x1xi32>) -> tensor<3x8xf32> {
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 2, 8>}> : (tensor<10x8xf32>, tensor<3x1xi32>) -> tensor<3x8xf32>
  func.return %0 : tensor<3x8xf32>
}
// CHECK: 'stablehlo.gather' op collapsed slice dimension 0 must exist and have slice size 1

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf16> {
  %0 = stablehlo.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}
// CHECK: 'stablehlo.add' op requires the same element type for all operands and results

// -----

func.func @f() -> tensor<4xi32> {
  %0 = stablehlo.iota dim = 1 : tensor<4xi32>
  func.return %0 : tensor<4xi32>
}
// CHECK: 'stablehlo.iota' op iota dimension 1 is out of range for tensor<4xi32>

// -----

func.func @main(%arg0: tensor<4x8xf32>) -> (tensor<4x9xf32>, tensor<4x9xi32>) {
  %values, %indices = chlo.top_k(%arg0, k = 9) : tensor<4x8xf32> -> (tensor<4x9xf32>, tensor<4x9xi32>)
  return %values, %indices : tensor<4x9xf32>, tensor<4x9xi32>
}
// CHECK: 'chlo.top_k' op k = 9 for an operand of shape (4, 8)
