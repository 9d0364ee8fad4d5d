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
// place-storage slots: standard data from the end of the code up (0x50000 = 327680,
// 0x50020 = 327712, 0x52020 = 335904, 0x54020 = 344096), interleaved data from the top of memory
// down (0xE0000 = 917504, 0xDE000 = 909312).
// CHECK-NOT:  func.func
// CHECK:      builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.memory = {peak_standard_bytes = 73760 : i64, peak_interleaved_bytes = 40960 : i64, peak_total_bytes = 106528 : i64, maximum_standard_allocation_bytes = 65536 : i64, exchange_row_bytes = 640 : i64, largest_free_bytes_at_peak = 497920 : i64, code_bytes = 16384 : i64, estimated_cycles = {{[1-9][0-9]*}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64}} {
// CHECK-NEXT:   tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK-NEXT:     tasm.call "gelu" out(336544) in(array<i64: 328352>) {elements = 4096 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @g
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase0
// CHECK-NEXT:     tasm.call "amp_matmul" out(908192) in(array<i64: 344736, 916384>) {m = 64 : i64, k = 512 : i64, n = 32 : i64} : f16 -> f32
// Phase 1 stages a partial sum: its destination (0x50020, 2 x 64 x 16 f32) is zeroed before the sync.
// CHECK-NEXT:     tasm.call "zero" out(328352) in(array<i64>) {elements = 2048 : i64} : f32 -> f32
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase1
// CHECK-NEXT:     tasm.call "reduce_sum" out(336544) in(array<i64: 328352>) {parts = 2 : i64, elements = 1024 : i64} : f32 -> f16
// CHECK-NEXT:     tasm.checkpoint @y
// CHECK-NEXT:     tasm.call "add" out(328352) in(array<i64: 336544, 328320>) {m = 64 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64} : f16 -> f16
// CHECK-NEXT:     tasm.checkpoint @yb
// CHECK-NEXT:     tasm.host_out @output0
// CHECK-NEXT:   }
// CHECK-NEXT:   tasm.stream_in @x : tensor<64x1024xf16> layout #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard> at 328352
// CHECK-NEXT:   tasm.checkpoint_def @g value "g" : tensor<64x1024xf16> layout #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard> at 336544
// CHECK-NEXT:   tasm.phase @phase0 lower_bound 16384 horizon 16384 scheduler "exact-preemptive-grouped" transfers = #table.transfers<[start, src_tile, {{.*}}]
// CHECK:        {{^ +\[[-0-9, ]+\]>$}}
// CHECK-NEXT:   tasm.weight @w2 #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16> layout #plan.layout<grid = [1, 8, 2], split = {{\[\[}}2], [1]], align = [2, 32], memory = interleaved> at 916384
// Phase offsets are now absolute: source 0xDE000 (909312) + relative offset, destination 0x50020 (327712) + relative offset.
// CHECK-NEXT:   tasm.phase @phase1 lower_bound 2048 horizon 2048 scheduler "greedy-shift-mod-2" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
// CHECK-NEXT: [0, 0, 908192, 128, 0, 328352, 64, 64, 16, 8, 2, 2, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 0, 908256, 128, 1, 328352, 64, 64, 16, 8, 2, 2, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 1, 908192, 128, 0, 332448, 64, 64, 16, 8, 2, 2, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 1, 908256, 128, 1, 332448, 64, 64, 16, 8, 2, 2, 1, 1, 0, 0, 0]>
// CHECK-NEXT:   tasm.checkpoint_def @y value "y" : tensor<64x256xf16> layout #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [1, 2]], memory = standard> at 336544
// CHECK-NEXT:   tasm.weight @b2 #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16> layout #plan.layout<grid = [1, 8, 2], split = {{\[\[}}1, 2]], memory = standard> at 328320
// CHECK-NEXT:   tasm.checkpoint_def @yb value "yb" : {{.*}} at 328352
// CHECK-NEXT:   tasm.stream_out @output0 : tensor<64x256xf16> layout #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [1, 2]], memory = standard> at 328352
// CHECK-NEXT: }
