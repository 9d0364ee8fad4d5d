// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILE
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// Slices, pads and concatenations of computed tensors are exchanges (plan.window: one move
// each, zero-filled where the window reaches outside its input), never selection matmuls.
func.func @main(%x: tensor<6x2x8xf32>, %y: tensor<6x3x8xf32>) -> (tensor<6x2x4xf32>, tensor<8x2x9xf32>, tensor<6x5x8xf32>) {
  %h = graph.tanh %x : tensor<6x2x8xf32> -> tensor<6x2x8xf32>
  %s = graph.slice %h {starts = array<i64: 0, 0, 3>} : tensor<6x2x8xf32> -> tensor<6x2x4xf32>
  %p = graph.pad %h {low = array<i64: 1, 0, 1>} : tensor<6x2x8xf32> -> tensor<8x2x9xf32>
  %c = graph.concat %h, %y {axis = 1 : i64} : (tensor<6x2x8xf32>, tensor<6x3x8xf32>) -> tensor<6x5x8xf32>
  func.return %s, %p, %c : tensor<6x2x4xf32>, tensor<8x2x9xf32>, tensor<6x5x8xf32>
}

// PLAN: %s = plan.window %h {offsets = array<i64: 0, 0, 3>, value = "s"}
// PLAN: %p = plan.window %h {offsets = array<i64: -1, 0, -1>, value = "p"}
// PLAN: plan.window %h {offsets = array<i64: 0, 0, 0>}
// PLAN: plan.window %y {offsets = array<i64: 0, -2, 0>}
// PLAN: %c = plan.binary "add"
// PLAN-NOT: plan.gemm
// TILE: %s = tilemap.move %h
// TILE: {reason = "window"} : !tilemap.buffer<1x1x8xf32, tiles = [0, 12], memory = standard>
// TILE: %p = tilemap.move %h
// TILE: {reason = "window", zero_fill}
// TILE: %c = tilemap.run "add"
// TILE-NOT: tilemap.run "matmul
// EMU: output=output0 samples=48 maximumAbsoluteError=0.000000
// EMU: output=output1 samples=144 maximumAbsoluteError=0.000000
// EMU: output=output2 samples=240 maximumAbsoluteError=0.000000
// EMU: numericalTest=PASS
