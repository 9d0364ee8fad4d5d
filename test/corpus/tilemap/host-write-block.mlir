// tilemap/host-write-block: a small matmul/transpose/softmax model compiled for sim16, then damaged
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
  func.func @main() attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"], tilemap.mapping = #tilemap.mapping<identity>} {
    %x = tilemap.host_write "x" : tensor<8x16xf16> layout #plan.layout<grid = [8, 1, 1], split = [[0], [2]], align = [1, 2], memory = standard> -> !tilemap.buffer<2x16xf16, tiles = [0, 8], memory = standard>
    %w = tilemap.weight "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<16x16xf16> layout #plan.layout<grid = [8, 1, 1], split = [[2], [1]], align = [2, 1], memory = interleaved> -> !tilemap.buffer<16x16xf16, tiles = [0, 8], memory = interleaved>
    %y = tilemap.run "amp_matmul"(%x, %w) {m = 1 : i64, k = 16 : i64, n = 16 : i64} : (!tilemap.buffer<2x16xf16, tiles = [0, 8], memory = standard>, !tilemap.buffer<16x16xf16, tiles = [0, 8], memory = interleaved>) -> !tilemap.buffer<1x16xf16, tiles = [0, 8], memory = interleaved>
    tilemap.checkpoint "y" value "y" %y : !tilemap.buffer<1x16xf16, tiles = [0, 8], memory = interleaved> as tensor<8x16xf16> layout #plan.layout<grid = [8, 1, 1], split = [[0], [1]], memory = interleaved>
    %y_r = tilemap.move %y transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 32, 0, 0, 32, 1, 8, 2, 1, 0, 1, 1, 0, 32, 8], [2, 0, 32, 1, 0, 32, 1, 8, 2, 1, 0, 1, 1, 0, 32, 8], [4, 0, 32, 2, 0, 32, 1, 8, 2, 1, 0, 1, 1, 0, 32, 8], [6, 0, 32, 3, 0, 32, 1, 8, 2, 1, 0, 1, 1, 0, 32, 8]> {reason = "transpose alignment", zero_fill} : !tilemap.buffer<1x16xf16, tiles = [0, 8], memory = interleaved> -> !tilemap.buffer<2x16xf16, tiles = [0, 8], memory = interleaved>
    %t = tilemap.run "transpose"(%y_r) {m = 2 : i64, n = 16 : i64} : (!tilemap.buffer<2x16xf16, tiles = [0, 8], memory = interleaved>) -> !tilemap.buffer<16x2xf16, tiles = [0, 8], memory = standard>
    tilemap.checkpoint "t" value "t" %t : !tilemap.buffer<16x2xf16, tiles = [0, 8], memory = standard> as tensor<16x8xf16> layout #plan.layout<grid = [8, 1, 1], split = [[1], [0]], align = [16, 2], memory = standard>
    %t_r = tilemap.move %t transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 4, 0, 0, 16, 1, 1, 16, 0, 1, 1, 1, 4, 0, 1], [1, 0, 4, 0, 4, 16, 1, 1, 16, 0, 1, 1, 1, 4, 0, 1], [2, 0, 4, 0, 8, 16, 1, 1, 16, 0, 1, 1, 1, 4, 0, 1], [3, 0, 4, 0, 12, 16, 1, 1, 16, 0, 1, 1, 1, 4, 0, 1]> {reason = "graph.softmax"} : !tilemap.buffer<16x2xf16, tiles = [0, 8], memory = standard> -> !tilemap.buffer<1x8xf16, tiles = [0, 16], memory = standard>
    %s = tilemap.run "softmax_rows"(%t_r) {rows = 1 : i64, cols = 8 : i64, valid = 8 : i64} : (!tilemap.buffer<1x8xf16, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<1x8xf16, tiles = [0, 16], memory = standard>
    tilemap.checkpoint "s" value "s" %s : !tilemap.buffer<1x8xf16, tiles = [0, 16], memory = standard> as tensor<16x8xf16> layout #plan.layout<grid = [16], split = [[0], []], memory = standard>
    tilemap.host_read "output0" %s : !tilemap.buffer<1x8xf16, tiles = [0, 16], memory = standard> as tensor<16x8xf16> layout #plan.layout<grid = [16], split = [[0], []], memory = standard>
    func.return
  }
}

