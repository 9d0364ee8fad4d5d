// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s

// Patterns that build more than one op, from graph input (plan.repeat and plan.gemm_serial have
// no parseable plan level yet).

// MapRepeat / MapYield: the body is mapped in place, once; the carried buffers are the block
// arguments. Checkpoints are numbered in program order: the body's first, then the repeat's.
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a, %b = graph.repeat 2 iter(%c1 = %x, %c2 = %y) : (tensor<4x8xf32>, tensor<4x8xf32>) {
    %t = graph.exp %c1 : tensor<4x8xf32> -> tensor<4x8xf32>
    graph.yield %t, %c1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK:      %y = tilemap.host_write "y" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard> -> [[B:!tilemap.buffer<1x2xf32, tiles = .0, 16., memory = standard>]]
// CHECK-NEXT: %a, %b = tilemap.repeat 2 iter(%c1 = %x, %c2 = %y) : ([[B]], [[B]]) {
// CHECK-NEXT:   %t = tilemap.run "exp"(%c1) {elements = 2 : i64} : ([[B]]) -> [[B]]
// CHECK-NEXT:   tilemap.checkpoint "t" value "t" %t
// CHECK-NEXT:   tilemap.yield %t, %c1 : [[B]], [[B]]
// CHECK-NEXT: }
// CHECK-NEXT: tilemap.checkpoint "a" value "a" %a
// CHECK-NEXT: tilemap.host_read "output0" %a
// CHECK-NEXT: tilemap.host_read "output1" %b
// CHECK-NEXT: func.return

// -----

// MapSerialGemm: a weight too large for one step is contracted in three windows: per window move
// both operand windows in; the first window's AMP writes the fp32 accumulator (no zero fill), the
// later ones accumulate in place (operand 2); then copy the accumulator out; only the result is
// checkpointed.
// CHECK-NOT:  tilemap.run "zero"
func.func @main(%x: tensor<256x1024xf16>) -> tensor<256x1024xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 3, std = 0.03> : tensor<1024x1024xf16>
  %y = graph.matmul %x, %w : (tensor<256x1024xf16>, tensor<1024x1024xf16>) -> tensor<256x1024xf16>
  func.return %y : tensor<256x1024xf16>
}

// CHECK:      %y_a0 = tilemap.move %x transfers = #table.transfers<[src_tile, {{.*}}
// CHECK:      {{^ +\[.*\]}}> {reason = "gemm window"} : {{.*}} -> !tilemap.buffer<256x342xf16, tiles = [0, 16], memory = standard>
// CHECK-NEXT: %y_b0 = tilemap.move %w transfers = #table.transfers<[src_tile, {{.*}}
// CHECK:      {{^ +\[.*\]}}> {reason = "gemm window"} : {{.*}} -> !tilemap.buffer<342x64xf16, tiles = [0, 16], memory = interleaved>
// CHECK-NEXT: %y_acc = tilemap.run "amp_matmul"(%y_a0, %y_b0) {m = 256 : i64, k = 342 : i64, n = 64 : i64} : {{.*}} -> !tilemap.buffer<256x64xf32, tiles = [0, 16], memory = interleaved>
// CHECK-NEXT: %y_a342 = tilemap.move %x
// CHECK:      {{^ +\[.*\]}}> {reason = "gemm window"}
// CHECK-NEXT: %y_b342 = tilemap.move %w
// CHECK:      {{^ +\[.*\]}}> {reason = "gemm window"}
// CHECK-NEXT: %y_acc_1 = tilemap.run "amp_matmul_acc"(%y_a342, %y_b342, %y_acc) {m = 256 : i64, k = 342 : i64, n = 64 : i64} {inplace = 2 : i64}
// CHECK-NEXT: %y_a684 = tilemap.move %x
// CHECK:      {{^ +\[.*\]}}> {reason = "gemm window"}
// CHECK-NEXT: %y_b684 = tilemap.move %w
// CHECK:      {{^ +\[.*\]}}> {reason = "gemm window"}
// CHECK-NEXT: %y_acc_2 = tilemap.run "amp_matmul_acc"(%y_a684, %y_b684, %y_acc_1) {m = 256 : i64, k = 340 : i64, n = 64 : i64} {inplace = 2 : i64}
// CHECK-NEXT: %y = tilemap.run "copy"(%y_acc_2) {elements = 16384 : i64} : (!tilemap.buffer<256x64xf32, tiles = [0, 16], memory = interleaved>) -> !tilemap.buffer<256x64xf16, tiles = [0, 16], memory = standard>
// CHECK-NEXT: tilemap.checkpoint "y" value "y" %y
// CHECK-NEXT: tilemap.host_read "output0" %y
