// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// From `ipu-opt -p plan-ops,map-tiles,schedule-exchange,place-storage --target sim16` on
// relu -> transpose -> add (4x8xf32), trimmed.

// CHECK-LABEL: func.func @main
// CHECK-SAME: exchange.memory = {peak_standard_bytes = 96 : i64, peak_interleaved_bytes = 0 : i64, peak_total_bytes = 96 : i64, maximum_standard_allocation_bytes = 32 : i64}
func.func @main() attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"], tilemap.mapping = #tilemap.mapping<identity>, exchange.memory = {peak_standard_bytes = 96 : i64, peak_interleaved_bytes = 0 : i64, peak_total_bytes = 96 : i64, maximum_standard_allocation_bytes = 32 : i64}} {
  // CHECK: %x = tilemap.host_write "x" : tensor<4x8xf32> layout {{.*}} {slot = #exchange.slot<0x50020, 32, standard>} -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  %x = tilemap.host_write "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> {slot = #exchange.slot<0x50020, 32, standard>} -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: %g = tilemap.run "relu"(%x) {elements = 2 : i64} {slot = #exchange.slot<0x50040, 32, standard>}
  %g = tilemap.run "relu"(%x) {elements = 2 : i64} {slot = #exchange.slot<0x50040, 32, standard>} : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: %g_r = exchange.phase %g transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
  // CHECK-NEXT: [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
  // CHECK-NEXT: [2, 4, 0, 8, 0, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
  // CHECK-NEXT: [0, 8, 0, 8, 4, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
  // CHECK-NEXT: [2, 12, 0, 8, 4, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]>
  // CHECK-SAME: {lower_bound = 4 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first", reason = "transpose alignment", slot = #exchange.slot<0x50020, 32, standard>}
  // CHECK-SAME: : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %g_r = exchange.phase %g transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [2, 4, 0, 8, 0, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [0, 8, 0, 8, 4, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [2, 12, 0, 8, 4, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 4 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first", reason = "transpose alignment", slot = #exchange.slot<0x50020, 32, standard>} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: %t = tilemap.run "transpose"(%g_r) {m = 2 : i64, n = 2 : i64} {slot = #exchange.slot<0x50040, 32, standard>}
  %t = tilemap.run "transpose"(%g_r) {m = 2 : i64, n = 2 : i64} {slot = #exchange.slot<0x50040, 32, standard>} : (!tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: tilemap.host_read "output0" %t
  tilemap.host_read "output0" %t : !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard> as tensor<8x4xf32> layout #plan.layout<grid = [4, 4], split = [[1], [0]], align = [2, 2], memory = standard>
  func.return
}

// -----

// Slot addresses are parsed as any integer and printed in hex; an empty phase has horizon 0.
// CHECK-LABEL: func.func @slots
func.func @slots(%b: !tilemap.buffer<64x32xf32, tiles = [0, 16], memory = interleaved>) {
  // CHECK: %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]> {lower_bound = 0 : i64, horizon = 0 : i64, scheduler = "none", slot = #exchange.slot<0x98000, 8192, interleaved>} : !tilemap.buffer<64x32xf32, tiles = [0, 16], memory = interleaved> -> !tilemap.buffer<2x64x16xf32, tiles = [0, 16], memory = standard>
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]> {lower_bound = 0 : i64, horizon = 0 : i64, scheduler = "none", slot = #exchange.slot<622592, 8192, interleaved>} : !tilemap.buffer<64x32xf32, tiles = [0, 16], memory = interleaved> -> !tilemap.buffer<2x64x16xf32, tiles = [0, 16], memory = standard>
  func.return
}
