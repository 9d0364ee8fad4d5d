// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage' --target sim16 | filecheck %s

func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// Weights are placed first. Standard data grows up from the end of the 16 KiB code reserve
// (b2 at 0x50000, then x at 0x50020); interleaved data grows down from the top of memory
// (0xE8000: w2 at 0xE0000, the matmul result below it). The gemm lhs %g_r is standard data.
// Dead buffers' space is reused (%y_stage and %yb reuse x's slot, %y reuses g's).
// CHECK:      func.func @main()
// CHECK-SAME: exchange.memory = {peak_standard_bytes = 73760 : i64, peak_interleaved_bytes = 40960 : i64, peak_total_bytes = 106528 : i64, maximum_standard_allocation_bytes = 65536 : i64}
// CHECK-NEXT: %x = tilemap.host_write "x" {{.*}} {slot = #exchange.slot<0x50020, 8192, standard>}
// CHECK-NEXT: %g = tilemap.run "gelu"(%x) {elements = 4096 : i64} {slot = #exchange.slot<0x52020, 8192, standard>}
// CHECK-NEXT: tilemap.checkpoint "g" index 0 op 2 %g : {{[^{]*}}{{$}}
// CHECK-NEXT: %g_r = exchange.phase 0 %g {{.*}}slot = #exchange.slot<0x54020, 65536, standard>}
// CHECK-NEXT: %w2 = tilemap.weight "w2" {{.*}} {slot = #exchange.slot<0xe0000, 32768, interleaved>}
// CHECK-NEXT: %y_partial = tilemap.run "amp_matmul"(%g_r, %w2) {{.*}} {slot = #exchange.slot<0xde000, 8192, interleaved>}
// CHECK-NEXT: %y_stage = exchange.phase 1 %y_partial {{.*}}slot = #exchange.slot<0x50020, 8192, standard>}
// CHECK-NEXT: %y = tilemap.run "reduce_sum"(%y_stage) {{.*}} {slot = #exchange.slot<0x52020, 2048, standard>}
// CHECK-NEXT: tilemap.checkpoint "y"
// CHECK-NEXT: %b2 = tilemap.weight "b2" {{.*}} {slot = #exchange.slot<0x50000, 32, standard>}
// CHECK-NEXT: %yb = tilemap.run "add"(%y, %b2) {{.*}} {slot = #exchange.slot<0x50020, 2048, standard>}
// CHECK-NEXT: tilemap.checkpoint "yb"
// CHECK-NEXT: tilemap.host_read "output0"
