// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A float16 window that cuts the last axis at an odd element (exchange moves whole 32-bit words)
// is taken in f32 between two casts, which is exact: a slice here, as a concat's or a pad's
// windows would be (a causal convolution's state concatenated in f16).
func.func @main(%x: tensor<4x8xf16>) -> tensor<4x3xf16> {
  %s = graph.slice %x {starts = array<i64: 0, 1>} : tensor<4x8xf16> -> tensor<4x3xf16>
  func.return %s : tensor<4x3xf16>
}
// CHECK:      %[[W:.*]] = plan.cast %x : !plan.tensor<4x8xf16, [[L:.*]]> -> !plan.tensor<4x8xf32, [[L]]>
// CHECK-NEXT: %[[V:.*]] = plan.window %[[W]] {offsets = array<i64: 0, 1>} : !plan.tensor<4x8xf32, {{.*}}> -> !plan.tensor<4x3xf32, [[R:.*]]>
// CHECK-NEXT: %s = plan.cast %[[V]] {value = "s"} : !plan.tensor<4x3xf32, [[R]]> -> !plan.tensor<4x3xf16, [[R]]>
// EMU: numericalTest=PASS
