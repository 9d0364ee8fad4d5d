// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Row 1 starts at cycle 3 and moves rows * words = 1 * 2 words: it ends at cycle 5 > horizon 4.
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [3, 4, 0, 8, 0, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 4 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: exchange.phase: a transfer ends after the phase horizon

// -----

func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [-1, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: exchange.phase: a transfer ends after the phase horizon

// -----

func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 8 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: exchange.phase: horizon below the lower bound

// -----

func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 4, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: exchange.phase: a transfer reads outside the source buffer (8 bytes)

// -----

// Destination tiles 2 + (pc - 1) * pds + (mc - 1) * mcs = 2 + 3 + 3 * 4 = 17 >= 16.
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 2, 0, 8, 1, 2, 4, 1, 1, 4, 4, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: exchange.phase: transfer 0 has a destination tile outside [0, 16)

// -----

func.func @f() attributes {s = #exchange.slot<-32, 8, standard>} {
  func.return
}
// CHECK: exchange.slot: address and size must be non-negative

// -----

// a joined phase runs in the previous phase's exchange: there must be one
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first", joined} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: exchange.phase: a joined phase follows a phase

// -----

// and no kernel runs before it: no zero fill
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %d = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first", joined, zero_fill} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: exchange.phase: a joined phase has no zero fill (no kernel runs before it)

// -----

// One phase of an exchange reads by the trip (the package phase offsets one range of families).
func.func @f(%s: !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard>, %x: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %r = tilemap.repeat 3 iter(%h = %x) : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
    %c = exchange.phase %s transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 2 : i64, scheduler = "greedy-longest-first", trip_stride = 8 : i64} : !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
    %d = exchange.phase %s transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 2 : i64, scheduler = "greedy-longest-first", trip_stride = 8 : i64, joined} : !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
    tilemap.yield %d : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  }
  func.return
}
// CHECK: Operation does not verify: exchange.phase: one phase of an exchange reads by the trip (trip_stride)
