// RUN: ipu-opt %s -p 'expand-windows,plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s
// RUN: ipu-opt %s -p 'expand-windows,plan-decide{target=sim16}' --target sim16 | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %s -p 'expand-windows,plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=MAP
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A depthwise 3x3 convolution (one group per channel, MobileNet's) stays a convolution through
// expand-windows and is planned by the conv family on the vector path: plan.conv with
// `depthwise`, pinned here to a (batch 1, rows 2, channel blocks 3, 1) grid. Its filters, a tap
// per channel, stay in the conv's own layout (no fetch); the patch, the filters and the result
// split their channels alike, and there are no partial sums.
func.func @main(%x: tensor<1x8x8x24xf16>) -> tensor<1x8x8x24xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.2> : tensor<3x3x1x24xf16>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 24 : i64, plan.choice = #plan.choice<conv, grid = [1, 2, 3, 1]>} : (tensor<1x8x8x24xf16>, tensor<3x3x1x24xf16>) -> tensor<1x8x8x24xf16>
  func.return %y : tensor<1x8x8x24xf16>
}

// CHECK:      %w = plan.parameter "w" {{.*}} : !plan.tensor<3x3x1x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = {{\[\[}}], [], [], [2]], memory = standard>>
// CHECK-NOT:  plan.rearrange %w
// CHECK:      %y = plan.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, depthwise, value = "y"}
// CHECK-SAME: -> !plan.tensor<1x8x8x24xf16, #plan.layout<grid = [1, 2, 3, 1], split = {{\[\[}}0], [1], [], [2]], memory = standard>>
// CHECK-NOT:  plan.reduce

// DECIDE: graph.conv %x, %w {{.*}}plan.choice = #plan.choice<conv, grid = [1, 2, 3, 1]>

// map-tiles: each tile's patch (its 4 output rows reach 6 padded input rows of 10 padded
// columns, 8 of the channels) arrives zero-filled in one move, then dw_conv loops the positions.
// MAP:      %y_patch = tilemap.move %x transfers = #table.transfers<
// MAP:      {reason = "halo", zero_fill} : !tilemap.buffer<{{.*}}> -> !tilemap.buffer<1x6x10x8xf16, tiles = [0, 6], memory = standard>
// MAP-NEXT: %y = tilemap.run "dw_conv"(%y_patch, %w) {n = 1 : i64, c = 8 : i64, oh = 4 : i64, ow = 8 : i64, kh = 3 : i64, kw = 3 : i64, window = 16843009 : i64}

// EMU: numericalTest=PASS
// EMU: estimatedOverEmulated=1.0000
