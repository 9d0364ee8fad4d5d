// RUN: ipu-opt %s | filecheck %s --check-prefix=GRAPH
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILES
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage,lower-to-tasm' --target sim16 | filecheck %s --check-prefix=TASM
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// graph.cumsum down the ladder: a plan.rowwise "cumsum" over whole rows (flags on the op), the
// cumsum_rows kernel with flags 1 = exclusive, 2 = reverse, for f16 and for i32 (position ids).
func.func @main(%x: tensor<8x32xf16>, %m: tensor<8x32xi32>) -> (tensor<8x32xf16>, tensor<8x32xi32>) {
  %y = graph.cumsum %x {exclusive, reverse} : tensor<8x32xf16> -> tensor<8x32xf16>
  %p = graph.cumsum %m : tensor<8x32xi32> -> tensor<8x32xi32>
  func.return %y, %p : tensor<8x32xf16>, tensor<8x32xi32>
}

// GRAPH:      %y = graph.cumsum %x {exclusive, reverse} : tensor<8x32xf16> -> tensor<8x32xf16>
// GRAPH-NEXT: %p = graph.cumsum %m : tensor<8x32xi32> -> tensor<8x32xi32>

// PLAN:      %y = plan.rowwise "cumsum" %x_r {value = "y", exclusive, reverse} : (!plan.tensor<8x32xf16, [[L:#plan.layout<.*>]]>) -> !plan.tensor<8x32xf16, [[L]]>
// PLAN:      %p = plan.rowwise "cumsum" %{{[a-z_]+}} {value = "p"} : (!plan.tensor<8x32xi32, {{.*}}>) -> !plan.tensor<8x32xi32,

// TILES:      tilemap.run "cumsum_rows"({{.*}}) {rows = {{[0-9]+}} : i64, cols = 32 : i64, valid = 32 : i64, flags = 3 : i64} : (!tilemap.buffer<{{.*}}xf16
// TILES:      tilemap.run "cumsum_rows"({{.*}}) {rows = {{[0-9]+}} : i64, cols = 32 : i64, valid = 32 : i64, flags = 0 : i64} : (!tilemap.buffer<{{.*}}xi32

// TASM:      tasm.call "cumsum_rows" {{.*}} flags = 3 : i64} : f16 -> f16
// TASM:      tasm.call "cumsum_rows" {{.*}} flags = 0 : i64} : i32 -> i32

// EMU: numericalTest=PASS
