// RUN: ipu-opt %examples/mlp_small.mlir -p ipu-compile --target sim16 | filecheck %s

// examples/mlp_small.mlir end to end (see plan-ops-mlp-small.mlir for the plan level). The gemm
// lhs (x, at 0x501C0 = 328128) is standard data placed above the code and the biases; the
// weights (w1 at 0xE0000 = 917504) and gemm results are interleaved, placed from the top down.

// CHECK:      builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.memory = {peak_standard_bytes = 32928 : i64, peak_interleaved_bytes = 81920 : i64, peak_total_bytes = 114848 : i64, maximum_standard_allocation_bytes = 32768 : i64, exchange_row_bytes = 288 : i64, largest_free_bytes_at_peak = 506336 : i64, code_bytes = 16384 : i64, estimated_cycles = {{[1-9][0-9]*}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64}} {
// CHECK-NEXT:   tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK-NEXT:     tasm.call "amp_matmul" out(875424) in(array<i64: 328128, 916384>) {m = 64 : i64, k = 256 : i64, n = 64 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @h
// CHECK-NEXT:     tasm.call "add" {{.*}} {m = 64 : i64, n = 64 : i64, b_rows = 1 : i64, b_cols = 64 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @hb
// CHECK-NEXT:     tasm.call "gelu" {{.*}} {elements = 4096 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @g
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase0
// At the PopLibs ReduceAdd rate (~5.3 B a cycle) the second GEMM splits K four ways, not two.
// CHECK-NEXT:     tasm.call "amp_matmul" {{.*}} {m = 64 : i64, k = 256 : i64, n = 64 : i64} : f16 -> f32
// The partial-sum staging buffer has no padding, so phase 1 writes it whole: no zero fill.
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase1
// CHECK-NEXT:     tasm.call "reduce_sum" {{.*}} {parts = 4 : i64, elements = 1024 : i64} : f32 -> f16
// CHECK-NEXT:     tasm.checkpoint @y
// CHECK-NEXT:     tasm.call "add" {{.*}} {m = 64 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @yb
// CHECK-NEXT:     tasm.host_out @output0
// CHECK-NEXT:   }
// CHECK:        tasm.stream_in @x : tensor<64x256xf16> layout #plan.layout<grid = [1, 16, 1], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard> at 328128
// CHECK:        tasm.weight @w1 #graph.gaussian<seed = 1, std = 0.02> : tensor<256x1024xf16> layout #plan.layout<grid = [1, 16, 1], split = {{\[\[}}2], [1]], align = [2, 1], memory = interleaved> at 916384
// CHECK:        tasm.phase @phase0 lower_bound 8192 horizon 8192 scheduler "greedy-longest-first"
// CHECK:        tasm.phase @phase1 lower_bound 4096 horizon 4096 scheduler "greedy-shift-mod-4"
// CHECK:        tasm.stream_out @output0 : tensor<64x256xf16> layout #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1, 2]], memory = standard>
