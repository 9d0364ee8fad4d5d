// RUN: ipu-opt %examples/mlp_small.mlir -p ipu-compile --target sim16 | filecheck %s

// examples/mlp_small.mlir end to end. ipu-compile verifies only its final (tasm) output, so this
// passes although `-p plan-ops` alone on the same file is rejected by the plan.gemm verifier
// (see dialects/plan/gemm-unsplit-contraction.mlir and plan-ops-mlp-small.mlir).

// CHECK:      builtin.module attributes {tasm.target = "sim16", tasm.memory = {peak_standard_bytes = 10400 : i64, peak_interleaved_bytes = 139264 : i64, peak_total_bytes = 139424 : i64, maximum_standard_allocation_bytes = 8192 : i64}} {
// CHECK-NEXT:   tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:     tasm.host_in 0
// CHECK-NEXT:     tasm.call "amp_matmul" out(622592) in(array<i64: 589824, 524288>) {m = 64 : i64, k = 256 : i64, n = 64 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint 0
// CHECK-NEXT:     tasm.call "add" {{.*}} {m = 64 : i64, n = 64 : i64, b_rows = 1 : i64, b_cols = 64 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint 1
// CHECK-NEXT:     tasm.call "gelu" {{.*}} {elements = 4096 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint 2
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange 0
// CHECK-NEXT:     tasm.call "amp_matmul" {{.*}} {m = 64 : i64, k = 512 : i64, n = 32 : i64} : f16 -> f32
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange 1
// CHECK-NEXT:     tasm.call "reduce_sum" {{.*}} {parts = 2 : i64, elements = 1024 : i64} : f32 -> f16
// CHECK-NEXT:     tasm.checkpoint 3
// CHECK-NEXT:     tasm.call "add" {{.*}} {m = 64 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint 4
// CHECK-NEXT:     tasm.host_out 0
// CHECK-NEXT:   }
// CHECK:        tasm.weight "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x1024xf16> layout #plan.layout<grid = [1, 16, 1], split = {{\[\[}}2], [1]], align = [2, 1], memory = interleaved> at 524288
// CHECK:        tasm.phase 0 lower_bound 16384 horizon 16384 scheduler "greedy-longest-first"
// CHECK:        tasm.phase 1 lower_bound 2048 horizon 3072 scheduler "greedy-longest-first"
// CHECK:        tasm.stream_out 0 "output0" : tensor<64x256xf16> layout #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [1, 2]], memory = standard>
