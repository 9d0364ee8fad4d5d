// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// From `ipu-opt -p ipu-compile --target sim16` on relu -> transpose -> add (4x8xf32); the
// phase table is cut to one family with pc = 1.

// CHECK: builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
  // CHECK-NEXT: tasm.program @p0 tiles(0, 16) {
  // CHECK-NEXT:   tasm.host_in @x
  // CHECK-NEXT:   tasm.call "relu" out(327744) in(array<i64: 327712>) {elements = 2 : i64} : f32 -> f32
  // CHECK-NEXT:   tasm.checkpoint @g
  // CHECK-NEXT:   tasm.sync
  // CHECK-NEXT:   tasm.exchange @phase0
  // CHECK-NEXT:   tasm.call "transpose" out(327744) in(array<i64: 327712>) {m = 2 : i64, n = 2 : i64} : f32 -> f32
  // CHECK-NEXT:   tasm.call "add" out(327712) in(array<i64: 327744, 327680>) {m = 2 : i64, n = 2 : i64, b_rows = 1 : i64, b_cols = 2 : i64} : f32 -> f16
  // CHECK-NEXT:   tasm.host_out @output0
  // CHECK-NEXT: }
  tasm.program @p0 tiles(0, 16) {
    tasm.host_in @x
    tasm.call "relu" out(327744) in(array<i64: 327712>) {elements = 2 : i64} : f32 -> f32
    tasm.checkpoint @g
    tasm.sync
    tasm.exchange @phase0
    tasm.call "transpose" out(327744) in(array<i64: 327712>) {m = 2 : i64, n = 2 : i64} : f32 -> f32
    tasm.call "add" out(327712) in(array<i64: 327744, 327680>) {m = 2 : i64, n = 2 : i64, b_rows = 1 : i64, b_cols = 2 : i64} : f32 -> f16
    tasm.host_out @output0
  }
  // CHECK-NEXT: tasm.program @p1 tiles(16, 48) {
  // CHECK-NEXT:   tasm.sync
  // CHECK-NEXT: }
  tasm.program @p1 tiles(16, 48) {
    tasm.sync
  }
  // CHECK-NEXT: tasm.stream_in @x : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard> at 327712
  tasm.stream_in @x : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> at 327712
  // CHECK-NEXT: tasm.checkpoint_def @g value "g" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard> at 327744
  tasm.checkpoint_def @g value "g" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> at 327744
  // CHECK-NEXT: tasm.phase @phase0 lower_bound 2 horizon 2 scheduler "greedy-longest-first" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
  // CHECK-NEXT: [0, 0, 327744, 8, 0, 327712, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]>
  tasm.phase @phase0 lower_bound 2 horizon 2 scheduler "greedy-longest-first" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 327744, 8, 0, 327712, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]>
  // CHECK-NEXT: tasm.weight @b dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> : tensor<4xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}0]], align = [2], memory = standard> at 327680
  tasm.weight @b dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : tensor<4xf32> layout #plan.layout<grid = [4, 4], split = [[0]], align = [2], memory = standard> at 327680
  // CHECK-NEXT: tasm.weight @w #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16> layout #plan.layout<grid = [1, 8, 2], split = {{\[\[}}2], [1]], align = [2, 32], memory = interleaved> at 524288
  tasm.weight @w #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16> layout #plan.layout<grid = [1, 8, 2], split = [[2], [1]], align = [2, 32], memory = interleaved> at 524288
  // A weight whose padding a kernel reads as data: the initialize call writes its padding as zeros.
  // CHECK-NEXT: tasm.weight @wp #graph.gaussian<seed = 4, std = 0.02> : tensor<1000x90xf16> layout #plan.layout<grid = [1, 2, 8], split = {{\[\[}}2], [1]], align = [2, 48], memory = interleaved> at 557056 zero_padding
  tasm.weight @wp #graph.gaussian<seed = 4, std = 0.02> : tensor<1000x90xf16> layout #plan.layout<grid = [1, 2, 8], split = [[2], [1]], align = [2, 48], memory = interleaved> at 557056 zero_padding
  // CHECK-NEXT: tasm.stream_out @output0 : tensor<8x4xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}1], [0]], align = [2, 2], memory = standard> at 327712
  tasm.stream_out @output0 : tensor<8x4xf32> layout #plan.layout<grid = [4, 4], split = [[1], [0]], align = [2, 2], memory = standard> at 327712
  // CHECK-NEXT: }
}

// -----

// The explicit binding form `ipu-translate --from-ipuexe` prints: each binding carries the
// package's slice table (runtime.package.SLICE_COLUMNS: logical_offset, logical_stride, rows,
// row_elements, tile, tile_count, tile_step, address, tile_stride) instead of a layout and an
// address; a weight carries its bytes (see weight-bytes.mlir for bytes the decimal syntax would
// change). A program may name its code address.

// CHECK: builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.compiler = "0.1.0", tasm.metrics = {programs = 1 : i64, phases = 0 : i64}} {
builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.compiler = "0.1.0", tasm.metrics = {programs = 1 : i64, phases = 0 : i64}} {
  // CHECK-NEXT: tasm.program @p0 tiles(0, 16) at 311360 {
  // CHECK-NEXT:   tasm.host_in @x
  // CHECK-NEXT:   tasm.checkpoint @a_state_scores
  // CHECK-NEXT:   tasm.host_out @output0
  // CHECK-NEXT: }
  tasm.program @p0 tiles(0, 16) at 311360 {
    tasm.host_in @x
    tasm.checkpoint @a_state_scores
    tasm.host_out @output0
  }
  // CHECK-NEXT: tasm.stream_in @x : tensor<4x8xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]
  // CHECK-NEXT: [0, 8, 4, 2, 0, 4, 1, 327712, 8],
  // CHECK-NEXT: [2, 8, 4, 2, 4, 4, 1, 327712, 8]>
  tasm.stream_in @x : tensor<4x8xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 8, 4, 2, 0, 4, 1, 327712, 8], [2, 8, 4, 2, 4, 4, 1, 327712, 8]>
  // CHECK-NEXT: tasm.weight @b dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> : tensor<4xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]
  // CHECK-NEXT: [0, 4, 1, 4, 0, 16, 1, 327680, 16]>
  tasm.weight @b dense<"0x0000803F000000400000404000008040"> : tensor<4xf32> : tensor<4xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 4, 1, 4, 0, 16, 1, 327680, 16]>
  // CHECK-NEXT: tasm.checkpoint_def @a_state_scores value "a" aspect "scores" : tensor<4x8xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]
  // CHECK-NEXT: [0, 8, 4, 8, 0, 1, 1, 327744, 32]>
  tasm.checkpoint_def @a_state_scores value "a" aspect "scores" : tensor<4x8xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 8, 4, 8, 0, 1, 1, 327744, 32]>
  // CHECK-NEXT: tasm.stream_out @output0 : tensor<0xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]>
  tasm.stream_out @output0 : tensor<0xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]>
  // CHECK-NEXT: }
}
