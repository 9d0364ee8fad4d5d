// RUN: not ipu-translate --import-stablehlo %s 2>&1 | filecheck %s
// RUN: not ipu-opt %s -p convert-stablehlo-to-graph 2>&1 | filecheck %s
// RUN: not ipu-run %s --target sim64 2>&1 | filecheck %s

// An op the graph dialect cannot express: one clear message naming it, exit status 1, no traceback.

// CHECK: stablehlo.custom_call @my_fused_kernel is not supported
// CHECK-NOT: Traceback
func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<4x8xf32>
  %1 = stablehlo.custom_call @my_fused_kernel(%0) {backend_config = ""} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
