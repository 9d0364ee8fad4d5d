// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%x: tensor<4x8xf16>, %y: tensor<9x16xf16>) -> tensor<4x16xf16> {
  %m = graph.matmul %x, %y : (tensor<4x8xf16>, tensor<9x16xf16>) -> tensor<4x16xf16>
  func.return %m : tensor<4x16xf16>
}
// CHECK: Operation does not verify: graph.matmul: contraction sizes differ (8 vs 9)

// -----

func.func @f(%x: tensor<4x8xf16>, %y: tensor<8x16xf16>) -> tensor<4x8xf16> {
  %m = graph.matmul %x, %y : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x8xf16>
  func.return %m : tensor<4x8xf16>
}
// CHECK: Operation does not verify: graph.matmul: result shape (4, 8), expected (4, 16)

// -----

func.func @f(%x: tensor<8x4xf16>, %y: tensor<8x16xf16>) -> tensor<4x16xf16> {
  %m = graph.matmul %x, %y {transpose_rhs} : (tensor<8x4xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  func.return %m : tensor<4x16xf16>
}
// CHECK: Operation does not verify: graph.matmul: contraction sizes differ (4 vs 16)

// -----

func.func @f(%x: tensor<4x8xf16>, %y: tensor<8xf16>) -> tensor<8xf16> {
  %m = graph.matmul %y, %x : (tensor<8xf16>, tensor<4x8xf16>) -> tensor<8xf16>
  func.return %m : tensor<8xf16>
}
// CHECK: Operation does not verify: graph.matmul: operands must be rank 2, got (8,) and (4, 8)

// -----

func.func @f(%x: tensor<4x8xf16>, %y: tensor<4xf16>) -> tensor<4x8xf16> {
  %a = graph.add %x, %y : (tensor<4x8xf16>, tensor<4xf16>) -> tensor<4x8xf16>
  func.return %a : tensor<4x8xf16>
}
// CHECK: Operation does not verify: graph.add: shapes (4, 8) and (4,) do not broadcast

// -----

func.func @f(%x: tensor<4x8xf16>, %y: tensor<8xf16>) -> tensor<8x8xf16> {
  %a = graph.mul %x, %y : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<8x8xf16>
  func.return %a : tensor<8x8xf16>
}
// CHECK: Operation does not verify: graph.mul: result shape (8, 8), expected (4, 8)

// -----

func.func @f(%x: tensor<4x8xf16>, %y: tensor<4x8xf32>) -> tensor<4x8xf16> {
  %a = graph.sub %x, %y : (tensor<4x8xf16>, tensor<4x8xf32>) -> tensor<4x8xf16>
  func.return %a : tensor<4x8xf16>
}
// CHECK: Operation does not verify: graph.sub: element types differ (tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf16>)

// -----

func.func @f(%x: tensor<4x8xf16>) -> tensor<8x4xf16> {
  %t = graph.transpose %x {perm = array<i64: 0, 0>} : tensor<4x8xf16> -> tensor<8x4xf16>
  func.return %t : tensor<8x4xf16>
}
// CHECK: Operation does not verify: graph.transpose: perm [0, 0] is not a permutation of rank 2

// -----

func.func @f(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %t = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf16> -> tensor<4x8xf16>
  func.return %t : tensor<4x8xf16>
}
// CHECK: Operation does not verify: graph.transpose: result shape (4, 8) does not match perm

// -----

func.func @f(%x: tensor<4x8xf16>) -> tensor<30xf16> {
  %r = graph.reshape %x : tensor<4x8xf16> -> tensor<30xf16>
  func.return %r : tensor<30xf16>
}
// CHECK: Operation does not verify: graph.reshape: (4, 8) and (30,) hold different element counts

// -----

func.func @f(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %r = graph.gelu %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.gelu: result type must equal input type

// -----

func.func @f() -> tensor<4x8xf16> {
  %w = graph.parameter "w" dense<[1.0, 2.0]> : tensor<2xf16> : tensor<4x8xf16>
  func.return %w : tensor<4x8xf16>
}
// CHECK: Operation does not verify: dense initializer shape (2,) does not match result shape (4, 8)

// -----

func.func @f() -> tensor<4x8xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = -1.0> : tensor<4x8xf16>
  func.return %w : tensor<4x8xf16>
}
// CHECK: graph.gaussian: std must be finite and non-negative, got -1.0

// -----

func.func @f() -> tensor<4x8xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = -3, std = 1.0> : tensor<4x8xf16>
  func.return %w : tensor<4x8xf16>
}
// CHECK: graph.gaussian: seed must be between 0 and 2^64 - 1, got -3
