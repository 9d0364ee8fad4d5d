// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,join-phases' | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,join-phases' | ipu-opt --split-input-file | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,join-phases,place-storage,lower-to-tasm' | filecheck %s --check-prefix=TASM
// RUN: ipu-run %S/Inputs/join-phases-run.mlir --target sim16 | filecheck %s --check-prefix=EMU

// A 1x1 convolution's filter fetch and its input patch: two moves with nothing computed between
// and neither reading the other's result, so they run in one exchange (one sync): the patch's
// phase is `joined` to the fetch's.
func.func @independent(%x: tensor<1x8x8x64xf16>) -> tensor<1x8x8x32xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<1x1x64x32xf16>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64, plan.choice = #plan.choice<conv, grid = [1, 2, 2, 1]>} : (tensor<1x8x8x64xf16>, tensor<1x1x64x32xf16>) -> tensor<1x8x8x32xf16>
  func.return %y : tensor<1x8x8x32xf16>
}
// CHECK-LABEL: func.func @independent(
// CHECK:       %w_r = exchange.phase %w
// CHECK:       {lower_bound = 512 : i64, horizon = 512 : i64, {{.*}}route_cycles = 108 : i64, reason = "weight fetch"}
// CHECK-NEXT:  %y_patch = exchange.phase %x
// CHECK:       {lower_bound = 1024 : i64, horizon = 1024 : i64, {{.*}}route_cycles = 120 : i64, reason = "halo", joined}

// One sync and one exchange: the fetch's transfers from cycle 0, the patch's from its horizon
// 512 plus the longer route 120 (every fetched word has landed): horizon 512 + 120 + 1024.
// TASM:        tasm.sync
// TASM-NEXT:   tasm.exchange @phase0
// TASM-NOT:    @phase1
// TASM:        tasm.phase @phase0 lower_bound 1536 horizon 1656
// TASM-NOT:    @phase1
// TASM:        {{/}}/ -----

// EMU:         numericalTest=PASS
// EMU:         estimatedOverEmulated=1.0000

// -----

// A 3x3 convolution's patch is zero-filled first (its padding): a kernel runs between the
// fetch and the patch, so they stay two exchanges.
func.func @padded(%x: tensor<1x8x8x64xf16>) -> tensor<1x8x8x32xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<3x3x64x32xf16>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 1 : i64, plan.choice = #plan.choice<conv, grid = [1, 2, 2, 1]>} : (tensor<1x8x8x64xf16>, tensor<3x3x64x32xf16>) -> tensor<1x8x8x32xf16>
  func.return %y : tensor<1x8x8x32xf16>
}
// CHECK-LABEL: func.func @padded(
// CHECK-NOT:   joined
// CHECK:       func.return
