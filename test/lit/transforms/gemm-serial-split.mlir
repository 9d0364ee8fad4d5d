// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | ipu-opt -p 'plan-materialize{target=sim16}' | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | filecheck %s --check-prefix=DECIDE

// A serial gemm with its contraction in 2 parts (2.5-D): on a 2 x 4 x 2 grid each part's 8
// tiles step through its 250 contraction columns in 3 windows of at most 84, the fp32 partials
// then summed by a plan.reduce into column blocks over (4, 2).
func.func @main(%x: tensor<64x500xf16>) -> tensor<64x256xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<500x256xf16>
  %g = graph.gelu %x : tensor<64x500xf16> -> tensor<64x500xf16>
  %y = graph.matmul %g, %w {plan.choice = #plan.choice<gemm_serial, grid = [2, 4, 2], k_steps = 3>} : (tensor<64x500xf16>, tensor<500x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// The operands' contraction axis is split part-major: each part's share on its own tiles.
// CHECK:      %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x500xf16, #plan.layout<grid = [2, 4, 2], split = {{\[\[}}0], [2, 1]], memory = standard>>
// CHECK:      %w = plan.parameter "w" {{.*}} : !plan.tensor<500x256xf16, #plan.layout<grid = [2, 4, 2], split = {{\[\[}}2, 0], [1]], memory = standard>>
// CHECK-NEXT: %y_partial = plan.gemm_serial %g_r, %w {k_steps = 3 : i64} : ({{.*}}) -> !plan.tensor<64x256xf32, #plan.layout<grid = [2, 4, 2], split = {{\[\[}}0], [1]], partial = 2, memory = standard>>
// CHECK-NEXT: %y = plan.reduce %y_partial {value = "y"} : {{.*}} -> !plan.tensor<64x256xf16, #plan.layout<grid = [2, 4, 2], split = {{\[\[}}0], [1, 2]], memory = standard>>

// DECIDE: %y = graph.matmul %g, %w {plan.choice = #plan.choice<gemm_serial, grid = [2, 4, 2], k_steps = 3>}

// Each step moves one window a part (part p reads columns p 250 + k0 on): 32 rows by 2 x 84
// columns of the lhs, 2 x 84 rows of the rhs; the AMP accumulates into the partial result.
// MAP:      %y_partial_a0 = tilemap.move %g_r transfers
// MAP:      {reason = "gemm window"} : !tilemap.buffer<32x64xf16, tiles = [0, 16], memory = standard> -> !tilemap.buffer<32x84xf16, tiles = [0, 16], memory = standard>
// MAP:      %y_partial_b0 = tilemap.move %w transfers
// MAP:      {reason = "gemm window"} : !tilemap.buffer<125x64xf16, tiles = [0, 16], memory = standard> -> !tilemap.buffer<84x64xf16, tiles = [0, 16], memory = interleaved>
// MAP-NEXT: %y_partial_acc = tilemap.run "amp_matmul"(%y_partial_a0, %y_partial_b0) {m = 32 : i64, k = 84 : i64, n = 64 : i64}
// MAP:      %y_partial_acc_1 = tilemap.run "amp_matmul_acc"(%y_partial_a84, %y_partial_b84, %y_partial_acc) {m = 32 : i64, k = 84 : i64, n = 64 : i64}
// MAP:      %y_partial = tilemap.run "amp_matmul_acc"(%y_partial_a168, %y_partial_b168, %y_partial_acc_1) {m = 32 : i64, k = 82 : i64, n = 64 : i64}
// MAP-SAME:   -> !tilemap.buffer<32x64xf32, tiles = [0, 16], memory = standard>
// MAP-NEXT: %y_stage = tilemap.move %y_partial transfers
// MAP:      %y = tilemap.run "reduce_sum"(%y_stage) {parts = 2 : i64, elements = 1024 : i64}
