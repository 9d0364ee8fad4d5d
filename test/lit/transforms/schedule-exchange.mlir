// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange' --target sim16 | filecheck %s

func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// Every tilemap.move becomes an exchange.phase with a start column prepended. At the PopLibs
// ReduceAdd rate (~5.3 B a cycle) the GEMM splits K four ways: four partials staged per tile.
// CHECK-NOT: tilemap.move
// CHECK:      %g = tilemap.run "gelu"
// CHECK:      %g_r = exchange.phase %g transfers = #table.transfers<[start, src_tile, {{.*}}]
// CHECK:      ]> {lower_bound = 8192 : i64, horizon = 8192 : i64, scheduler = "exact-preemptive-grouped", logical_transfers = 256 : i64, route_cycles = 120 : i64, reason = "graph.matmul"}
// CHECK-SAME: : !tilemap.buffer<4x1024xf16, tiles = [0, 16], memory = standard> -> !tilemap.buffer<64x256xf16, tiles = [0, 16], memory = standard>
// CHECK:      %y_partial = tilemap.run "amp_matmul"(%g_r, %w2)
// CHECK-NEXT: %y_stage = exchange.phase %y_partial transfers = #table.transfers<[start, src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step]
// CHECK-NEXT: [0, 0, 0, 256, 0, 0, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 0, 64, 256, 1, 0, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2048, 0, 128, 256, 2, 0, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3072, 0, 192, 256, 3, 0, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3072, 1, 0, 256, 0, 4096, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 1, 64, 256, 1, 4096, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 1, 128, 256, 2, 4096, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2048, 1, 192, 256, 3, 4096, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2048, 2, 0, 256, 0, 8192, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3072, 2, 64, 256, 1, 8192, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 2, 128, 256, 2, 8192, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 2, 192, 256, 3, 8192, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1024, 3, 0, 256, 0, 12288, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [2048, 3, 64, 256, 1, 12288, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [3072, 3, 128, 256, 2, 12288, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 3, 192, 256, 3, 12288, 64, 64, 16, 4, 4, 4, 1, 1, 0, 0, 0]>
// CHECK-SAME: {lower_bound = 4096 : i64, horizon = 4096 : i64, scheduler = "greedy-shift-mod-4", logical_transfers = 64 : i64, route_cycles = 108 : i64, reason = "reduce"}
// CHECK-NEXT: %y = tilemap.run "reduce_sum"(%y_stage)
// CHECK-NOT: exchange.phase
// CHECK: func.return
