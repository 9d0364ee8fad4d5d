// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The last axis is split over the grid, so no tile holds a whole row.
func.func @f(%x: !plan.tensor<16x32xf32, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>) {
  %s = plan.rowwise "softmax" %x : (!plan.tensor<16x32xf32, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>) -> !plan.tensor<16x32xf32, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.rowwise: every tile must hold whole rows (last axis unsplit)

// -----

func.func @f(%x: !plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) {
  %s = plan.rowwise "logsumexp" %x : (!plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.rowwise: unknown kind 'logsumexp'

// -----

func.func @f(%x: !plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) {
  %s = plan.rowwise "sum" %x : (!plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<32xf32, #plan.layout<grid = [4], split = [[0]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.rowwise: a row reduction drops the last axis and keeps the split

// -----

func.func @f(%x: !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>, %g: !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[]], memory = standard>>) {
  %n = plan.rowwise "layer_norm" %x, %g : (!plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>, !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[]], memory = standard>>) -> !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.rowwise: layer_norm takes 2 parameter vectors

// -----

// The norm scale is split over the grid instead of replicated.
func.func @f(%x: !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>, %g: !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[0]], memory = standard>>) {
  %n = plan.rowwise "rms_norm" %x, %g : (!plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>, !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[0]], memory = standard>>) -> !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.rowwise: parameter vectors must be split like the rows' columns (whole when the rows are) and replicated over the rest of the grid

// -----

// A cast is in place: it cannot move rows from grid dimension 0 to 1.
func.func @f(%x: !plan.tensor<16x32xf16, #plan.layout<grid = [2, 2], split = [[0], []], memory = standard>>) {
  %c = plan.cast %x : !plan.tensor<16x32xf16, #plan.layout<grid = [2, 2], split = [[0], []], memory = standard>> -> !plan.tensor<16x32xf32, #plan.layout<grid = [2, 2], split = [[1], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.cast: the layout must not change

// -----

func.func @f(%x: !plan.tensor<16x32xf32, #plan.layout<grid = [2, 2], split = [[0], []], partial = 1, memory = standard>>) {
  %c = plan.cast %x : !plan.tensor<16x32xf32, #plan.layout<grid = [2, 2], split = [[0], []], partial = 1, memory = standard>> -> !plan.tensor<16x32xf16, #plan.layout<grid = [2, 2], split = [[0], []], partial = 1, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.cast: the layout must not change

// -----

// 128 columns over 16 tiles are blocks of 8 columns: half a head of 16.
func.func @f(%q: !plan.tensor<64x128xf16, #plan.layout<grid = [16], split = [[], [0]], memory = standard>>) {
  %qh = plan.split_heads %q : !plan.tensor<64x128xf16, #plan.layout<grid = [16], split = [[], [0]], memory = standard>> -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [16], split = [[], [], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: column block 8 does not hold whole heads of 16, and a result block holds 8 heads, not one

// -----

func.func @f(%q: !plan.tensor<64x128xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) {
  %qh = plan.split_heads %q : !plan.tensor<64x128xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<8x16x64xf16, #plan.layout<grid = [4], split = [[0], [], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.split_heads: (64, 128) -> (8, 16, 64) is not a head split

// -----

func.func @f(%a: !plan.tensor<8x64x16xf16, #plan.layout<grid = [4], split = [[0], [], []], memory = standard>>) {
  %m = plan.merge_heads %a : !plan.tensor<8x64x16xf16, #plan.layout<grid = [4], split = [[0], [], []], memory = standard>> -> !plan.tensor<128x64xf16, #plan.layout<grid = [4], split = [[], [0]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.merge_heads: (8, 64, 16) -> (128, 64) is not a head merge

// -----

// 8 query heads over 2 KV heads need grid[0] = 2 and grid[0] * grid[1] = 8; this grid has 2 x 2.
func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 2, 2, 4], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 2, 2, 4], split = [[0], [3], []], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh {form = "materialized", scale = 2.500000e-01 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 2, 2, 4], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 2, 2, 4], split = [[0], [3], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 2, 2, 4], split = [[0], [3], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 2, 2, 4], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: grid (2, 2, 2, 4) does not match 8 query and 2 KV heads

// -----

// q's heads are split over grid dimension 0 only (the group dimension 1 must split them too).
func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh {form = "materialized", scale = 2.500000e-01 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: q must be split {{\[\[}}0, 1], [2], []] over a 4-d grid

// -----

// The state must be [Hq, S, D + 2] = 8x64x18; 8x64x16 is the combined output's shape.
func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh {form = "materialized", scale = 2.500000e-01 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) -> !plan.tensor<8x64x16xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: result must be the [Hq, S, D + 2] state, partial over dim 3

// -----

// The state is not partial over the key-block dimension.
func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh {form = "materialized", scale = 2.500000e-01 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: result must be the [Hq, S, D + 2] state, partial over dim 3

// -----

func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh {form = "flash", scale = 2.500000e-01 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: form must be one of ('materialized', 'streamed')

// -----

// Materialized attention needs the keys split over the key-block dimension.
func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [], []], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh {form = "materialized", scale = 2.500000e-01 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: materialized k/v must be split {{\[\[}}0], [3], []]

// -----

func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh {form = "streamed", scale = 2.500000e-01 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: streamed attention does not split keys over tiles

// -----

// attention_combine of a state that is not a partial sum.
func.func @f(%s: !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2, 3], []], memory = standard>>) {
  %a = plan.attention_combine %s : !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2, 3], []], memory = standard>> -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2, 3], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention_combine: [H, S, D + 2] partial state -> [H, S, D]

// -----

func.func @f(%s: !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, memory = standard>>) {
  %a = plan.attention_combine %s : !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, memory = standard>> -> !plan.tensor<8x64x18xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2, 3], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention_combine: [H, S, D + 2] partial state -> [H, S, D]

// -----

// A streamed attention's bias keeps every key on each tile (keys are not split: grid dim 3 is 1,
// but the split names it).
func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, %b: !plan.tensor<1x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[], [2], [3]], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh bias %b {form = "streamed", scale = 1.0 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<1x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[], [2], [3]], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: bias must be split {{\[\[}}], [2], []] over q's grid

// -----

// A bias has one head (shared) or one per query head.
func.func @f(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, %b: !plan.tensor<4x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[], [2], []], memory = standard>>) {
  %s = plan.attention %qh, %kh, %kh bias %b {form = "streamed", scale = 1.0 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<4x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[], [2], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.attention: bias [4, 64, 64] is not [8 or 1, 64, 64]

// -----

// A norm may take column blocks (a padded last one too), but at most 64 of them: every tile of a
// row group receives all the group's statistics.
func.func @f(%x: !plan.tensor<16x130xf16, #plan.layout<grid = [1, 65], split = [[0], [1]], memory = standard>>, %g: !plan.tensor<130xf16, #plan.layout<grid = [1, 65], split = [[1]], memory = standard>>) {
  %n = plan.rowwise "rms_norm" %x, %g : (!plan.tensor<16x130xf16, #plan.layout<grid = [1, 65], split = [[0], [1]], memory = standard>>, !plan.tensor<130xf16, #plan.layout<grid = [1, 65], split = [[1]], memory = standard>>) -> !plan.tensor<16x130xf16, #plan.layout<grid = [1, 65], split = [[0], [1]], memory = standard>>
  func.return
}

// CHECK: Operation does not verify: plan.rowwise: every tile must hold whole rows (last axis unsplit), or for a norm, whole column blocks (the last axis split in at most 64 blocks)

// -----

// Over whole column blocks, a norm's scale is split like the columns, not whole on every tile.
func.func @f(%x: !plan.tensor<16x32xf16, #plan.layout<grid = [2, 4], split = [[0], [1]], memory = standard>>, %g: !plan.tensor<32xf16, #plan.layout<grid = [2, 4], split = [[]], memory = standard>>) {
  %n = plan.rowwise "rms_norm" %x, %g : (!plan.tensor<16x32xf16, #plan.layout<grid = [2, 4], split = [[0], [1]], memory = standard>>, !plan.tensor<32xf16, #plan.layout<grid = [2, 4], split = [[]], memory = standard>>) -> !plan.tensor<16x32xf16, #plan.layout<grid = [2, 4], split = [[0], [1]], memory = standard>>
  func.return
}

// CHECK: Operation does not verify: plan.rowwise: parameter vectors must be split like the rows' columns (whole when the rows are) and replicated over the rest of the grid
