// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s --split-input-file | ipu-opt --split-input-file | filecheck %s --check-prefix=NOHEX

// Tables name their columns once and print every row in decimal on its own line, however
// many rows they have (the builtin dense syntax turns to hex above 100 elements: this table
// has 112). The text parses back to the same rows, in custom and generic form.

// NOHEX-NOT: 0x
// CHECK-LABEL: func.func @move
func.func @move(%b: !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>) {
  // CHECK:      %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
  // CHECK-NEXT:     [0, 0, 16, 1, 0, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0],
  // CHECK-NEXT:     [1, 16, 16, 2, 16, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0],
  // CHECK:          [6, 96, 16, 7, 96, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0]> {reason = "shift"} : !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 16, 1, 0, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0], [1, 16, 16, 2, 16, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0], [2, 32, 16, 3, 32, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0],
    [3, 48, 16, 4, 48, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0],
    [4, 64, 16, 5, 64, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0],
    [5, 80, 16, 6, 80, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0],
    [6, 96, 16, 7, 96, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0]> {reason = "shift"} : !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>
  func.return
}

// -----

// A phase's table has the `start` column; negative values (an offset step) print as written.
// CHECK-LABEL: func.func @phase
func.func @phase(%b: !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>) {
  // CHECK:      exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
  // CHECK-NEXT:     [4, 1, 0, 16, 0, 112, -16, 7, 4, 1, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 28 : i64, horizon = 32 : i64, scheduler = "hand"} : !tilemap.buffer
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [4, 1, 0, 16, 0, 112, -16, 7, 4, 1, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 28 : i64, horizon = 32 : i64, scheduler = "hand"} : !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>
  func.return
}
