// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | ipu-opt -p 'plan-materialize{target=sim16}' | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | ipu-opt | filecheck %s --check-prefix=DECIDE

// 32 tokens through a [512 x 1024] weight on sim16: the planner swaps the AMP's operands (the
// weight's 1024 columns are the AMP's rows, the 32 tokens two 16-wide output groups; the
// contraction in 2 parts) and each tile transposes its block of the partial product; a researcher sees and pins it as `orientation`.
func.func @main(%x: tensor<32x512xf16>) -> tensor<32x1024xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<512x1024xf16>
  %g = graph.gelu %x : tensor<32x512xf16> -> tensor<32x512xf16>
  %y = graph.matmul %g, %w : (tensor<32x512xf16>, tensor<512x1024xf16>) -> tensor<32x1024xf16>
  func.return %y : tensor<32x1024xf16>
}

// DECIDE: %y = graph.matmul %g, %w {plan.choice = #plan.choice<gemm, grid = [1, 8, 2], weight = resident, orientation = swapped>}

// The lhs is the AMP's weights: it moves into interleaved memory.
// PLAN:      %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<32x512xf16, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [2]], align = [1, 2], memory = interleaved>>
// PLAN:      %y_partial = plan.gemm %g_r, %w {swapped} : ({{.*}}memory = interleaved>>, {{.*}}memory = interleaved>>) -> !plan.tensor<32x1024xf32, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [1]], partial = 2, align = [1, 128], memory = interleaved>>
// PLAN-NEXT: %y = plan.reduce %y_partial {value = "y"}

// The AMP writes the partial product's transpose (a tile's [128 x 32], f32) into a scratch,
// the kernel's transpose the output block.
// MAP:      %y_partial_transposed = tilemap.alloc : !tilemap.buffer<128x32xf32, tiles = [0, 16], memory = standard>
// MAP-NEXT: %y_partial = tilemap.run "amp_matmul_swapped"(%g_r, %w, %y_partial_transposed) {m = 32 : i64, k = 256 : i64, n = 128 : i64} : (!tilemap.buffer<32x256xf16, tiles = [0, 16], memory = interleaved>, !tilemap.buffer<256x128xf16, tiles = [0, 16], memory = interleaved>, !tilemap.buffer<128x32xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<32x128xf32, tiles = [0, 16], memory = interleaved>
