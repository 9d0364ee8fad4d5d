// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f() {
  %x = tilemap.host_write "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.host_write: layout block (1, 2) does not match buffer block (2, 2)

// -----

func.func @f() {
  %w = tilemap.weight "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<8x8xf16> layout #plan.layout<grid = [2, 2], split = [[0], [1]], first = 4, memory = standard> -> !tilemap.buffer<4x4xf16, tiles = [0, 4], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.weight: layout tiles do not match the buffer's tile range

// -----

func.func @f(%b: !tilemap.buffer<4x4xf16, tiles = [0, 4], memory = standard>) {
  tilemap.host_read "out" %b : !tilemap.buffer<4x4xf16, tiles = [0, 4], memory = standard> as tensor<8x8xf32> layout #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.host_read: element types differ

// -----

func.func @f(%b: !tilemap.buffer<4x4xf16, tiles = [0, 4], memory = standard>) {
  tilemap.checkpoint "c" value "c" %b : !tilemap.buffer<4x4xf16, tiles = [0, 4], memory = standard> as tensor<8x16xf16> layout #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.checkpoint: layout block (4, 8) does not match buffer block (4, 4)

// -----

// Row 1 reads 2 words at offset 4 of an 8-byte source block: it ends at byte 12.
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0], [4, 4, 8, 0, 8, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.move: a transfer reads outside the source buffer (8 bytes)

// -----

func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 12, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.move: a transfer writes outside the destination buffer (16 bytes)

// -----

// Row 0 sends from tiles 14, 15, 16, 17 (pc = 4, pss = 1): tiles 16 and 17 are not in [0, 16).
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [14, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.move: transfer 0 has a source tile outside [0, 16)

// -----

func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 0, 2, 4, 1, 1, 1, 1, 0, 0, 0]> : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.move: rows, words and counts must be positive

// -----

func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 0, 0, 0, 0]> : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// A move is not scheduled: its table has no `start` column.
// CHECK: Operation does not verify: tilemap.move: transfer table columns must be [src_tile, src_address, {{.*}}, par_time_step]

// -----

func.func @f(%a: !tilemap.buffer<4xf32, tiles = [0, 8], memory = standard>, %b: !tilemap.buffer<4xf32, tiles = [8, 8], memory = standard>) {
  %c = tilemap.run "add"(%a, %b) {m = 1 : i64, n = 4 : i64, b_rows = 1 : i64, b_cols = 4 : i64} : (!tilemap.buffer<4xf32, tiles = [0, 8], memory = standard>, !tilemap.buffer<4xf32, tiles = [8, 8], memory = standard>) -> !tilemap.buffer<4xf32, tiles = [0, 8], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.run: inputs must live on the result's tile group

// -----

func.func @f(%a: !tilemap.buffer<4xf32, tiles = [0, 8], memory = fast>) {
  func.return
}
// CHECK: tilemap.buffer: memory must be standard or interleaved

// -----

func.func @f(%a: !tilemap.buffer<4xf32, tiles = [0, 0], memory = standard>) {
  func.return
}
// CHECK: tilemap.buffer: tile range must be non-empty

// -----

func.func @f() attributes {tilemap.mapping = #tilemap.mapping<block = 16, width = 3>} {
  func.return
}
// CHECK: tilemap.mapping: width 3 must be positive and divide block 16

// -----

// A host stream names one of its function's run inputs or outputs.
func.func @main() attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]} {
  %x = tilemap.host_write "z" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.host_write: "z" is not in the function's ipu.inputs ["x"]

// -----

func.func @main() attributes {ipu.inputs = ["s"], ipu.outputs = []} {
  %s = tilemap.host_write "s" : tensor<1xf32> layout #plan.layout<grid = [1], split = [[]], memory = standard> {host_shape = array<i64: 2>} -> !tilemap.buffer<2xf32, tiles = [0, 1], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.host_write: host shape [2] does not hold the [1] tensor's elements

// -----

// zero_from names where the zeroing starts: it needs zero_fill.
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {zero_from = 2 : i64} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.move: zero_from needs zero_fill and lies in (0, 4) (the destination's elements)

// -----

// ... and lies inside the destination's 4 elements.
func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]> {zero_fill, zero_from = 4 : i64} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.move: zero_from needs zero_fill and lies in (0, 4) (the destination's elements)

// -----

// A view holds its input's elements: as many, of the same dtype, on the same tiles and memory.
func.func @f(%b: !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.view %b : !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x16xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.view: the result must hold the input's elements (dtype, count, tiles and memory)

// -----

func.func @f(%b: !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.view %b : !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x32xf32, tiles = [0, 16], memory = interleaved>
  func.return
}
// CHECK: Operation does not verify: tilemap.view: the result must hold the input's elements (dtype, count, tiles and memory)

// -----

// A move reading by the trip must sit directly in a repeat (trip i reads its sources + i x stride).
func.func @f(%s: !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %s transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]> {trip_stride = 8 : i64} : !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: tilemap.move: a trip_stride reads by the loop's trip: it must sit directly in a repeat

// -----

// The stride is whole 32-bit words.
func.func @f(%s: !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard>, %x: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %r = tilemap.repeat 3 iter(%h = %x) : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
    %c = tilemap.move %s transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]> {trip_stride = 6 : i64} : !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
    tilemap.yield %c : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  }
  func.return
}
// CHECK: Operation does not verify: tilemap.move: trip_stride 6 is not a positive whole number of 32-bit words

// -----

// Trip 2 of 4 reads bytes [24, 32) of a 24-byte stack.
func.func @f(%s: !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard>, %x: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %r = tilemap.repeat 4 iter(%h = %x) : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
    %c = tilemap.move %s transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 8, 0, 0, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]> {trip_stride = 8 : i64} : !tilemap.buffer<3x1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
    tilemap.yield %c : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  }
  func.return
}
// CHECK: Operation does not verify: tilemap.move: a transfer reads outside the source buffer (24 bytes)
