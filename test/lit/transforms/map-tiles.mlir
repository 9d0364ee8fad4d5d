// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s

func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// CHECK-NOT: plan.{{[a-z]+}} %
// CHECK:      func.func @main() attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"], tilemap.mapping = #tilemap.mapping<identity>} {
// CHECK-NEXT: %x = tilemap.host_write "x" : tensor<64x1024xf16> layout #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard> -> !tilemap.buffer<4x1024xf16, tiles = [0, 16], memory = standard>
// CHECK-NEXT: %g = tilemap.run "gelu"(%x) {elements = 4096 : i64} : (!tilemap.buffer<4x1024xf16, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<4x1024xf16, tiles = [0, 16], memory = standard>
// CHECK-NEXT: tilemap.checkpoint "g" value "g" %g : !tilemap.buffer<4x1024xf16, tiles = [0, 16], memory = standard> as tensor<64x1024xf16>
// CHECK-NEXT: %g_r = tilemap.move %g transfers = #table.transfers<[src_tile, {{.*}}]
// CHECK:      ]> {reason = "graph.matmul"} : !tilemap.buffer<4x1024xf16, tiles = [0, 16], memory = standard> -> !tilemap.buffer<64x256xf16, tiles = [0, 16], memory = standard>
// CHECK-NEXT: %w2 = tilemap.weight "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16> layout #plan.layout<grid = [1, 4, 4], split = {{\[\[}}2], [1]], align = [2, 64], memory = interleaved> -> !tilemap.buffer<256x64xf16, tiles = [0, 16], memory = interleaved>
// CHECK-NEXT: %y_partial = tilemap.run "amp_matmul"(%g_r, %w2) {m = 64 : i64, k = 256 : i64, n = 64 : i64} : (!tilemap.buffer<64x256xf16, tiles = [0, 16], memory = standard>, !tilemap.buffer<256x64xf16, tiles = [0, 16], memory = interleaved>) -> !tilemap.buffer<64x64xf32, tiles = [0, 16], memory = interleaved>
// CHECK-NEXT: %y_stage = tilemap.move %y_partial transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
// CHECK-NEXT: [0, 0, 256, 0, 0, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 64, 256, 1, 0, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 128, 256, 2, 0, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 192, 256, 3, 0, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1, 0, 256, 0, 4096, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1, 64, 256, 1, 4096, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1, 128, 256, 2, 4096, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1, 192, 256, 3, 4096, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2, 0, 256, 0, 8192, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2, 64, 256, 1, 8192, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2, 128, 256, 2, 8192, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2, 192, 256, 3, 8192, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3, 0, 256, 0, 12288, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3, 64, 256, 1, 12288, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3, 128, 256, 2, 12288, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3, 192, 256, 3, 12288, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0]> {reason = "reduce"} : !tilemap.buffer<64x64xf32, tiles = [0, 16], memory = interleaved> -> !tilemap.buffer<4x64x16xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT: %y = tilemap.run "reduce_sum"(%y_stage) {parts = 4 : i64, elements = 1024 : i64} : (!tilemap.buffer<4x64x16xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<64x16xf16, tiles = [0, 16], memory = standard>
// CHECK-NEXT: tilemap.checkpoint "y" value "y" %y
// CHECK-NEXT: %b2 = tilemap.weight "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16> layout #plan.layout<grid = [1, 4, 4], split = {{\[\[}}1, 2]], memory = standard> -> !tilemap.buffer<16xf16, tiles = [0, 16], memory = standard>
// CHECK-NEXT: %yb = tilemap.run "add"(%y, %b2) {m = 64 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64}
// CHECK-NEXT: tilemap.checkpoint "yb" value "yb" %yb
// CHECK-NEXT: tilemap.host_read "output0" %yb : !tilemap.buffer<64x16xf16, tiles = [0, 16], memory = standard> as tensor<64x256xf16> layout #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1, 2]], memory = standard>
// CHECK-NEXT: func.return
