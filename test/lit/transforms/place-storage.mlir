// RUN: ipu-opt %s -p plan-ops,map-tiles,schedule-exchange,place-storage --target sim16 | filecheck %s

func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// Weights are placed first (b2 at the start of standard memory after the 16 KiB code reserve,
// w2 at the start of the interleaved region); dead buffers' space is reused.
// CHECK:      func.func @main()
// CHECK-SAME: exchange.memory = {peak_standard_bytes = 16416 : i64, peak_interleaved_bytes = 106496 : i64, peak_total_bytes = 106528 : i64, maximum_standard_allocation_bytes = 8192 : i64}
// CHECK-NEXT: %x = tilemap.host_write "x" {{.*}} {slot = #exchange.slot<0x50020, 8192, standard>}
// CHECK-NEXT: %g = tilemap.run "gelu"(%x) {elements = 4096 : i64} {slot = #exchange.slot<0x52020, 8192, standard>}
// CHECK-NEXT: tilemap.checkpoint "g" index 0 op 2 %g : {{[^{]*}}{{$}}
// CHECK-NEXT: %g_r = exchange.phase 0 %g {{.*}}slot = #exchange.slot<0x88000, 65536, interleaved>}
// CHECK-NEXT: %w2 = tilemap.weight "w2" {{.*}} {slot = #exchange.slot<0x80000, 32768, interleaved>}
// CHECK-NEXT: %y_partial = tilemap.run "amp_matmul"(%g_r, %w2) {{.*}} {slot = #exchange.slot<0x98000, 8192, interleaved>}
// CHECK-NEXT: %y_stage = exchange.phase 1 %y_partial {{.*}}slot = #exchange.slot<0x50020, 8192, standard>}
// CHECK-NEXT: %y = tilemap.run "reduce_sum"(%y_stage) {{.*}} {slot = #exchange.slot<0x52020, 2048, standard>}
// CHECK-NEXT: tilemap.checkpoint "y"
// CHECK-NEXT: %b2 = tilemap.weight "b2" {{.*}} {slot = #exchange.slot<0x50000, 32, standard>}
// CHECK-NEXT: %yb = tilemap.run "add"(%y, %b2) {{.*}} {slot = #exchange.slot<0x50020, 2048, standard>}
// CHECK-NEXT: tilemap.checkpoint "yb"
// CHECK-NEXT: tilemap.host_read "output0"
