// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage,lower-to-tasm' --target sim16 | filecheck %s --check-prefix=TASM

// Exchanges write only real elements, so a destination layout with padding is zeroed before its
// phase. The matmul lhs (10x20 as 2x20 blocks on tiles [0, 10)) has no padding; the rhs (20x30
// with the 30 columns split in two 16-column blocks, 32 > 30) has.
func.func @main(%x: tensor<10x20xf32>, %w: tensor<20x30xf32>) -> tensor<10x30xf32> {
  %r = graph.relu %x : tensor<10x20xf32> -> tensor<10x20xf32>
  %v = graph.relu %w : tensor<20x30xf32> -> tensor<20x30xf32>
  %y = graph.matmul %r, %v : (tensor<10x20xf32>, tensor<20x30xf32>) -> tensor<10x30xf32>
  func.return %y : tensor<10x30xf32>
}

// MAP:      %r_r = tilemap.move %r transfers = #table.transfers<[src_tile, {{.*}}]
// MAP:      ]> {reason = "graph.matmul"} : !tilemap.buffer<1x20xf32, tiles = [0, 10], memory = standard> -> !tilemap.buffer<2x20xf32, tiles = [0, 10], memory = standard>
// MAP-NEXT: %v_r = tilemap.move %v transfers = #table.transfers<[src_tile, {{.*}}]
// MAP:      ]> {reason = "graph.matmul", zero_fill, zero_from = 14 : i64} : !tilemap.buffer<2x30xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<20x16xf32, tiles = [0, 10], memory = interleaved>
// MAP-NEXT: %y = tilemap.run "amp_matmul"(%r_r, %v_r) {m = 2 : i64, k = 20 : i64, n = 16 : i64}
// MAP-NOT:  zero_fill

// Phase 0 (unpadded) syncs straight away; phase 1 first zeroes the 20 x 16 rhs block from its
// element 14 on (the second block has 14 real columns: the first row's 14 leading elements are
// data on every tile), only in the program of the destination's tiles [0, 10).
// TASM:      tasm.program @p0 tiles(0, 10) {
// TASM:        tasm.call "relu" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}>) {elements = 60 : i64} : f32 -> f32
// TASM-NEXT:   tasm.checkpoint @v
// TASM-NEXT:   tasm.sync
// TASM-NEXT:   tasm.exchange @phase0
// TASM-NEXT:   tasm.call "zero" out({{[0-9]+}}) in(array<i64>) {elements = 306 : i64} : f32 -> f32
// TASM-NEXT:   tasm.sync
// TASM-NEXT:   tasm.exchange @phase1
// TASM-NEXT:   tasm.call "amp_matmul" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}>) {m = 2 : i64, k = 20 : i64, n = 16 : i64} : f32 -> f32
// TASM:      tasm.program @p1 tiles(10, 6) {
// TASM-NOT:    tasm.call "zero"
// TASM:        tasm.exchange @phase1
// TASM-NEXT:   tasm.checkpoint @y
// The rhs broadcast (multicast, 100 members) needs 348 cycles in the best list schedule of its
// two families; CP-SAT finds a non-preemptive multicast schedule at the bound, 320, and proves it.
// TASM:      tasm.phase @phase0 lower_bound 40 horizon 40 scheduler "greedy-longest-first" transfers = #table.transfers<[start, {{.*}}]
// TASM-NEXT: {{^ +\[[-0-9, ]+\],$}}
// TASM-NEXT: {{^ +\[[-0-9, ]+\]>$}}
// TASM-NEXT: tasm.phase @phase1 lower_bound 320 horizon 320 scheduler "cp-sat-optimal" transfers = #table.transfers<[start, {{.*}}]
// TASM-COUNT-19: {{^ +\[[-0-9, ]+\],$}}
// TASM-NEXT: {{^ +\[[-0-9, ]+\]>$}}
