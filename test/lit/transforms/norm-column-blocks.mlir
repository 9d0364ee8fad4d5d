// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=MAP
// RUN: ipu-run %s --target sim16 --poison | filecheck %s --check-prefix=EMU

// A layer norm of 8 rows of 2048 on 16 tiles: whole rows would leave 8 tiles a row each, so
// the norm runs where the matmul left its result, in whole column blocks (no padding), each
// tile summing its block's statistics; one exchange gathers every block's on the row's tiles.
func.func @main(%x: tensor<8x256xf16>) -> tensor<8x2048xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<256x2048xf16>
  %g = graph.parameter "g" #graph.gaussian<seed = 2, std = 0.5> : tensor<2048xf16>
  %b = graph.parameter "b" #graph.gaussian<seed = 3, std = 0.5> : tensor<2048xf16>
  %h = graph.matmul %x, %w : (tensor<8x256xf16>, tensor<256x2048xf16>) -> tensor<8x2048xf16>
  %n = graph.layer_norm %h, %g, %b : (tensor<8x2048xf16>, tensor<2048xf16>, tensor<2048xf16>) -> tensor<8x2048xf16>
  func.return %n : tensor<8x2048xf16>
}

// The scale and shift are split like the columns, replicated over the rest of the grid.
// CHECK:      %g = plan.parameter "g" {{.*}} : !plan.tensor<2048xf16, #plan.layout<grid = [1, 16, 1], split = {{\[\[}}1]], memory = standard>>
// CHECK:      %n = plan.rowwise "layer_norm" %h, %g, %b {{.*}} : (!plan.tensor<8x2048xf16, #plan.layout<grid = [1, 16, 1], split = {{\[\[}}0], [1]], memory = interleaved>>, {{.*}}) -> !plan.tensor<8x2048xf16, #plan.layout<grid = [1, 16, 1], split = {{\[\[}}0], [1]], memory = interleaved>>

// Each tile: its 8 rows' (sum, squared deviations) over its 128 columns, f32 [1, 8, 2]; the
// move gathers the 16 blocks' on every tile, [16, 8, 2]; then each normalises its block.
// MAP:      %n_stats = tilemap.run "norm_stats"(%h) {rows = 8 : i64, cols = 128 : i64} : (!tilemap.buffer<8x128xf16, tiles = [0, 16], memory = interleaved>) -> !tilemap.buffer<1x8x2xf32, tiles = [0, 16], memory = standard>
// MAP-NEXT: %n_statistics = tilemap.move %n_stats transfers
// MAP:      {reason = "norm statistics"} : !tilemap.buffer<1x8x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<16x8x2xf32, tiles = [0, 16], memory = standard>
// MAP-NEXT: %n = tilemap.run "layer_norm_apply"(%h, %n_statistics, %g, %b) {rows = 8 : i64, cols = 128 : i64, parts = 16 : i64, eps_bits = {{[0-9]+}} : i64}

// EMU: numericalTest=PASS
// EMU: estimatedOverEmulated=1.0000
