// RUN: ipu-opt %s --split-input-file -p lower-to-tasm --target sim16 | filecheck %s

// One placed exchange-level function per case, slots written by hand (0x50000 = 327680,
// 0x50020 = 327712, 0x50040 = 327744, 0x50060 = 327776), through lower-to-tasm's patterns.

// Values and kernels: a host write is a host_in in every program plus a stream binding, a weight
// only a binding, a run one call in the programs of its group, a checkpoint a checkpoint in every
// program plus its binding, a host read a host_out plus a binding; an alloc runs no code. Groups
// [0, 8) and [4, 16) cut the 16 tiles into three programs, each with the same control skeleton.
func.func @main() attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"], tilemap.mapping = #tilemap.mapping<identity>, exchange.memory = {peak_total_bytes = 112 : i64}} {
  %x = tilemap.host_write "x" : tensor<8x8xf32> layout #plan.layout<grid = [8, 1], split = [[0], [1]], memory = standard> {slot = #exchange.slot<0x50000, 32, standard>} -> !tilemap.buffer<1x8xf32, tiles = [0, 8], memory = standard>
  %w = tilemap.weight "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<8xf32> layout #plan.layout<grid = [8, 1], split = [[]], memory = standard> {slot = #exchange.slot<0x50020, 32, standard>} -> !tilemap.buffer<8xf32, tiles = [0, 8], memory = standard>
  %g = tilemap.run "gelu"(%x) {elements = 8 : i64} {slot = #exchange.slot<0x50040, 32, standard>} : (!tilemap.buffer<1x8xf32, tiles = [0, 8], memory = standard>) -> !tilemap.buffer<1x8xf32, tiles = [0, 8], memory = standard>
  tilemap.checkpoint "g" value "g" %g : !tilemap.buffer<1x8xf32, tiles = [0, 8], memory = standard> as tensor<8x8xf32> layout #plan.layout<grid = [8, 1], split = [[0], [1]], memory = standard>
  %y = tilemap.run "add"(%g, %w) {m = 1 : i64, n = 8 : i64, b_rows = 1 : i64, b_cols = 8 : i64} {slot = #exchange.slot<0x50000, 32, standard>} : (!tilemap.buffer<1x8xf32, tiles = [0, 8], memory = standard>, !tilemap.buffer<8xf32, tiles = [0, 8], memory = standard>) -> !tilemap.buffer<1x8xf32, tiles = [0, 8], memory = standard>
  %s = tilemap.alloc {slot = #exchange.slot<0x50060, 16, standard>} : !tilemap.buffer<4xf32, tiles = [4, 12], memory = standard>
  %z = tilemap.run "zero"() {elements = 4 : i64} {slot = #exchange.slot<0x50060, 16, standard>} : () -> !tilemap.buffer<4xf32, tiles = [4, 12], memory = standard>
  tilemap.host_read "output0" %y : !tilemap.buffer<1x8xf32, tiles = [0, 8], memory = standard> as tensor<8x8xf32> layout #plan.layout<grid = [8, 1], split = [[0], [1]], memory = standard>
  func.return
}

// CHECK:      builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.memory = {peak_total_bytes = 112 : i64, estimated_cycles = {{[0-9]+}} : i64, estimated_exchange_cycles = 0 : i64}} {
// CHECK-NEXT:   tasm.program @p0 tiles(0, 4) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK-NEXT:     tasm.call "gelu" out(327744) in(array<i64: 327680>) {elements = 8 : i64} : f32 -> f32
// CHECK-NEXT:     tasm.checkpoint @g
// CHECK-NEXT:     tasm.call "add" out(327680) in(array<i64: 327744, 327712>) {m = 1 : i64, n = 8 : i64, b_rows = 1 : i64, b_cols = 8 : i64} : f32 -> f32
// CHECK-NEXT:     tasm.host_out @output0
// CHECK-NEXT:   }
// CHECK-NEXT:   tasm.program @p1 tiles(4, 4) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK-NEXT:     tasm.call "gelu"
// CHECK-NEXT:     tasm.checkpoint @g
// CHECK-NEXT:     tasm.call "add"
// CHECK-NEXT:     tasm.call "zero" out(327776) in(array<i64>) {elements = 4 : i64} : f32 -> f32
// CHECK-NEXT:     tasm.host_out @output0
// CHECK-NEXT:   }
// CHECK-NEXT:   tasm.program @p2 tiles(8, 8) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK-NEXT:     tasm.checkpoint @g
// CHECK-NEXT:     tasm.call "zero" out(327776) in(array<i64>) {elements = 4 : i64} : f32 -> f32
// CHECK-NEXT:     tasm.host_out @output0
// CHECK-NEXT:   }
// CHECK-NEXT:   tasm.stream_in @x : tensor<8x8xf32> layout #plan.layout<grid = [8, 1], split = {{\[\[}}0], [1]], memory = standard> at 327680
// CHECK-NEXT:   tasm.weight @w #graph.gaussian<seed = 1, std = 0.1> : tensor<8xf32> layout #plan.layout<grid = [8, 1], split = {{\[\[}}]], memory = standard> at 327712
// CHECK-NEXT:   tasm.checkpoint_def @g value "g" : tensor<8x8xf32> layout #plan.layout<grid = [8, 1], split = {{\[\[}}0], [1]], memory = standard> at 327744
// CHECK-NEXT:   tasm.stream_out @output0 : tensor<8x8xf32> layout #plan.layout<grid = [8, 1], split = {{\[\[}}0], [1]], memory = standard> at 327680
// CHECK-NEXT: }

// -----

// An in-place run (operand 2 is overwritten): its slot is the output and not an input.
func.func @main() attributes {ipu.inputs = ["a"], ipu.outputs = ["output0"], tilemap.mapping = #tilemap.mapping<identity>, exchange.memory = {peak_total_bytes = 512 : i64}} {
  %acc = tilemap.run "zero"() {elements = 64 : i64} {slot = #exchange.slot<0xe7a20, 256, interleaved>} : () -> !tilemap.buffer<8x8xf32, tiles = [0, 16], memory = interleaved>
  %a = tilemap.host_write "a" : tensor<128x8xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> {slot = #exchange.slot<0x50000, 128, standard>} -> !tilemap.buffer<8x8xf16, tiles = [0, 16], memory = standard>
  %b = tilemap.weight "b" #graph.gaussian<seed = 2, std = 0.1> : tensor<8x8xf16> layout #plan.layout<grid = [16, 1], split = [[], []], memory = interleaved> {slot = #exchange.slot<0xe7b20, 128, interleaved>} -> !tilemap.buffer<8x8xf16, tiles = [0, 16], memory = interleaved>
  %acc_1 = tilemap.run "amp_matmul_acc"(%a, %b, %acc) {m = 8 : i64, k = 8 : i64, n = 8 : i64} {inplace = 2 : i64, slot = #exchange.slot<0xe7a20, 256, interleaved>} : (!tilemap.buffer<8x8xf16, tiles = [0, 16], memory = standard>, !tilemap.buffer<8x8xf16, tiles = [0, 16], memory = interleaved>, !tilemap.buffer<8x8xf32, tiles = [0, 16], memory = interleaved>) -> !tilemap.buffer<8x8xf32, tiles = [0, 16], memory = interleaved>
  tilemap.host_read "output0" %acc_1 : !tilemap.buffer<8x8xf32, tiles = [0, 16], memory = interleaved> as tensor<128x8xf32> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = interleaved>
  func.return
}

// CHECK:      tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:   tasm.call "zero" out(948768) in(array<i64>) {elements = 64 : i64} : f32 -> f32
// CHECK-NEXT:   tasm.host_in @a
// CHECK-NEXT:   tasm.call "amp_matmul_acc" out(948768) in(array<i64: 327680, 949024>) {m = 8 : i64, k = 8 : i64, n = 8 : i64} : f16 -> f32
// CHECK-NEXT:   tasm.host_out @output0
// CHECK-NEXT: }

// -----

// A repeat is a loop: the initial values are copied into the carried slots before it, and each
// yield copies the next values in as a parallel copy (here c2 <- c1 must read c1's slot before
// c1 <- t overwrites it). The body's checkpoint keeps its number inside the loop.
func.func @main() attributes {ipu.inputs = ["x", "y"], ipu.outputs = ["output0", "output1"], tilemap.mapping = #tilemap.mapping<identity>, exchange.memory = {peak_total_bytes = 128 : i64}} {
  %x = tilemap.host_write "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> {slot = #exchange.slot<0x50000, 32, standard>} -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  %y = tilemap.host_write "y" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> {slot = #exchange.slot<0x50020, 32, standard>} -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  %a, %b = tilemap.repeat 2 iter(%c1 = %x, %c2 = %y) : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>, !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
    %t = tilemap.run "exp"(%c1) {elements = 2 : i64} {slot = #exchange.slot<0x50000, 32, standard>} : (!tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
    tilemap.checkpoint "t" value "t" %t : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> as tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>
    tilemap.yield %t, %c1 : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>, !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
  } {carried_slots = [#exchange.slot<0x50040, 32, standard>, #exchange.slot<0x50060, 32, standard>]}
  tilemap.checkpoint "a" value "a" %a : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> as tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>
  tilemap.host_read "output0" %a : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> as tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>
  tilemap.host_read "output1" %b : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> as tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>
  func.return
}

// CHECK:      tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:   tasm.host_in @x
// CHECK-NEXT:   tasm.host_in @y
// CHECK-NEXT:   tasm.call "copy" out(327744) in(array<i64: 327680>) {elements = 2 : i64} : f32 -> f32
// CHECK-NEXT:   tasm.call "copy" out(327776) in(array<i64: 327712>) {elements = 2 : i64} : f32 -> f32
// CHECK-NEXT:   tasm.loop 2 {
// CHECK-NEXT:     tasm.call "exp" out(327680) in(array<i64: 327744>) {elements = 2 : i64} : f32 -> f32
// CHECK-NEXT:     tasm.checkpoint @t
// CHECK-NEXT:     tasm.call "copy" out(327776) in(array<i64: 327744>) {elements = 2 : i64} : f32 -> f32
// CHECK-NEXT:     tasm.call "copy" out(327744) in(array<i64: 327680>) {elements = 2 : i64} : f32 -> f32
// CHECK-NEXT:   }
// CHECK-NEXT:   tasm.checkpoint @a
// CHECK-NEXT:   tasm.host_out @output0
// CHECK-NEXT:   tasm.host_out @output1
// CHECK-NEXT: }
// CHECK-NEXT: tasm.stream_in @x : tensor<4x8xf32> {{.*}} at 327680
// CHECK-NEXT: tasm.stream_in @y : tensor<4x8xf32> {{.*}} at 327712
// CHECK-NEXT: tasm.checkpoint_def @t value "t" : tensor<4x8xf32> {{.*}} at 327680
// CHECK-NEXT: tasm.checkpoint_def @a value "a" : tensor<4x8xf32> {{.*}} at 327744
// CHECK-NEXT: tasm.stream_out @output0 : tensor<4x8xf32> {{.*}} at 327744
// CHECK-NEXT: tasm.stream_out @output1 : tensor<4x8xf32> {{.*}} at 327776
