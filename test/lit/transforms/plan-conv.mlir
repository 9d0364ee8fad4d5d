// RUN: ipu-opt %s -p 'expand-windows,plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s
// RUN: ipu-opt %s -p 'expand-windows,plan-decide{target=sim16}' --target sim16 | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %s -p 'expand-windows,plan-ops{target=sim16 finalists=1}' --target sim16 | ipu-opt | filecheck %s
// RUN: ipu-opt %s -p 'expand-windows,plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=MAP
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU
// RUN: not ipu-opt %S/Inputs/plan-conv-bad-pin.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=PIN

// The conv plan family: a 3x3 stride-2 convolution pinned to a (batch 1, rows 2, output
// channels 2, input channels 2) grid, and an unpinned 1x1 one after it. The filters live once
// (whole kernels of at least 64 input channels a block, here all 32, cut by the output channel
// blocks: a grid of its own starting at the planner's next home tile), and are fetched into the
// conv's layout (split [[], [], [3], [2]]: input channels by grid dimension 3, output channels by
// 2, replicated over the rows); the input is read where it lives. An input channel split gives
// f32 partials over grid dimension 3 and a plan.reduce into rows split by dimensions 1 and 3.
func.func @main(%x: tensor<1x8x8x32xf16>) -> tensor<1x4x4x16xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<3x3x32x32xf16>
  %v = graph.parameter "v" #graph.gaussian<seed = 2, std = 0.1> : tensor<1x1x32x16xf16>
  %y = graph.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 1 : i64, plan.choice = #plan.choice<conv, grid = [1, 2, 2, 2]>} : (tensor<1x8x8x32xf16>, tensor<3x3x32x32xf16>) -> tensor<1x4x4x32xf16>
  %z = graph.conv %y, %v {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x4x4x32xf16>, tensor<1x1x32x16xf16>) -> tensor<1x4x4x16xf16>
  func.return %z : tensor<1x4x4x16xf16>
}

// CHECK:      %w = plan.parameter "w" {{.*}} : !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2], split = {{\[\[}}], [], [0], [1]], memory = standard>>
// CHECK-NEXT: %w_r = plan.rearrange %w {reason = "weight fetch"} : {{.*}} -> !plan.tensor<3x3x32x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = {{\[\[}}], [], [3], [2]], memory = interleaved>>
// CHECK-NEXT: %y_partial = plan.conv %x, %w_r {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
// CHECK-SAME: -> !plan.tensor<1x4x4x32xf32, #plan.layout<grid = [1, 2, 2, 2], split = {{\[\[}}0], [1], [], [2]], partial = 3, memory = interleaved>>
// CHECK-NEXT: %y = plan.reduce %y_partial {value = "y"} : {{.*}} -> !plan.tensor<1x4x4x32xf16, #plan.layout<grid = [1, 2, 2, 2], split = {{\[\[}}0], [1, 3], [], [2]], memory = standard>>
// CHECK:      %z = plan.conv %y, %{{.*}} {{{.*}}value = "z"}

// plan-decide records each convolution's grid: the pin as given, the other as chosen
// DECIDE: graph.conv %x, %w {{.*}}plan.choice = #plan.choice<conv, grid = [1, 2, 2, 2]>
// DECIDE: graph.conv %y, %v {{.*}}plan.choice = #plan.choice<conv, grid = [{{[0-9]+, [0-9]+, [0-9]+, [0-9]+}}]>

// map-tiles: each tile's patch arrives in one move (its 2 x 2 output rows reach 5 padded input
// rows of 9 padded columns, 16 channels: zero-filled first for the padding), then amp_conv loops
// the nine kernel positions; window packs the strides and dilations (2 | 2 << 8 | 1 << 16 | 1 << 24 = 16843266).
// MAP:      %y_partial_patch = tilemap.move %x transfers = #table.transfers<
// MAP:      {reason = "halo", zero_fill} : !tilemap.buffer<{{.*}}> -> !tilemap.buffer<1x5x9x16xf16, tiles = [0, 8], memory = standard>
// MAP-NEXT: %y_partial = tilemap.run "amp_conv"(%y_partial_patch, %w_r) {n = 1 : i64, c = 16 : i64, oh = 2 : i64, ow = 4 : i64, o = 16 : i64, kh = 3 : i64, kw = 3 : i64, window = 16843266 : i64}
// MAP-SAME: -> !tilemap.buffer<1x2x4x16xf32, tiles = [0, 8], memory = interleaved>
// the 1x1 convolution's patches lie inside its input: no zero fill
// MAP:      %z_patch = tilemap.move
// MAP:      {reason = "halo"} :
// MAP-NEXT: %z = tilemap.run "amp_conv"(%z_patch

// EMU: numericalTest=PASS
// EMU: estimatedOverEmulated=1.0000

// PIN: plan-ops: graph.conv %z (op 1): conv grid 1x3x1x1 is not one the planner can emit: batch parts of 1, row blocks of 4 output rows, output channels in blocks of 16 of 16, input channels in blocks of a multiple of 16 of 32
