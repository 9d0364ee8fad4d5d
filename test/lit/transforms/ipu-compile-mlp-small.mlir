// RUN: ipu-opt %examples/mlp_small.mlir -p ipu-compile --target sim16 | filecheck %s

// examples/mlp_small.mlir end to end (see plan-ops-mlp-small.mlir for the greedy plan). The search
// keeps the largest weight budget's plan: both matmuls run swapped (the weights' columns are the
// AMP's rows, the 64 tokens four 16-wide groups), each token group with its own replica of the
// weight. The AMP lhs (x, streamed in at 0xA5CA0 = 678816) and the weights (w1 at 0xC7BA0 =
// 818080) are interleaved, placed from the top down; the transposed scratch and the biases are
// standard data above the code.

// CHECK:      builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.memory = {peak_standard_bytes = 19072 : i64, peak_interleaved_bytes = 286720 : i64, peak_total_bytes = 303744 : i64, maximum_standard_allocation_bytes = 16384 : i64, exchange_row_bytes = 288 : i64, largest_free_bytes_at_peak = 317440 : i64, code_bytes = 16384 : i64, estimated_cycles = {{[1-9][0-9]*}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64}
// CHECK-NEXT:   tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK-NEXT:     tasm.call "amp_matmul_swapped" out(670624) in(array<i64: 678816, 818080, 328608>) {m = 16 : i64, k = 256 : i64, n = 256 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @h
// CHECK-NEXT:     tasm.call "add" {{.*}} {m = 16 : i64, n = 256 : i64, b_rows = 1 : i64, b_cols = 256 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @hb
// CHECK-NEXT:     tasm.call "gelu" {{.*}} {elements = 4096 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @g
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase0
// At the PopLibs ReduceAdd rate (~5.3 B a cycle) the second GEMM splits K four ways.
// CHECK-NEXT:     tasm.call "amp_matmul_swapped" {{.*}} {m = 16 : i64, k = 256 : i64, n = 256 : i64} : f16 -> f32
// The partial-sum staging buffer has no padding, so phase 1 writes it whole: no zero fill.
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase1
// CHECK-NEXT:     tasm.call "reduce_sum" {{.*}} {parts = 4 : i64, elements = 1024 : i64} : f32 -> f16
// CHECK-NEXT:     tasm.checkpoint @y
// CHECK-NEXT:     tasm.call "add" {{.*}} {m = 16 : i64, n = 64 : i64, b_rows = 1 : i64, b_cols = 64 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @yb
// CHECK-NEXT:     tasm.host_out @output0
// CHECK-NEXT:   }
// CHECK:        tasm.stream_in @x : tensor<64x256xf16> layout #plan.layout<grid = [4, 4, 1], split = {{\[\[}}0], [2]], align = [1, 2], memory = interleaved> at 678816
// CHECK:        tasm.weight @w1 #graph.gaussian<seed = 1, std = 0.02> : tensor<256x1024xf16> layout #plan.layout<grid = [4, 4, 1], split = {{\[\[}}2], [1]], align = [2, 1], memory = interleaved> at 818080
// CHECK:        tasm.phase @phase0 lower_bound 2048 horizon 2048 scheduler "greedy-longest-first"
// CHECK:        tasm.weight @w2 #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16> layout #plan.layout<grid = [4, 1, 4], split = {{\[\[}}2], [1]], align = [2, 256], memory = interleaved>
// CHECK:        tasm.phase @phase1 lower_bound 4096 horizon 4096 scheduler "greedy-shift-mod-4"
// CHECK:        tasm.stream_out @output0 : tensor<64x256xf16> layout #plan.layout<grid = [4, 1, 4], split = {{\[\[}}0], [1, 2]], memory = standard>
