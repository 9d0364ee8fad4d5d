// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=MAP
// RUN: ipu-run %s --target sim16 --poison --checked | filecheck %s --check-prefix=EMU

// A layer norm of 8 rows of 2040 on 16 tiles: the matmul leaves its result in column blocks of
// 128, the last holding 120 real columns and 8 of padding (which holds anything). The norm runs
// there rather than moving the rows: each tile counts only its own real columns, read from a
// weight of every block's count, and the apply weighs each block's statistics by its count.
func.func @main(%x: tensor<8x256xf16>) -> tensor<8x2040xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<256x2040xf16>
  %g = graph.parameter "g" #graph.gaussian<seed = 2, std = 0.5> : tensor<2040xf16>
  %b = graph.parameter "b" #graph.gaussian<seed = 3, std = 0.5> : tensor<2040xf16>
  %h = graph.matmul %x, %w : (tensor<8x256xf16>, tensor<256x2040xf16>) -> tensor<8x2040xf16>
  %n = graph.layer_norm %h, %g, %b : (tensor<8x2040xf16>, tensor<2040xf16>, tensor<2040xf16>) -> tensor<8x2040xf16>
  func.return %n : tensor<8x2040xf16>
}

// CHECK:      %n = plan.rowwise "layer_norm" %h, %g, %b {{.*}} : (!plan.tensor<8x2040xf16, #plan.layout<grid = [1, 16, 1], split = {{\[\[}}0], [1]], memory = interleaved>>, {{.*}}) -> !plan.tensor<8x2040xf16, #plan.layout<grid = [1, 16, 1], split = {{\[\[}}0], [1]], memory = interleaved>>

// The counts: a row [count, 0] a tile (the last axis stays even), 128 on tiles 0-14, 120 on 15.
// MAP:      %n_columns = tilemap.weight "n_columns" dense<{{\[\[}}1.280000e+02, 0.000000e+00], [1.280000e+02, 0.000000e+00],
// MAP-SAME: [1.280000e+02, 0.000000e+00], [1.200000e+02, 0.000000e+00]]> : tensor<16x2xf32>
// MAP-SAME: layout #plan.layout<grid = [1, 16, 1], split = {{\[\[}}1], []], memory = standard> -> !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>
// MAP-NEXT: %n_stats = tilemap.run "norm_stats_valid"(%h, %n_columns) {rows = 8 : i64, cols = 128 : i64}
// MAP-NEXT: %n_statistics = tilemap.move %n_stats transfers
// MAP:      %n = tilemap.run "layer_norm_apply_padded"(%h, %n_statistics, %g, %b) {rows = 8 : i64, cols = 128 : i64, parts = 16 : i64, eps_bits = {{[0-9]+}} : i64, columns = 2040 : i64}

// EMU: numericalTest=PASS
// EMU: estimatedOverEmulated=1.0000
