// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage' --target sim16 | filecheck %s

func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// Reserved first: the 16 KiB code reserve (0x4C000-0x50000), then the exchange rows, 800 bytes
// (2 phases + 7 words for each of the 28 transfer families the busiest tile takes part in, rounded
// up to 32 bytes), so standard data grows up from 0x50320 (b2 at 0x50320, then x at 0x50340).
// Interleaved data grows down from the loader's limit, 0xE7BB0 (w2 at 0xdfba0, the matmul result
// below it). The gemm lhs %g_r is standard data. Dead buffers' space is reused (%y_stage and %yb
// reuse x's slot, %y reuses g_r's). At the peak the largest free range is 522336 bytes.
// CHECK:      func.func @main()
// CHECK-SAME: exchange.memory = {peak_standard_bytes = 40992 : i64, peak_interleaved_bytes = 49152 : i64, peak_total_bytes = 81952 : i64, maximum_standard_allocation_bytes = 32768 : i64, exchange_row_bytes = 800 : i64, largest_free_bytes_at_peak = 522336 : i64, code_bytes = 16384 : i64}
// CHECK-NEXT: %x = tilemap.host_write "x" {{.*}} {slot = #exchange.slot<0x50340, 8192, standard>}
// CHECK-NEXT: %g = tilemap.run "gelu"(%x) {elements = 4096 : i64} {slot = #exchange.slot<0x52340, 8192, standard>}
// CHECK-NEXT: tilemap.checkpoint "g" value "g" %g : {{[^{]*}}{{$}}
// CHECK-NEXT: %g_r = exchange.phase %g transfers = #table.transfers<[start, {{.*}}]
// CHECK:      ]> {{.*}}slot = #exchange.slot<0x54340, 32768, standard>}
// CHECK-NEXT: %w2 = tilemap.weight "w2" {{.*}} {slot = #exchange.slot<0xdfba0, 32768, interleaved>}
// CHECK-NEXT: %y_partial = tilemap.run "amp_matmul"(%g_r, %w2) {{.*}} {slot = #exchange.slot<0xdbba0, 16384, interleaved>}
// CHECK-NEXT: %y_stage = exchange.phase %y_partial transfers = #table.transfers<[start, {{.*}}]
// CHECK:      ]> {{.*}}slot = #exchange.slot<0x50340, 16384, standard>}
// CHECK-NEXT: %y = tilemap.run "reduce_sum"(%y_stage) {{.*}} {slot = #exchange.slot<0x54340, 2048, standard>}
// CHECK-NEXT: tilemap.checkpoint "y"
// CHECK-NEXT: %b2 = tilemap.weight "b2" {{.*}} {slot = #exchange.slot<0x50320, 32, standard>}
// CHECK-NEXT: %yb = tilemap.run "add"(%y, %b2) {{.*}} {slot = #exchange.slot<0x50340, 2048, standard>}
// CHECK-NEXT: tilemap.checkpoint "yb"
// CHECK-NEXT: tilemap.host_read "output0"
