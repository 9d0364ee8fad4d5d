// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// plan.repeat, plan.yield and plan.gemm_serial are registered: a repeat model's plan level parses
// back, in custom and generic form. Trimmed from plan-ops on sim16 (a serial gemm pinned in a
// repeat body).
// CHECK-LABEL: func.func @stack
func.func @stack(%x: !plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>, %w: !plan.tensor<128x128xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>) -> !plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> {
  // CHECK-NEXT: %out = plan.repeat 2 iter(%c = %x) : (!plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>>) {
  %out = plan.repeat 2 iter(%c = %x) : (!plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>) {
    // CHECK-NEXT: %c_r = plan.rearrange %c {reason = "graph.matmul"}
    %c_r = plan.rearrange %c {reason = "graph.matmul"} : !plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<64x128xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>
    // CHECK-NEXT: %h = plan.gemm_serial %c_r, %w {k_steps = 2 : i64, value = "h"} : (!plan.tensor<64x128xf16, #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard>>, !plan.tensor<128x128xf16, #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard>>) -> !plan.tensor<64x128xf16, #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard>>
    %h = plan.gemm_serial %c_r, %w {k_steps = 2 : i64, value = "h"} : (!plan.tensor<64x128xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<128x128xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>) -> !plan.tensor<64x128xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>
    // CHECK-NEXT: %h_r = plan.rearrange %h {reason = "carried layout"}
    %h_r = plan.rearrange %h {reason = "carried layout"} : !plan.tensor<64x128xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>> -> !plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>
    // CHECK-NEXT: plan.yield %h_r : !plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>>
    plan.yield %h_r : !plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>
  // CHECK-NEXT: } {value = "out"}
  } {value = "out"}
  // CHECK-NEXT: func.return %out
  func.return %out : !plan.tensor<64x128xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>
}
