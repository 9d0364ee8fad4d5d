// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The horizon check reads start (column 0), rows (7), row_words (8), par_count (9) and
// par_time_step (16): end = start + rows * row_words + (par_count - 1) * par_time_step.
// Each family here ends at start + 1 * 2 = 4 at most (par_time_step 0), within horizon 4.
// CHECK: tasm.phase @phase0 lower_bound 4 horizon 4 scheduler "greedy-longest-first" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
// CHECK-NEXT: [0, 0, 327744, 8, 0, 327712, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2, 4, 327744, 8, 0, 327720, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 8, 327744, 8, 4, 327712, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2, 12, 327744, 8, 4, 327720, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]>
tasm.phase @phase0 lower_bound 4 horizon 4 scheduler "greedy-longest-first" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 327744, 8, 0, 327712, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [2, 4, 327744, 8, 0, 327720, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [0, 8, 327744, 8, 4, 327712, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [2, 12, 327744, 8, 4, 327720, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]>

// -----

// A serial family (par_count 3, par_time_step 4): tile 0 scatters 16-byte blocks
// (par_src_offset_step 16) to tiles 0, 1, 2, with
// rows * row_words = 2 * 2 = 4: it ends at 1 + 4 + (3 - 1) * 4 = 13, exactly the horizon.
// CHECK: tasm.phase @phase1 lower_bound 13 horizon 13 scheduler "greedy-longest-first" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
// CHECK-NEXT: [1, 0, 327744, 8, 0, 327712, 8, 2, 2, 3, 0, 1, 1, 1, 16, 0, 4]>
tasm.phase @phase1 lower_bound 13 horizon 13 scheduler "greedy-longest-first" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [1, 0, 327744, 8, 0, 327712, 8, 2, 2, 3, 0, 1, 1, 1, 16, 0, 4]>

// -----

// The same family with horizon 12: rows * row_words alone (1 + 4 = 5) fits, but the time
// step makes the last member end at 13 > 12.
// CHECK: Operation does not verify: tasm.phase: a transfer ends after the horizon
// CHECK-NOT: tasm.phase @phase1 lower_bound
tasm.phase @phase1 lower_bound 12 horizon 12 scheduler "greedy-longest-first" transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [1, 0, 327744, 8, 0, 327712, 8, 2, 2, 3, 0, 1, 1, 1, 16, 0, 4]>
