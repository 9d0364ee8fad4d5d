// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILE
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// Patch extraction (a ViT patch embedding's im2col): a rank-5 permutation that keeps the last
// axis last is one plan.permute, one exchange of whole rows, no kernel. (The [3, 32, 32] input
// reshaped to [3, 4, 8, 4, 8] is cut by its two leading axes: 12 tiles, not 3.)
func.func @main(%x: tensor<3x32x32xf32>) -> tensor<16x192xf32> {
  %a = graph.reshape %x : tensor<3x32x32xf32> -> tensor<3x4x8x4x8xf32>
  %t = graph.transpose %a {perm = array<i64: 1, 3, 0, 2, 4>} : tensor<3x4x8x4x8xf32> -> tensor<4x4x3x8x8xf32>
  %p = graph.reshape %t : tensor<4x4x3x8x8xf32> -> tensor<16x192xf32>
  func.return %p : tensor<16x192xf32>
}

// PLAN: %t = plan.permute %a {perm = array<i64: 1, 3, 0, 2, 4>, value = "t"} : !plan.tensor<3x4x8x4x8xf32, #plan.layout<grid = [3, 4], split = [[0], [1], [], [], []], memory = standard>> -> !plan.tensor<4x4x3x8x8xf32, #plan.layout<grid = [4, 4], split = [[0], [1], [], [], []], memory = standard>>
// TILE: %t = tilemap.move
// TILE: {reason = "permute"} : !tilemap.buffer<1x1x8x4x8xf32, tiles = [0, 12], memory = standard> -> !tilemap.buffer<1x1x3x8x8xf32, tiles = [0, 16], memory = standard>
// TILE-NOT: tilemap.run "transpose"
// EMU: output=output0 samples=3072 maximumAbsoluteError=0.000000
// EMU: numericalTest=PASS
