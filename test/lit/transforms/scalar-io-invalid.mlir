// RUN: not ipu-opt %s -p 'plan-ops{target=sim16}' 2>&1 >/dev/null | filecheck %s

// A scalar is carried as [1] only across the function boundary: computing on the rank-0 value
// itself is refused, naming the op.
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %q = graph.relu %x : tensor<f32> -> tensor<f32>
  func.return %q : tensor<f32>
}
// CHECK: plan-ops: graph.relu %q (op 0): a rank-0 operand or result is planned only at the function boundary; reshape the scalar to [1] (graph.reshape) before computing with it
