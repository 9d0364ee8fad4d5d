// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// From `ipu-opt -p plan-ops,map-tiles --target sim16` on relu -> transpose -> add (4x8xf32).

// CHECK-LABEL: func.func @main
func.func @main() attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"], tilemap.mapping = #tilemap.mapping<identity>} {
  // CHECK: %x = tilemap.host_write "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  %x = tilemap.host_write "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: %g = tilemap.run "relu"(%x) {elements = 2 : i64} : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  %g = tilemap.run "relu"(%x) {elements = 2 : i64} : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: tilemap.checkpoint "g" value "g" %g : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> as tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard>
  tilemap.checkpoint "g" value "g" %g : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> as tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>
  // CHECK-NEXT: %g_r = tilemap.move %g transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
  // CHECK-NEXT: [0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
  // CHECK-NEXT: [4, 0, 8, 0, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
  // CHECK-NEXT: [8, 0, 8, 4, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0],
  // CHECK-NEXT: [12, 0, 8, 4, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {reason = "transpose alignment"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %g_r = tilemap.move %g transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [4, 0, 8, 0, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [8, 0, 8, 4, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [12, 0, 8, 4, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {reason = "transpose alignment"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: %t = tilemap.run "transpose"(%g_r) {m = 2 : i64, n = 2 : i64} : (!tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %t = tilemap.run "transpose"(%g_r) {m = 2 : i64, n = 2 : i64} : (!tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: %b = tilemap.weight "b" dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> : tensor<4xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}0]], align = [2], memory = standard> -> !tilemap.buffer<2xf32, tiles = [0, 16], memory = standard>
  %b = tilemap.weight "b" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : tensor<4xf32> layout #plan.layout<grid = [4, 4], split = [[0]], align = [2], memory = standard> -> !tilemap.buffer<2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: %y = tilemap.run "add"(%t, %b) {m = 2 : i64, n = 2 : i64, b_rows = 1 : i64, b_cols = 2 : i64} : (!tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>, !tilemap.buffer<2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %y = tilemap.run "add"(%t, %b) {m = 2 : i64, n = 2 : i64, b_rows = 1 : i64, b_cols = 2 : i64} : (!tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>, !tilemap.buffer<2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: tilemap.host_read "output0" %y : !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard> as tensor<8x4xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}1], [0]], align = [2, 2], memory = standard>
  tilemap.host_read "output0" %y : !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard> as tensor<8x4xf32> layout #plan.layout<grid = [4, 4], split = [[1], [0]], align = [2, 2], memory = standard>
  // CHECK-NEXT: func.return
  func.return
}

// -----

// Weights with a seeded initializer, interleaved buffers on a tile sub-range, and an empty move.
// CHECK-LABEL: func.func @subrange
func.func @subrange() {
  // CHECK: %w = tilemap.weight "w" #graph.gaussian<seed = 3, std = 0.02> : tensor<8x8xf16> layout #plan.layout<grid = [2, 2], split = {{\[\[}}0], [1]], first = 4, memory = interleaved> -> !tilemap.buffer<4x4xf16, tiles = [4, 4], memory = interleaved>
  %w = tilemap.weight "w" #graph.gaussian<seed = 3, std = 0.02> : tensor<8x8xf16> layout #plan.layout<grid = [2, 2], split = [[0], [1]], first = 4, memory = interleaved> -> !tilemap.buffer<4x4xf16, tiles = [4, 4], memory = interleaved>
  // CHECK-NEXT: %c = tilemap.move %w transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]> : !tilemap.buffer<4x4xf16, tiles = [4, 4], memory = interleaved> -> !tilemap.buffer<4x4xf16, tiles = [4, 4], memory = standard>
  %c = tilemap.move %w transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]> : !tilemap.buffer<4x4xf16, tiles = [4, 4], memory = interleaved> -> !tilemap.buffer<4x4xf16, tiles = [4, 4], memory = standard>
  // CHECK-NEXT: %r = tilemap.run "copy"(%c) {elements = 16 : i64} {note = "extra"} : (!tilemap.buffer<4x4xf16, tiles = [4, 4], memory = standard>) -> !tilemap.buffer<4x4xf16, tiles = [4, 4], memory = standard>
  %r = tilemap.run "copy"(%c) {elements = 16 : i64} {note = "extra"} : (!tilemap.buffer<4x4xf16, tiles = [4, 4], memory = standard>) -> !tilemap.buffer<4x4xf16, tiles = [4, 4], memory = standard>
  func.return
}

// -----

// A move zeroed from element 2 on (its first block row is data on every tile).
// CHECK-LABEL: func.func @zero_tail
func.func @zero_tail(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  // CHECK-NEXT: %c = tilemap.move %b transfers = #table.transfers<[src_tile,
  // CHECK-NEXT: [0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {zero_fill, zero_from = 2 : i64} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {zero_fill, zero_from = 2 : i64} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
