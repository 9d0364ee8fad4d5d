// RUN: ipu-opt %s -p map-tiles | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %s -p 'map-tiles,schedule-exchange,place-storage,lower-to-tasm' | filecheck %s --check-prefix=TASM
// RUN: ipu-opt %s -p 'map-tiles,schedule-exchange' | filecheck %s --check-prefix=PHASE

// 10 rows over 4 tiles are blocks of 3, the last holding 1: only rows 1 and 2 of a block can be
// padding. Every tile's block holds data in its first row, so the move is zeroed from element 16
// (32 of the 48 elements), and the zero call writes from the block's byte 64 on.
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
func.func @main(%a: !plan.tensor<10x16xf32, #plan.layout<grid = [10], split = [[0], []], memory = standard>>) -> !plan.tensor<10x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> attributes {ipu.inputs = ["a"], ipu.outputs = ["y"]} {
  %r = plan.rearrange %a {reason = "test"} : !plan.tensor<10x16xf32, #plan.layout<grid = [10], split = [[0], []], memory = standard>> -> !plan.tensor<10x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return %r : !plan.tensor<10x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
}
}

// MAP:       %r = tilemap.move %a transfers
// MAP:       {reason = "test", zero_fill, zero_from = 16 : i64} : !tilemap.buffer<1x16xf32, tiles = [0, 10], memory = standard> -> !tilemap.buffer<3x16xf32, tiles = [0, 4], memory = standard>

// PHASE:     exchange.phase %a transfers
// PHASE:     zero_fill, zero_from = 16 : i64} : !tilemap.buffer<1x16xf32, tiles = [0, 10], memory = standard> -> !tilemap.buffer<3x16xf32, tiles = [0, 4], memory = standard>

// TASM:      tasm.program @p0 tiles(0, 4) {
// TASM-NEXT:   tasm.host_in @a
// TASM-NEXT:   tasm.call "zero" out(327872) in(array<i64>) {elements = 32 : i64} : f32 -> f32
// TASM-NEXT:   tasm.sync
// TASM-NEXT:   tasm.exchange @phase0
// TASM:      tasm.stream_out @y : tensor<10x16xf32> {{.*}} at 327808
