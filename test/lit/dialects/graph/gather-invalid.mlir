// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @float_ids(%ids: tensor<8xf32>) -> tensor<8x32xf16> {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0} : (tensor<64x32xf16>, tensor<8xf32>) -> tensor<8x32xf16>
  func.return %x : tensor<8x32xf16>
}
// CHECK: graph.gather: indices must be i32, got f32

// -----

func.func @i64_ids(%ids: tensor<8xi64>) -> tensor<8x32xf16> {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0} : (tensor<64x32xf16>, tensor<8xi64>) -> tensor<8x32xf16>
  func.return %x : tensor<8x32xf16>
}
// CHECK: graph.gather: indices must be i32, got i64

// -----

func.func @axis(%ids: tensor<8xi32>) -> tensor<64x8xf16> {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 1} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<64x8xf16>
  func.return %x : tensor<64x8xf16>
}
// CHECK: graph.gather: only axis 0 (rows of the table) is supported, got 1

// -----

func.func @batch(%ids: tensor<2x8xi32>) -> tensor<16x32xf16> {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0} : (tensor<64x32xf16>, tensor<2x8xi32>) -> tensor<16x32xf16>
  func.return %x : tensor<16x32xf16>
}
// CHECK: graph.gather: indices must be [S] or [1, S], got (2, 8)

// -----

func.func @shape(%ids: tensor<8xi32>) -> tensor<8x16xf16> {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x16xf16>
  func.return %x : tensor<8x16xf16>
}
// CHECK: graph.gather: result shape (8, 16), expected (8, 32)

// -----

func.func @dtype(%ids: tensor<8xi32>) -> tensor<8x32xf32> {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x32xf32>
  func.return %x : tensor<8x32xf32>
}
// CHECK: graph.gather: table and result element types differ

// -----

func.func @rank(%ids: tensor<8xi32>, %t: tensor<64xf16>) -> tensor<8x32xf16> {
  %x = graph.gather %t, %ids {axis = 0} : (tensor<64xf16>, tensor<8xi32>) -> tensor<8x32xf16>
  func.return %x : tensor<8x32xf16>
}
// CHECK: graph.gather: table must be rank 2 [V, D], got (64,)
