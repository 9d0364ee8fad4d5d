// RUN: ipu-opt %s -p join-phases | filecheck %s
// RUN: ipu-opt %s -p join-phases | ipu-opt | filecheck %s

// Phases with only code-free ops between (a view, an allocation) run in one exchange, unless a
// later one reads what an earlier one of the group writes, through a view too: %d reads %c's
// bytes as %cv, so it starts a new exchange; %e reads only %b and joins %d's.
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %cv = tilemap.view %c : !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<4x1xf32, tiles = [0, 16], memory = standard>
  %s = tilemap.alloc : !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %d = exchange.phase %cv transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<4x1xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %e = exchange.phase %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 4 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK-LABEL: func.func @f(
// CHECK:       %c = exchange.phase %b
// CHECK:       scheduler = "greedy-longest-first"} :
// CHECK:       %d = exchange.phase %cv
// CHECK:       scheduler = "greedy-longest-first"} :
// CHECK-NEXT:  %e = exchange.phase %b
// CHECK:       scheduler = "greedy-longest-first", joined} :
