// RUN: ipu-opt %s --split-input-file --verify-diagnostics -p lower-to-tasm --target sim16 | filecheck %s
// RUN: not ipu-opt %examples/mlp_small.mlir -p 'plan-ops{target=sim16 finalists=1},map-tiles,place-storage,lower-to-tasm' --target sim16 2>&1 | filecheck %s --check-prefix=MOVE

// A kernel group that is no union of the target's programs (tiles [8, 24) on a 16-tile target)
// is refused rather than run on a subset of its tiles.
func.func @main() attributes {ipu.inputs = [], ipu.outputs = [], tilemap.mapping = #tilemap.mapping<identity>, exchange.memory = {peak_total_bytes = 16 : i64}} {
  %z = tilemap.run "zero"() {elements = 4 : i64} {slot = #exchange.slot<0x50000, 16, standard>} : () -> !tilemap.buffer<4xf32, tiles = [8, 16], memory = standard>
  func.return
}

// CHECK: lower-to-tasm: tiles [8, 24) of a call are not a union of programs

// -----

// A repeat that yields its carried values swapped needs a temporary buffer for the parallel copy.
func.func @main() attributes {ipu.inputs = ["x", "y"], ipu.outputs = ["output0"], tilemap.mapping = #tilemap.mapping<identity>, exchange.memory = {peak_total_bytes = 128 : i64}} {
  %x = tilemap.host_write "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> {slot = #exchange.slot<0x50000, 32, standard>} -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  %y = tilemap.host_write "y" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> {slot = #exchange.slot<0x50020, 32, standard>} -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  %a, %b = tilemap.repeat 2 iter(%c1 = %x, %c2 = %y) : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>, !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
    tilemap.yield %c2, %c1 : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>, !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  } {carried_slots = [#exchange.slot<0x50040, 32, standard>, #exchange.slot<0x50060, 32, standard>]}
  tilemap.host_read "output0" %a : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> as tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>
  func.return
}

// CHECK: lower-to-tasm: a repeat passes its carried values around in a cycle (e.g. yields them swapped); that needs a temporary buffer, which is not supported yet
// CHECK: "tilemap.yield"

// -----

// A value without a storage slot (place-storage did not run, or skipped it).
func.func @main() attributes {ipu.inputs = ["x"], ipu.outputs = [], tilemap.mapping = #tilemap.mapping<identity>, exchange.memory = {peak_total_bytes = 32 : i64}} {
  %x = tilemap.host_write "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  func.return
}

// CHECK: value %x has no storage slot; run place-storage first

// Without schedule-exchange the function still holds logical moves, which no pattern lowers.
// MOVE-NOT: Traceback
// MOVE:     error: lower-to-tasm: unexpected operation tilemap.move
