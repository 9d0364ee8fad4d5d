// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%a: tensor<4x8x16xf32>, %b: tensor<2x16x8xf32>) {
  %c = graph.batch_matmul %a, %b : (tensor<4x8x16xf32>, tensor<2x16x8xf32>) -> tensor<4x8x8xf32>
  func.return
}
// CHECK: Operation does not verify: graph.batch_matmul: batch counts differ (4 vs 2)

// -----

func.func @f(%a: tensor<4x8x16xf32>, %b: tensor<4x12x8xf32>) {
  %c = graph.batch_matmul %a, %b : (tensor<4x8x16xf32>, tensor<4x12x8xf32>) -> tensor<4x8x8xf32>
  func.return
}
// CHECK: Operation does not verify: graph.batch_matmul: contraction sizes differ (16 vs 12)

// -----

func.func @f(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>) {
  %c = graph.batch_matmul %a, %b : (tensor<32x16xf32>, tensor<16x8xf32>) -> tensor<32x8xf32>
  func.return
}
// CHECK: Operation does not verify: graph.batch_matmul: operands must be rank 3 [batch, rows, cols], got (32, 16) and (16, 8)

// -----

func.func @f(%a: tensor<4x8x16xf32>, %b: tensor<4x16x8xf32>) {
  %c = graph.batch_matmul %a, %b : (tensor<4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<4x8x16xf32>
  func.return
}
// CHECK: Operation does not verify: graph.batch_matmul: result shape (4, 8, 16), expected (4, 8, 8)
