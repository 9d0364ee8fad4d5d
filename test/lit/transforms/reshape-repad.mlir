// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILES
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// Reshapes that change an odd last axis (rows stored padded to an even length): each tile re-cuts
// its rows with the `repad` kernel (ONNX Flatten of [3, 4, 5] to [3, 20], Unsqueeze to [60, 1]);
// a reshape that keeps the last axis stays a block copy. A [3, 4, 5] source cut by its leading
// axis alone would sit on 3 tiles: the reshapes to [60, 1] and [12, 5] cut both leading axes (12).
func.func @main(%x: tensor<3x4x5xf32>) -> (tensor<3x20xf32>, tensor<60x1xf32>, tensor<12x5xf32>) {
  %f = graph.reshape %x : tensor<3x4x5xf32> -> tensor<3x20xf32>
  %e = graph.exp %f : tensor<3x20xf32> -> tensor<3x20xf32>
  %u = graph.reshape %x : tensor<3x4x5xf32> -> tensor<60x1xf32>
  %t = graph.tanh %u : tensor<60x1xf32> -> tensor<60x1xf32>
  %c = graph.reshape %x : tensor<3x4x5xf32> -> tensor<12x5xf32>
  %n = graph.neg %c : tensor<12x5xf32> -> tensor<12x5xf32>
  func.return %e, %t, %n : tensor<3x20xf32>, tensor<60x1xf32>, tensor<12x5xf32>
}

// TILES: %f = tilemap.run "repad"(%x) {rows = 4 : i64, cols = 5 : i64, out_rows = 1 : i64, out_cols = 20 : i64} : (!tilemap.buffer<1x4x6xf32, tiles = [0, 3], memory = standard>) -> !tilemap.buffer<1x20xf32, tiles = [0, 3], memory = standard>
// TILES: %u = tilemap.run "repad"(%x_r) {rows = 1 : i64, cols = 5 : i64, out_rows = 5 : i64, out_cols = 1 : i64} : (!tilemap.buffer<1x1x6xf32, tiles = [0, 12], memory = standard>) -> !tilemap.buffer<5x2xf32, tiles = [0, 12], memory = standard>
// TILES: %c = tilemap.run "copy"(%x_r) {elements = 6 : i64}

// EMU: output=output0 samples=60 maximumAbsoluteError=0.000000
// EMU: output=output1 samples=60 maximumAbsoluteError=0.000000
// EMU: output=output2 samples=60 maximumAbsoluteError=0.000000
// EMU: numericalTest=PASS
// EMU: estimatedOverEmulated=1.0000
