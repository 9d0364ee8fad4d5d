// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

tasm.phase @phase0 lower_bound 2 horizon 2 scheduler "greedy-longest-first" transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 327744, 8, 0, 327712, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]>
// CHECK: Operation does not verify: tasm.phase: transfer table columns must be [start, src_tile, src_address, {{.*}}, par_time_step]

// -----

// rows * words = 4 * 2 = 8 cycles (and words * pc = 8): the family ends at cycle 8 > horizon 4.
tasm.phase @phase0 lower_bound 4 horizon 4 scheduler "greedy-longest-first" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 327744, 8, 0, 327712, 8, 4, 2, 4, 1, 1, 1, 1, 0, 0, 0]>
// CHECK: Operation does not verify: tasm.phase: a transfer ends after the horizon

// -----

tasm.program @p0 tiles(0, 16) {
  tasm.call "relu" out(327744) in(array<i64: 327712>) {elements = 2 : i64} : i32 -> f32
}
// CHECK: Operation does not verify: tasm.call: relu: element types must be floats (the kernel computes on floats only), got i32

// -----

tasm.program @p0 tiles(0, 16) {
  tasm.call "relu" out(327744) in(array<i64: 327712>) {elements = 2 : i64} : f16 -> index
}
// CHECK: Operation does not verify: tasm.call: relu: element types must be floats

// -----

// an integer kernel takes i32 (and floats), nothing else
tasm.program @p0 tiles(0, 16) {
  tasm.call "add" out(327744) in(array<i64: 327712, 327712>) {m = 1 : i64, n = 2 : i64, b_rows = 1 : i64, b_cols = 2 : i64} : i16 -> i16
}
// CHECK: Operation does not verify: tasm.call: add: element types must be f16, f32 or i32, got i16

// -----

tasm.program @p0 tiles(0, 0) {
  tasm.sync
}
// CHECK: Operation does not verify: tasm.program: tile range must be non-empty

// -----

func.func @f() {
  tasm.sync
  func.return
}
// CHECK: Operation does not verify: 'tasm.sync' expects parent op to be one of 'tasm.program', 'tasm.loop'

// -----

// A binding is placed by a layout at an address, or by a slice table: exactly one of them.
tasm.stream_in @x : tensor<4x8xf32>
// CHECK: Operation does not verify: tasm.stream_in: exactly one of a layout or a slice table is required

// -----

tasm.stream_in @x : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> at 327712 slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 8, 4, 2, 0, 4, 1, 327712, 8]>
// CHECK: Operation does not verify: tasm.stream_in: exactly one of a layout or a slice table is required

// -----

"tasm.stream_out"() <{sym_name = "y", tensor = tensor<4x8xf32>, address = 327712 : i64, slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 8, 4, 2, 0, 4, 1, 327712, 8]>}> : () -> ()
// CHECK: Operation does not verify: tasm.stream_out: a layout needs an address, a slice table takes none

// -----

"tasm.stream_out"() <{sym_name = "y", tensor = tensor<4x8xf32>, layout = #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>}> : () -> ()
// CHECK: Operation does not verify: tasm.stream_out: a layout needs an address, a slice table takes none

// -----

tasm.stream_out @y : tensor<4x8xf32> slices = dense<[[0, 8, 4, 2, 0, 4, 1, 327712, 8]]> : tensor<1x9xi32>
// CHECK: Operation does not verify: dense<{{.*}}> : tensor<1x9xi32> should be of base attribute table.slices

// -----

tasm.checkpoint_def @g value "g" : tensor<4x8xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 8, 4, 2, 0, 4, -1, 327712, 8]>
// CHECK: Operation does not verify: tasm.checkpoint_def: slice 0 column tile_step is negative (-1)

// -----

tasm.weight @b dense<[1.0, 2.0]> : tensor<2xf32> : tensor<4xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 4, 1, 4, 0, 16, 1, 327680, 16]>
// CHECK: Operation does not verify: tasm.weight: dense initializer shape [2] is not [4]

// -----

tasm.weight @b dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : tensor<4xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 4, 1, 4, 0, 16, 1, 327680, 16]> zero_padding
// CHECK: Operation does not verify: tasm.weight: zero_padding needs a layout (a slice table writes what it lists)

// -----

tasm.program @p0 tiles(0, 16) at -64 {
  tasm.sync
}
// CHECK: Operation does not verify: tasm.program: code address must be non-negative

// -----

// Program code refers to phases, streams and checkpoints by symbol; each must be defined.
tasm.program @p0 tiles(0, 16) {
  tasm.sync
  tasm.exchange @phase1
}
tasm.phase @phase0 lower_bound 0 horizon 0 scheduler "empty" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]>
// CHECK: Operation does not verify: tasm.exchange @phase1: no tasm.phase @phase1 in the module

// -----

tasm.program @p0 tiles(0, 16) {
  tasm.host_in @y
}
tasm.stream_in @x : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> at 327712
tasm.stream_out @y : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> at 327712
// CHECK: Operation does not verify: tasm.host_in @y: no tasm.stream_in @y in the module

// -----

tasm.program @p0 tiles(0, 16) {
  tasm.loop 2 {
    tasm.checkpoint @h
  }
}
// CHECK: Operation does not verify: tasm.checkpoint @h: no tasm.checkpoint_def @h in the module

// -----

tasm.program @p0 tiles(0, 16) {
  tasm.host_out @y
}
tasm.stream_out @y : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> at 327712
tasm.stream_out @y : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> at 327712
// CHECK: Operation does not verify: tasm.stream_out: @y is defined twice in the module

// -----

tasm.stream_out @y : tensor<2xf32> host_shape array<i64> layout #plan.layout<grid = [1], split = [[]], memory = standard> at 327680
// CHECK: Operation does not verify: tasm.stream_out: host shape [] does not hold the [2] tensor's elements

// -----

// a loop's slice of a stacked weight runs in a loop of as many trips as slices
tasm.program @p0 tiles(0, 16) {
  tasm.loop 2 {
    tasm.call "iteration_slice" out(327744) in(array<i64: 327712>) {iterations = 3 : i64, elements = 2 : i64} : f16 -> f16
  }
}
// CHECK: Operation does not verify: tasm.call: iteration_slice of 3 iterations must sit directly in a tasm.loop of 3; it is in a tasm.loop of 2

// -----

tasm.program @p0 tiles(0, 16) {
  tasm.call "iteration_slice" out(327744) in(array<i64: 327712>) {iterations = 3 : i64, elements = 2 : i64} : f16 -> f16
}
// CHECK: Operation does not verify: tasm.call: iteration_slice of 3 iterations must sit directly in a tasm.loop of 3; it is outside loops

// -----

tasm.phase @phase0 lower_bound 2 horizon 2 scheduler "greedy-longest-first" trip_stride 8 trips 3 families 0 to 1 transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]>
tasm.program @p0 tiles(0, 16) {
  tasm.loop 2 {
    tasm.sync
    tasm.exchange @phase0
  }
}
// CHECK: Operation does not verify: tasm.exchange @phase0: its phase reads by the trip of 3 trips; it must sit directly in a tasm.loop of 3; it is in a tasm.loop of 2

// -----

tasm.phase @phase0 lower_bound 2 horizon 2 scheduler "greedy-longest-first" trip_stride 6 trips 3 families 0 to 1 transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]>
// CHECK: Operation does not verify: tasm.phase: trip_stride 6 must be a positive whole number of words and trips 3 between 1 and

// -----

tasm.phase @phase0 lower_bound 2 horizon 2 scheduler "greedy-longest-first" trip_stride 8 trips 3 families 0 to 2 transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]>
// CHECK: Operation does not verify: tasm.phase: families 0 to 2 read by the trip are not a range of its 1
