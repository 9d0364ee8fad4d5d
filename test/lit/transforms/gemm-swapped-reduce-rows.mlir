// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | ipu-opt | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=MAP
// RUN: ipu-run %s --target sim16 --check all | filecheck %s --check-prefix=EMU

// A swapped K split reduces its partials by rows: [64 x 1024] x [1024 x 200] pinned swapped on
// 1 x 4 x 4 (four 50-column weight blocks, four K parts). By column shares each of the 4 column
// blocks would have to hold 4 shares of whole words (56 columns); the swapped AMP takes the
// weight's columns as its rows one at a time, so the grid reduces by rows instead: each of a
// block's 4 tiles sums 16 whole rows of [64 x 50], and the weight's blocks are [256 x 50].
func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x200xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x200xf16>
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm, grid = [1, 4, 4], orientation = swapped>}
    : (tensor<64x1024xf16>, tensor<1024x200xf16>) -> tensor<64x200xf16>
  func.return %y : tensor<64x200xf16>
}

// PLAN:      %w = plan.parameter "w" {{.*}} : !plan.tensor<1024x200xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}2], [1]], align = [2, 2], memory = interleaved>>
// PLAN:      %y_partial = plan.gemm %x, %w {swapped} : {{.*}} -> !plan.tensor<64x200xf32, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1]], partial = 2, align = [1, 2], memory = interleaved>>
// PLAN-NEXT: %y = plan.reduce %y_partial {value = "y"} : {{.*}} -> !plan.tensor<64x200xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0, 2], [1]], memory = standard>>

// MAP:      tilemap.run "amp_matmul_swapped"({{.*}}) {m = 64 : i64, k = 256 : i64, n = 50 : i64}
// MAP:      %y_stage = tilemap.move %y_partial
// MAP:      {reason = "reduce"} : !tilemap.buffer<64x50xf32, tiles = [0, 16], memory = interleaved> -> !tilemap.buffer<4x16x50xf32, tiles = [0, 16], memory = standard>
// MAP-NEXT: %y = tilemap.run "reduce_sum"(%y_stage) {parts = 4 : i64, elements = 800 : i64}

// EMU: numericalTest=PASS
