// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s


func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {lower_bound = 2 : i64, horizon = 100 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// A phase's table needs the `start` column (a move's table, without it, is refused).
// CHECK: Operation does not verify: exchange.phase: transfer table columns must be [start, src_tile, {{.*}}]
