// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILES
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A column broadcast, x [R, C] (op) c [R, 1] (ONNX's x - ReduceMax(x, keepdims)): the column is
// gathered as the vector [R], sent to the tiles in the split of x's rows (once for all its
// users), and each tile's binary kernel reads one value per row (b_cols = 1). Rows of an odd
// block are first aligned to even blocks, so the vector's blocks hold the same rows.
func.func @main(%x: tensor<12x5xf32>, %y: tensor<64x32xf16>) -> (tensor<12x5xf32>, tensor<64x32xf16>) {
  %m = graph.reduce %x {kind = "max", axis = 1 : i64} : tensor<12x5xf32> -> tensor<12xf32>
  %mc = graph.reshape %m : tensor<12xf32> -> tensor<12x1xf32>
  %s = graph.sub %x, %mc : (tensor<12x5xf32>, tensor<12x1xf32>) -> tensor<12x5xf32>
  %e = graph.exp %s : tensor<12x5xf32> -> tensor<12x5xf32>
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.5> : tensor<64x1xf16>
  %a = graph.abs %w : tensor<64x1xf16> -> tensor<64x1xf16>
  %d = graph.div %y, %a : (tensor<64x32xf16>, tensor<64x1xf16>) -> tensor<64x32xf16>
  %q = graph.mul %d, %a : (tensor<64x32xf16>, tensor<64x1xf16>) -> tensor<64x32xf16>
  func.return %e, %q : tensor<12x5xf32>, tensor<64x32xf16>
}

// PLAN:      %x_r_2 = plan.rearrange %x {reason = "column broadcast alignment"} {{.*}} -> !plan.tensor<12x5xf32, #plan.layout<grid = [12, 1], split = [[0], [1]], align = [2, 1], memory = standard>>
// PLAN:      %mc_col = plan.reshape %mc_r : !plan.tensor<12x1xf32, {{.*}}> -> !plan.tensor<12xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>
// PLAN-NEXT: %mc_cols = plan.rearrange %mc_col {reason = "column broadcast"} : {{.*}} -> !plan.tensor<12xf32, #plan.layout<grid = [12, 1], split = [[0]], align = [2], memory = standard>>
// PLAN-NEXT: %s = plan.binary "sub" %x_r_2, %mc_cols {value = "s", column}
// PLAN:      %a_cols = plan.rearrange %a_col {reason = "column broadcast"}
// PLAN-NEXT: %d = plan.binary "div" %y, %a_cols {value = "d", column}
// PLAN-NEXT: %q = plan.binary "mul" %d, %a_cols {value = "q", column}

// TILES: %s = tilemap.run "sub"(%x_r_2, %mc_cols) {m = 2 : i64, n = 6 : i64, b_rows = 2 : i64, b_cols = 1 : i64}
// TILES: %d = tilemap.run "div"(%y, %a_cols) {m = 4 : i64, n = 32 : i64, b_rows = 4 : i64, b_cols = 1 : i64}

// EMU: output=output0 samples=60 maximumAbsoluteError=0.000000
// EMU: output=output1 samples=2048 maximumAbsoluteError=0.000000
// EMU: numericalTest=PASS
