// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,join-phases' | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,join-phases' | ipu-opt --split-input-file | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,join-phases,place-storage,lower-to-tasm' | filecheck %s --check-prefix=TASM
// RUN: ipu-run %S/Inputs/join-phases-run.mlir --target sim16 | filecheck %s --check-prefix=EMU
// RUN: ipu-run %S/Inputs/join-phases-windows.mlir --target sim16 --check all --poison | filecheck %s --check-prefix=WIN

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

// -----

// Three windows of one product (as fuse-sibling-matmuls leaves q, k and v), each sampled by its
// checkpoint: a checkpoint runs no code, so the windows run in one exchange (one sync), the
// checkpoints after it.
func.func @windows(%x: tensor<64x96xf16>, %w: tensor<96x96xf16>) -> (tensor<64x32xf16>, tensor<64x32xf16>, tensor<64x32xf16>) {
  %a = graph.matmul %x, %w : (tensor<64x96xf16>, tensor<96x96xf16>) -> tensor<64x96xf16>
  %q = graph.slice %a {starts = array<i64: 0, 0>} : tensor<64x96xf16> -> tensor<64x32xf16>
  %k = graph.slice %a {starts = array<i64: 0, 32>} : tensor<64x96xf16> -> tensor<64x32xf16>
  %v = graph.slice %a {starts = array<i64: 0, 64>} : tensor<64x96xf16> -> tensor<64x32xf16>
  %qr = graph.relu %q : tensor<64x32xf16> -> tensor<64x32xf16>
  %kr = graph.relu %k : tensor<64x32xf16> -> tensor<64x32xf16>
  %vr = graph.relu %v : tensor<64x32xf16> -> tensor<64x32xf16>
  func.return %qr, %kr, %vr : tensor<64x32xf16>, tensor<64x32xf16>, tensor<64x32xf16>
}
// CHECK-LABEL: func.func @windows(
// CHECK:       %q = exchange.phase %a
// CHECK:       reason = "window"} :
// CHECK-NEXT:  tilemap.checkpoint "q"
// CHECK-NEXT:  %k = exchange.phase %a
// CHECK:       reason = "window", joined} :
// CHECK-NEXT:  tilemap.checkpoint "k"
// CHECK-NEXT:  %v = exchange.phase %a
// CHECK:       reason = "window", joined} :
// CHECK-NEXT:  tilemap.checkpoint "v"

// TASM:        tasm.checkpoint @a
// TASM-NEXT:   tasm.sync
// TASM-NEXT:   tasm.exchange @phase0
// TASM-NEXT:   tasm.checkpoint @q
// TASM-NEXT:   tasm.checkpoint @k
// TASM-NEXT:   tasm.checkpoint @v
// TASM-NOT:    @phase1
// TASM:        tasm.phase @phase0
// TASM-NOT:    @phase1

// Every element of every value checked, tile memory starting as NaN: each checkpoint samples
// its window whole after the one exchange.
// WIN:         name=q value=q aspect=value samples=2048 maximumAbsoluteError=0.000000
// WIN-NEXT:    name=k value=k aspect=value samples=2048 maximumAbsoluteError=0.000000
// WIN-NEXT:    name=v value=v aspect=value samples=2048 maximumAbsoluteError=0.000000
// WIN:         diagnosticCheckpoints=7 {{.*}}numericalTest=PASS
// WIN:         estimatedOverEmulated=1.0000
