// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16}' | filecheck %s --check-prefix=SEARCH
// RUN: ipu-opt %s --split-input-file -p 'plan-decide{target=sim16}' | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %s --split-input-file -p 'plan-decide{target=sim16}' | ipu-opt --split-input-file -p 'plan-materialize{target=sim16}' | filecheck %s
// RUN: ipu-opt %s --split-input-file | ipu-opt --split-input-file | filecheck %s --check-prefix=RT
// RUN: ipu-opt %s --split-input-file --print-op-generic | ipu-opt --split-input-file | filecheck %s --check-prefix=RT
// RUN: not ipu-opt %S/Inputs/plan-pin-too-large.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=LARGE
// RUN: not ipu-opt %S/Inputs/plan-pin-too-large.mlir -p 'plan-decide{target=sim16}' 2>&1 | filecheck %s --check-prefix=LARGE
// RUN: not ipu-opt %S/Inputs/plan-pin-too-many-tiles.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=TILES
// RUN: not ipu-opt %S/Inputs/plan-pin-not-a-grid.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=GRID
// RUN: not ipu-opt %S/Inputs/plan-pin-layout-tiles.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=LAYOUT
// RUN: not ipu-opt %S/Inputs/plan-pin-not-a-choice.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=NOCHOICE
// RUN: not ipu-opt %S/../../../examples/mlp_small.mlir -p 'plan-materialize{target=sim16}' 2>&1 | filecheck %s --check-prefix=UNDECIDED

// Pinned layouts: a researcher writes the planner's decision attribute in the graph-level input.
// `plan.choice` pins a matmul's grid (the planner's own choice for it is 1x16x1 on sim16),
// `plan.layout` pins an op's result layout. Both are honoured and every other op is still
// chosen around them, with rearranges where layouts differ.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x1024xf16>
  %b1 = graph.parameter "b1" #graph.gaussian<seed = 2, std = 0.02> : tensor<1024xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %h = graph.matmul %x, %w1 {plan.choice = #plan.choice<gemm, grid = [4, 4, 1]>} : (tensor<64x256xf16>, tensor<256x1024xf16>) -> tensor<64x1024xf16>
  %hb = graph.add %h, %b1 : (tensor<64x1024xf16>, tensor<1024xf16>) -> tensor<64x1024xf16>
  %g = graph.gelu %hb {plan.layout = #plan.layout<grid = [16], split = [[0], []], memory = standard>} : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// The pinned grid is the gemm's; its 128 KiB weight block per tile is over the resident share,
// so the planner (not pinned on that) fetches the weight from a distributed home.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:  %x: !plan.tensor<64x256xf16, #plan.layout<grid = [4, 4, 1], split = {{\[\[}}0], [2]], align = [1, 256], memory = standard>>
// CHECK:       %w1_r = plan.rearrange %w1 {reason = "weight fetch"}
// CHECK-NEXT:  %h = plan.gemm %x, %w1_r {value = "h"} : ({{.*}}) -> !plan.tensor<64x1024xf16, #plan.layout<grid = [4, 4, 1], split = {{\[\[}}0], [1]], memory = interleaved>>
// CHECK:       %g = plan.unary "gelu" %hb {value = "g"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [4, 4, 1], split = {{\[\[}}0], [1]], memory = interleaved>>
// CHECK-NEXT:  %g_r = plan.rearrange %g {reason = "pinned layout"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [16], split = {{\[\[}}0], []], memory = standard>>
// CHECK-NEXT:  %g_r_1 = plan.rearrange %g_r {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard>>
// CHECK:       %y_partial = plan.gemm %g_r_1, %w2 : ({{.*}}) -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1]], partial = 2, align = [1, 64], memory = interleaved>>
// CHECK-NEXT:  %y = plan.reduce %y_partial

// The search varies only the unpinned matmul: every finalist keeps the pinned grid and layout.
// SEARCH:      func.func @main_finalist_0(
// SEARCH:      %h = plan.gemm {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [4, 4, 1],
// SEARCH:      plan.rearrange %g {reason = "pinned layout"}
// SEARCH:      %y_partial = plan.gemm {{.*}} {swapped} : {{.*}} -> !plan.tensor<64x256xf32, #plan.layout<grid = [4, 1, 4],
// SEARCH:      func.func @main_finalist_1(
// SEARCH:      %h = plan.gemm {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [4, 4, 1],
// SEARCH:      plan.rearrange %g {reason = "pinned layout"}
// SEARCH:      -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 4, 4],

// plan-decide leaves a pin as written and records the choice it made for the other matmul.
// DECIDE:      %h = graph.matmul %x, %w1 {plan.choice = #plan.choice<gemm, grid = [4, 4, 1]>}
// DECIDE:      %g = graph.gelu %hb {plan.layout = #plan.layout<grid = [16], split = {{\[\[}}0], []], memory = standard>}
// DECIDE:      %y = graph.matmul %g, %w2 {plan.choice = #plan.choice<gemm, grid = [1, 4, 4], weight = resident>}

// The pins round-trip at the graph level (custom and generic).
// RT:          %h = graph.matmul %x, %w1 {plan.choice = #plan.choice<gemm, grid = [4, 4, 1]>}
// RT:          %g = graph.gelu %hb {plan.layout = #plan.layout<grid = [16], split = {{\[\[}}0], []], memory = standard>}

// -----

// A pinned attention grid (the planner's own is 2x2x4x1 on sim16, so the pin is 2x2x2x2, which
// splits the keys in two) and a pinned serial gemm (the planner's own is a 1x16x1 plan.gemm).
func.func @attention(%q: tensor<4x64x32xf16>, %k: tensor<2x64x32xf16>, %v: tensor<2x64x32xf16>, %w: tensor<256x256xf16>) -> (tensor<4x64x32xf16>, tensor<32x256xf16>) {
  %a = graph.attention %q, %k, %v {form = "materialized", plan.choice = #plan.choice<attention, grid = [2, 2, 2, 2]>} : (tensor<4x64x32xf16>, tensor<2x64x32xf16>, tensor<2x64x32xf16>) -> tensor<4x64x32xf16>
  %x = graph.reshape %a : tensor<4x64x32xf16> -> tensor<32x256xf16>
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm_serial, grid = [4, 4], k_steps = 2>} : (tensor<32x256xf16>, tensor<256x256xf16>) -> tensor<32x256xf16>
  func.return %a, %y : tensor<4x64x32xf16>, tensor<32x256xf16>
}

// CHECK-LABEL: func.func @attention(
// CHECK:       plan.attention {{.*}}key_block = 32 : i64{{.*}} -> !plan.tensor<4x64x34xf32, #plan.layout<grid = [2, 2, 2, 2], split = {{\[\[}}0, 1], [2], []], partial = 3, align = [1, 32, 1], memory = standard>>
// CHECK:       plan.gemm_serial {{.*}}k_steps = 2 : i64{{.*}} -> !plan.tensor<32x256xf16, #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard>>
// DECIDE-LABEL: func.func @attention(
// DECIDE:       graph.attention %q, %k, %v {form = "materialized", plan.choice = #plan.choice<attention, grid = [2, 2, 2, 2]>}

// LARGE: error: plan-ops: graph.matmul %h (op 1): grid 16x1x1 needs 534528 bytes per tile; the per-op budget is 529203 of 638976 bytes (0 held by live values)
// TILES: error: plan-ops: graph.matmul %h (op 1): pinned grid 8x8x1 needs 64 tiles; target sim16 has 16
// GRID: error: plan-ops: graph.matmul %h (op 1): grid 1x5x3 does not divide matmul [64x256] x [256x1024] on sim16; the grids the planner can emit are 1x16x1, 1x8x2,
// LAYOUT: error: plan-ops: graph.gelu %g (op 0): pinned layout grid 32 from tile 0 needs 32 tiles; target sim16 has 16
// UNDECIDED: error: plan-materialize: graph.matmul %h (op 4) has no plan.choice; run plan-decide first
// NOCHOICE: error: plan-ops: graph.gelu %g (op 0): plan.choice applies to graph.matmul, graph.attention and graph.gather only
