// RUN: ipu-opt %s -p 'schedule-exchange{target=sim16 cpsat=false}' --target sim16 | filecheck %s

// Six serial scatters, each from one source (tiles 0-5) to the four receivers 8-11, 3 words to
// each (tile 0: 2 words): every receiver gets 17 words, the bound. A scatter holds its send port
// for all four members, so every list order staggers the families and ends at 26; the exact
// preemptive schedule would cut them into single members. The rotation schedule starts member
// (source s, receiver q) at (prefix(s) + 3 q) mod 17: each receiver sees the six sources back
// to back, rotated, and each family becomes at most two families (one wrap) with time step 3.
func.func @f(%b: !tilemap.buffer<1x32xf32, tiles = [0, 16], memory = standard>) {
  %m = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 8, 0, 8, 1, 2, 4, 0, 1, 1, 1, 8, 0, 2], [1, 0, 12, 8, 8, 12, 1, 3, 4, 0, 1, 1, 1, 12, 0, 3], [2, 0, 12, 8, 20, 12, 1, 3, 4, 0, 1, 1, 1, 12, 0, 3], [3, 0, 12, 8, 32, 12, 1, 3, 4, 0, 1, 1, 1, 12, 0, 3], [4, 0, 12, 8, 44, 12, 1, 3, 4, 0, 1, 1, 1, 12, 0, 3], [5, 0, 12, 8, 56, 12, 1, 3, 4, 0, 1, 1, 1, 12, 0, 3]> : !tilemap.buffer<1x32xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x32xf32, tiles = [0, 16], memory = standard>
  func.return
}

// CHECK:      %m = exchange.phase %b transfers = #table.transfers<[start, src_tile, {{.*}}, par_time_step]
// CHECK-NEXT:   [0, 0, 0, 8, 8, 0, 8, 1, 2, 4, 0, 1, 1, 1, 8, 0, 3],
// CHECK-NEXT:   [2, 1, 0, 12, 8, 8, 12, 1, 3, 4, 0, 1, 1, 1, 12, 0, 3],
// CHECK-NEXT:   [5, 2, 0, 12, 8, 20, 12, 1, 3, 4, 0, 1, 1, 1, 12, 0, 3],
// CHECK-NEXT:   [8, 3, 0, 12, 8, 32, 12, 1, 3, 3, 0, 1, 1, 1, 12, 0, 3],
// CHECK-NEXT:   [0, 3, 36, 12, 11, 32, 12, 1, 3, 1, 0, 1, 1, 1, 12, 0, 0],
// CHECK-NEXT:   [11, 4, 0, 12, 8, 44, 12, 1, 3, 2, 0, 1, 1, 1, 12, 0, 3],
// CHECK-NEXT:   [0, 4, 24, 12, 10, 44, 12, 1, 3, 2, 0, 1, 1, 1, 12, 0, 3],
// CHECK-NEXT:   [14, 5, 0, 12, 8, 56, 12, 1, 3, 1, 0, 1, 1, 1, 12, 0, 0],
// CHECK-NEXT:   [0, 5, 12, 12, 9, 56, 12, 1, 3, 3, 0, 1, 1, 1, 12, 0, 3]> {lower_bound = 17 : i64, horizon = 17 : i64, scheduler = "rotation", logical_transfers = 24 : i64
