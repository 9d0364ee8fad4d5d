// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage,lower-to-tasm' --target sim16 | filecheck %s

func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// All kernels run on tiles [0, 16), so one program is shared by every tile. Addresses are the
// place-storage slots: standard data from the end of the code up, interleaved data from the top
// of memory down. At the PopLibs ReduceAdd rate (~5.3 B a cycle) the GEMM splits K four ways.
// CHECK-NOT:  func.func
// CHECK:      builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.memory = {peak_standard_bytes = 40992 : i64, peak_interleaved_bytes = 49152 : i64, peak_total_bytes = 81952 : i64, maximum_standard_allocation_bytes = 32768 : i64, exchange_row_bytes = 800 : i64, largest_free_bytes_at_peak = 522336 : i64, code_bytes = 16384 : i64, estimated_cycles = {{[1-9][0-9]*}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64}} {
// CHECK-NEXT:   tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK-NEXT:     tasm.call "gelu" out(336704) in(array<i64: 328512>) {elements = 4096 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @g
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase0
// CHECK-NEXT:     tasm.call "amp_matmul" out(900000) in(array<i64: 344896, 916384>) {m = 64 : i64, k = 256 : i64, n = 64 : i64} : f16 -> f32
// Phase 1 stages a partial sum into 4 x 64 x 16 f32 at 328512; each slot is written whole, so nothing is zeroed.
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase1
// CHECK-NEXT:     tasm.call "reduce_sum" out(344896) in(array<i64: 328512>) {parts = 4 : i64, elements = 1024 : i64} : f32 -> f16
// CHECK-NEXT:     tasm.checkpoint @y
// CHECK-NEXT:     tasm.call "add" out(328512) in(array<i64: 344896, 328480>) {m = 64 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @yb
// CHECK-NEXT:     tasm.host_out @output0
// CHECK-NEXT:   }
// CHECK-NEXT:   tasm.stream_in @x : tensor<64x1024xf16> layout #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard> at 328512
// CHECK-NEXT:   tasm.checkpoint_def @g value "g" : tensor<64x1024xf16> layout #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard> at 336704
// CHECK-NEXT:   tasm.phase @phase0 lower_bound 8192 horizon 8192 scheduler "exact-preemptive-grouped" transfers = #table.transfers<[start, src_tile, {{.*}}]
// CHECK:        {{^ +\[[-0-9, ]+\]>$}}
// CHECK-NEXT:   tasm.weight @w2 #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16> layout #plan.layout<grid = [1, 4, 4], split = {{\[\[}}2], [1]], align = [2, 64], memory = interleaved> at 916384
// Phase offsets are now absolute: source 900000 + relative offset, destination 328512 + relative offset.
// CHECK-NEXT:   tasm.phase @phase1 lower_bound 4096 horizon 4096 scheduler "greedy-shift-mod-4" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
// CHECK-NEXT: [0, 0, 900000, 256, 0, 328512, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 0, 900064, 256, 1, 328512, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2048, 0, 900128, 256, 2, 328512, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3072, 0, 900192, 256, 3, 328512, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3072, 1, 900000, 256, 0, 332608, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 1, 900064, 256, 1, 332608, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 1, 900128, 256, 2, 332608, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2048, 1, 900192, 256, 3, 332608, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2048, 2, 900000, 256, 0, 336704, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3072, 2, 900064, 256, 1, 336704, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 2, 900128, 256, 2, 336704, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 2, 900192, 256, 3, 336704, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 3, 900000, 256, 0, 340800, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2048, 3, 900064, 256, 1, 340800, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3072, 3, 900128, 256, 2, 340800, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 3, 900192, 256, 3, 340800, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0]>
// CHECK-NEXT:   tasm.checkpoint_def @y value "y" : tensor<64x256xf16> layout #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1, 2]], memory = standard> at 344896
// CHECK-NEXT:   tasm.weight @b2 #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16> layout #plan.layout<grid = [1, 4, 4], split = {{\[\[}}1, 2]], memory = standard> at 328480
// CHECK-NEXT:   tasm.checkpoint_def @yb value "yb" : {{.*}} at 328512
// CHECK-NEXT:   tasm.stream_out @output0 : tensor<64x256xf16> layout #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1, 2]], memory = standard> at 328512
// CHECK-NEXT: }
