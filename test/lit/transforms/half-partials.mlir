// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1 partials=f16}' | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1 partials=f16},map-tiles' | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %s --split-input-file -p 'plan-decide{target=sim16 partials=f16}' | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %s --split-input-file -p 'plan-decide{target=sim16 partials=f16}' | ipu-opt --split-input-file -p 'plan-materialize{target=sim16}' | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s --check-prefix=DEFAULT
// RUN: ipu-opt %s --split-input-file | ipu-opt --split-input-file | filecheck %s --check-prefix=RT
// RUN: not ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 partials=f8}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not ipu-opt %S/Inputs/half-partials-f32.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=F32

// Half partials (`partials=f16`): the AMP accumulates in half at twice the fp32-partials rate.
// The first matmul splits its contraction over 8 tiles (pinned): its partial sums are f16 and
// summed by reduce_half; the second is pinned back to fp32 partials.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x256xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<256x256xf16>
  %h = graph.matmul %x, %w1 {plan.choice = #plan.choice<gemm, grid = [1, 2, 8]>} : (tensor<64x256xf16>, tensor<256x256xf16>) -> tensor<64x256xf16>
  %y = graph.matmul %h, %w2 {plan.choice = #plan.choice<gemm, grid = [1, 2, 8], partials = f32>} : (tensor<64x256xf16>, tensor<256x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME:  plan.partials = "f16"
// CHECK:       %h_partial = plan.gemm %{{.*}}, %{{.*}} {half_partials} : ({{.*}}) -> !plan.tensor<64x256xf16, #plan.layout<grid = [1, 2, 8], split = {{\[\[}}0], [1]], partial = 2,
// CHECK-NEXT:  %h = plan.reduce %h_partial {value = "h"} : !plan.tensor<64x256xf16, {{.*}}partial = 2{{.*}} -> !plan.tensor<64x256xf16,
// CHECK:       %y_partial = plan.gemm %{{.*}}, %{{.*}} : ({{.*}}) -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 2, 8], split = {{\[\[}}0], [1]], partial = 2,
// CHECK-NEXT:  %y = plan.reduce %y_partial

// map-tiles: the half-partials AMP kernel, the partials staged in f16 and summed by reduce_half;
// the fp32 matmul keeps amp_matmul, an f32 stage and reduce_sum.
// MAP:         tilemap.run "amp_matmul_half"
// MAP:         {reason = "reduce"} : {{.*}} -> !tilemap.buffer<8x64x16xf16,
// MAP:         tilemap.run "reduce_half"
// MAP:         tilemap.run "amp_matmul"(
// MAP:         {reason = "reduce"} : {{.*}} -> !tilemap.buffer<8x64x16xf32,
// MAP:         tilemap.run "reduce_sum"

// plan-decide records the function's default on the function and each departure on its op.
// DECIDE:      func.func @main({{.*}} attributes {plan.partials = "f16"}
// DECIDE:      %h = graph.matmul %x, %w1 {plan.choice = #plan.choice<gemm, grid = [1, 2, 8]>}
// DECIDE:      %y = graph.matmul %h, %w2 {plan.choice = #plan.choice<gemm, grid = [1, 2, 8], partials = f32>}

// Without the option the function has no default: f32, except where a choice pins f16.
// DEFAULT-NOT: plan.partials
// DEFAULT:     %h_partial = plan.gemm %{{.*}}, %{{.*}} : ({{.*}}) -> !plan.tensor<64x256xf32,

// RT:          #plan.choice<gemm, grid = [1, 2, 8], partials = f32>

// OPTION:      error: plan-ops: partials must be one of f32, f16, got 'f8'

// F32:         error: plan-ops: graph.matmul %h (op 1): partials = f16 needs f16 operands (they are 32-bit)

// -----

// A choice may pin f16 partials where the function has no default.
func.func @pinned(%x: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x256xf16>
  %h = graph.matmul %x, %w1 {plan.choice = #plan.choice<gemm, grid = [1, 2, 8], partials = f16>} : (tensor<64x256xf16>, tensor<256x256xf16>) -> tensor<64x256xf16>
  func.return %h : tensor<64x256xf16>
}
// CHECK-LABEL: func.func @pinned(
// CHECK:       plan.gemm {{.*}} {half_partials} : ({{.*}}) -> !plan.tensor<64x256xf16, {{.*}}partial = 2
// DEFAULT-LABEL: func.func @pinned(
// DEFAULT:     plan.gemm {{.*}} {half_partials} : ({{.*}}) -> !plan.tensor<64x256xf16, {{.*}}partial = 2
// MAP-LABEL:   func.func @pinned(
// MAP:         tilemap.run "amp_matmul_half"
// MAP:         tilemap.run "reduce_half"
