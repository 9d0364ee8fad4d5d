// RUN: not ipu-opt %s -p 'plan-ops{target=sim16}' 2>&1 >/dev/null | filecheck %s

// A float16 window that cuts the last axis at an odd element is refused (exchange moves whole
// 32-bit words), naming the op, shapes and offsets.
func.func @main(%x: tensor<4x8xf16>) -> tensor<4x3xf16> {
  %s = graph.slice %x {starts = array<i64: 0, 1>} : tensor<4x8xf16> -> tensor<4x3xf16>
  func.return %s : tensor<4x3xf16>
}
// CHECK: plan-ops: graph.slice of [4, 8] -> [4, 3] at [0, 1] in f16 changes the last axis at an odd element
