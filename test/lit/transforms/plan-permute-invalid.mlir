// RUN: not ipu-opt %s -p 'plan-ops{target=sim16}' 2>&1 >/dev/null | filecheck %s

// A batched 2-D transpose (the last axis moves) is refused, naming both ways that are planned.
func.func @main(%x: tensor<2x4x6xf32>) -> tensor<2x6x4xf32> {
  %t = graph.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x4x6xf32> -> tensor<2x6x4xf32>
  func.return %t : tensor<2x6x4xf32>
}
// CHECK: plan-ops: transpose [0, 2, 1] of rank 3 is not planned (rank 2, or any rank with the last axis kept last)
