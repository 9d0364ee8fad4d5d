// RUN: ipu-opt %s --split-input-file -p 'expand-windows,plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'expand-windows,plan-ops{target=sim16 finalists=1}' | ipu-opt --split-input-file | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'expand-windows,plan-ops{target=sim16 finalists=1}' --print-op-generic | ipu-opt --split-input-file | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'expand-windows,plan-decide{target=sim16}' | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %s --split-input-file -p 'expand-windows,plan-ops{target=sim16 finalists=1},map-tiles' | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %s --split-input-file -p 'expand-windows' | filecheck %s --check-prefix=EXPAND
// RUN: ipu-run %S/Inputs/plan-pool-run.mlir --target sim16 | filecheck %s --check-prefix=EMU
// RUN: not ipu-opt %S/Inputs/plan-pool-bad-grid.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=GRID
// RUN: not ipu-opt %S/Inputs/plan-pool-negative.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=NEG

// ResNet's 3x3/2 max pool of a ReLU: its zero padding can never win a max of non-negative
// values, so expand-windows leaves it to the pool family: plan.pool on the vector path, pinned
// here to (batch 1, rows 2, channel blocks 2, 1); each tile receives its zero-filled patch.
func.func @main(%x: tensor<1x8x8x16xf16>) -> tensor<1x4x4x16xf16> {
  %r = graph.relu %x : tensor<1x8x8x16xf16> -> tensor<1x8x8x16xf16>
  %y = graph.pool %r {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, plan.choice = #plan.choice<pool, grid = [1, 2, 2, 1]>} : tensor<1x8x8x16xf16> -> tensor<1x4x4x16xf16>
  func.return %y : tensor<1x4x4x16xf16>
}

// CHECK-LABEL: func.func @main(
// CHECK:       %y = plan.pool %r {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, value = "y"}
// CHECK-SAME:  -> !plan.tensor<1x4x4x16xf16, #plan.layout<grid = [1, 2, 2, 1], split = {{\[\[}}0], [1], [], [2]], memory = standard>>

// DECIDE-LABEL: func.func @main(
// DECIDE:      graph.pool %r {{.*}}plan.choice = #plan.choice<pool, grid = [1, 2, 2, 1]>

// map-tiles: a tile's 2 output rows reach 5 padded input rows of 9 padded columns, 8 channels.
// MAP-LABEL:   func.func @main(
// MAP:         %y_patch = tilemap.move %r transfers = #table.transfers<
// MAP:         {reason = "halo", zero_fill} : !tilemap.buffer<{{.*}}> -> !tilemap.buffer<1x5x9x8xf16, tiles = [0, 4], memory = standard>
// MAP-NEXT:    %y = tilemap.run "max_pool"(%y_patch) {n = 1 : i64, c = 8 : i64, oh = 2 : i64, ow = 4 : i64, kh = 3 : i64, kw = 3 : i64, window = 16843266 : i64}

// EXPAND-LABEL: func.func @main(
// EXPAND:      graph.pool %r

// EMU:         numericalTest=PASS

// -----

// The same pool of a value that may be negative: zero padding could win, so expand-windows
// rewrites it into windows over a lowest-value padding and their running max.
func.func @signed(%x: tensor<1x8x8x16xf16>) -> tensor<1x4x4x16xf16> {
  %y = graph.pool %x {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x16xf16> -> tensor<1x4x4x16xf16>
  func.return %y : tensor<1x4x4x16xf16>
}
// CHECK-LABEL: func.func @signed(
// CHECK-NOT:   plan.pool
// CHECK:       plan.binary "max"
// EXPAND-LABEL: func.func @signed(
// EXPAND-NOT:  graph.pool
// EXPAND:      graph.max

// -----

// Without padding (and no window past the input) the sign does not matter.
func.func @unpadded(%x: tensor<2x8x8x8xf16>) -> tensor<2x4x4x8xf16> {
  %y = graph.pool %x {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<2x8x8x8xf16> -> tensor<2x4x4x8xf16>
  func.return %y : tensor<2x4x4x8xf16>
}
// CHECK-LABEL: func.func @unpadded(
// CHECK:       plan.pool %x
// MAP-LABEL:   func.func @unpadded(
// MAP-NOT:     zero_fill
// MAP:         tilemap.run "max_pool"

// GRID:        error: plan-ops: graph.pool %y (op 1): pool grid 1x3x2x1 is not one the planner can emit: batch parts of 1, row blocks of 4 output rows, channels in blocks of 4 of 16 and 1 part in dimension 3

// NEG:         error: plan-ops: graph.pool %y (op 0): a max pool whose padding could win (or with strides or dilations of 256 or more) is planned through expand-windows
