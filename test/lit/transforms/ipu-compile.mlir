// RUN: ipu-opt %s --split-input-file -p ipu-compile --target sim16 | filecheck %s

// The full ladder on sim16 in one pass; the same result as running the five passes in turn.
func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// CHECK-NOT:  {{graph|plan|tilemap|exchange}}.
// CHECK:      builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.memory = {peak_standard_bytes = 18560 : i64, peak_interleaved_bytes = 155648 : i64, peak_total_bytes = 172160 : i64, maximum_standard_allocation_bytes = 16384 : i64, exchange_row_bytes = 480 : i64, largest_free_bytes_at_peak = 448832 : i64, code_bytes = 16384 : i64, estimated_cycles = {{[1-9][0-9]*}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64}
// CHECK-NEXT:   tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK-NEXT:     tasm.call "gelu"
// CHECK-NEXT:     tasm.checkpoint @g
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase0
// At the PopLibs ReduceAdd rate (~5.3 B a cycle) K splits four ways, and the search keeps the
// swapped AMP over four 16-token groups, each with its replica of the weight: [16 x 256] by
// [256 x 256] blocks (the transposed product's scratch the third input).
// CHECK-NEXT:     tasm.call "amp_matmul_swapped" out(793504) in(array<i64: 809888, 818080, 328288>) {m = 16 : i64, k = 256 : i64, n = 256 : i64} : f16 -> f32
// CHECK-NEXT:     tasm.sync
// CHECK-NEXT:     tasm.exchange @phase1
// CHECK-NEXT:     tasm.call "reduce_sum" {{.*}} : f32 -> f16
// CHECK-NEXT:     tasm.checkpoint @y
// CHECK-NEXT:     tasm.call "add"
// CHECK-NEXT:     tasm.checkpoint @yb
// CHECK-NEXT:     tasm.host_out @output0
// CHECK-NEXT:   }
// CHECK-NOT:    tasm.program
// CHECK:        tasm.stream_in @x
// CHECK:        tasm.phase @phase0 lower_bound 2048 horizon 2048 scheduler "greedy-shift-mod-4"
// CHECK:        tasm.weight @w2 #graph.gaussian<seed = 3, std = 0.02>
// CHECK:        tasm.phase @phase1 lower_bound 4096 horizon 4096 scheduler "greedy-shift-mod-4"
// CHECK:        tasm.weight @b2 #graph.gaussian<seed = 4, std = 0.02>
// CHECK:        tasm.stream_out @output0 : tensor<64x256xf16>

// -----

// A 4x4 tensor only occupies tiles [0, 8): the tile range is cut at the kernel group's
// boundary, tiles [8, 16) get a program with the same control skeleton and no kernel calls.
func.func @small(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = graph.relu %x : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// CHECK:      tasm.program @p0 tiles(0, 8) {
// CHECK-NEXT:   tasm.host_in @x
// CHECK-NEXT:   tasm.call "relu" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}>) {elements = 2 : i64} : f32 -> f32
// CHECK-NEXT:   tasm.checkpoint @r
// CHECK-NEXT:   tasm.host_out @output0
// CHECK-NEXT: }
// CHECK-NEXT: tasm.program @p1 tiles(8, 8) {
// CHECK-NEXT:   tasm.host_in @x
// CHECK-NEXT:   tasm.checkpoint @r
// CHECK-NEXT:   tasm.host_out @output0
// CHECK-NEXT: }
// CHECK-NEXT: tasm.stream_in @x : tensor<4x4xf32> layout #plan.layout<grid = [4, 2], split = {{\[\[}}0], [1]], memory = standard> at {{[0-9]+}}
// CHECK-NEXT: tasm.checkpoint_def @r value "r" : tensor<4x4xf32>
// CHECK-NEXT: tasm.stream_out @output0 : tensor<4x4xf32>
