// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.sigmoid %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.sigmoid: result type must equal input type

// -----

func.func @shape(%x: tensor<4x8xf16>) -> tensor<8x4xf16> {
  %s = graph.sigmoid %x : tensor<4x8xf16> -> tensor<8x4xf16>
  func.return %s : tensor<8x4xf16>
}
// CHECK: Operation does not verify: graph.sigmoid: result type must equal input type
