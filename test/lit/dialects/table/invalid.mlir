// RUN: sed -n '/^\/\/ case 1$/,/^\/\/ end 1$/p' %s | not ipu-opt 2>&1 | filecheck %s --check-prefix=C1
// RUN: sed -n '/^\/\/ case 2$/,/^\/\/ end 2$/p' %s | not ipu-opt 2>&1 | filecheck %s --check-prefix=C2
// RUN: sed -n '/^\/\/ case 3$/,/^\/\/ end 3$/p' %s | not ipu-opt 2>&1 | filecheck %s --check-prefix=C3
// RUN: sed -n '/^\/\/ case 4$/,/^\/\/ end 4$/p' %s | not ipu-opt 2>&1 | filecheck %s --check-prefix=C4
// RUN: sed -n '/^\/\/ case 5$/,/^\/\/ end 5$/p' %s | not ipu-opt 2>&1 | filecheck %s --check-prefix=C5
// RUN: sed -n '/^\/\/ case 6$/,/^\/\/ end 6$/p' %s | not ipu-opt 2>&1 | filecheck %s --check-prefix=C6

// Each case on its own (a parse error ends the parse): the header must be the schema's columns,
// in order, and every row one integer per column.

// case 1
func.func @f(%b: !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]> : !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>
  func.return
}
// end 1
// C1: table.transfers: columns are not the transfers schema (missing row_words; unknown words)

// case 2
func.func @f(%b: !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_address, src_tile, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]> : !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>
  func.return
}
// end 2
// C2: table.transfers: columns must be in the order [src_tile, src_address, {{.*}}]

// case 3
tasm.stream_out @y : tensor<4x8xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address]>
// end 3
// C3: table.slices: columns are not the slices schema (missing tile_stride)

// case 4
func.func @f(%b: !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 16, 1, 0, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0], [1, 16, 16, 2, 16, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0]> : !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>
  func.return
}
// end 4
// C4: table.transfers: row 1 has 15 values, the header names 16 columns

// case 5
func.func @f(%b: !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>) {
  %c = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 16, 1, 0, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0.5]> : !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<8x4xf32, tiles = [0, 16], memory = standard>
  func.return
}
// end 5
// C5: table.transfers: row 0: '0.5' is not an integer

// case 6
tasm.stream_out @y : tensor<4x8xf32> slices = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]>
// end 6
// C6: error: #table.transfers<{{.*}}> should be of base attribute table.slices
