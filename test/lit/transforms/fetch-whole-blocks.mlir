// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,select-finalist,schedule-exchange,join-phases' --target sim16 | filecheck %s --check-prefix=EXCH
// RUN: ipu-opt %s -p 'ipu-compile{target=sim16}' --target sim16 | filecheck %s --check-prefix=TASM
// RUN: ipu-opt %s -p 'ipu-compile{target=sim16}' --target sim16 > %t.mlir
// RUN: ipu-opt %t.mlir | ipu-opt | filecheck %s --check-prefix=TASM
// RUN: ipu-translate --to-ipuexe %t.mlir -o %t.ipuexe
// RUN: ipu-translate --from-ipuexe %t.ipuexe | filecheck %s --check-prefix=TASM
// RUN: ipu-translate --from-ipuexe %t.ipuexe | ipu-translate --to-ipuexe -o %t.again.ipuexe
// RUN: cmp %t.ipuexe %t.again.ipuexe
// RUN: ipu-translate --inspect %t.ipuexe | filecheck %s --check-prefix=INSPECT
// RUN: ipu-run %s --target sim16 --checked --poison | filecheck %s --check-prefix=EMU

// A rolled layer's fetched weight: the fetch reads this trip's whole blocks where they lie in
// the stacked weight (no `iteration_slice` copy: the move's sources are trip 0's block and
// advance a block, 64 x 16 halves = 2048 bytes, a trip: `trip_stride`), whose padding (90
// columns in 6 blocks of 16: 96) the host writes as zeros, so the fetch moves whole padded
// blocks and nothing is zeroed on the device first. The fetch runs in the exchange of the move
// before it (`joined`): its package phase records the stride, the loop's 3 trips and which of
// the exchange's families read by the trip (the fetch's 2, after the other move's 2), and a
// checked run on poisoned memory reads nothing never written, trip after trip.
func.func @main(%x: tensor<32x128xf16>) -> tensor<32x128xf16> {
  %w.all = graph.parameter "h.*.w" #graph.gaussian<seed = 1, std = 0.05> : tensor<3x128x90xf16>
  %v.all = graph.parameter "h.*.v" #graph.gaussian<seed = 2, std = 0.05> : tensor<3x90x128xf16>
  %y.out = graph.repeat 3 iter(%h = %x) : (tensor<32x128xf16>) {
    %w.i = graph.iteration_slice %w.all : tensor<3x128x90xf16> -> tensor<128x90xf16>
    %v.i = graph.iteration_slice %v.all : tensor<3x90x128xf16> -> tensor<90x128xf16>
    %y = graph.matmul %h, %w.i {plan.choice = #plan.choice<gemm, grid = [2, 6, 1], weight = fetched>} : (tensor<32x128xf16>, tensor<128x90xf16>) -> tensor<32x90xf16>
    %z = graph.matmul %y, %v.i : (tensor<32x90xf16>, tensor<90x128xf16>) -> tensor<32x128xf16>
    graph.yield %z : tensor<32x128xf16>
  } {rolled}

  func.return %y.out : tensor<32x128xf16>
}

// CHECK:      tilemap.weight "h.*.w" {{.*}} : tensor<3x128x90xf16> layout {{.*}} {zero_padding}
// CHECK-NOT:  tilemap.run "iteration_slice"(%w.all)
// CHECK:      tilemap.move %w.all
// CHECK:      {reason = "weight fetch", trip_stride = 2048 : i64} : !tilemap.buffer<3x64x16xf16, tiles = [0, 12], memory = standard> -> !tilemap.buffer<128x16xf16, tiles = [0, 12], memory = interleaved>

// EXCH:       reason = "weight fetch", trip_stride = 2048 : i64, joined}

// TASM:       tasm.loop 3
// TASM:       tasm.phase @{{[a-z0-9_]+}} lower_bound {{[0-9]+}} horizon {{[0-9]+}} scheduler "{{[a-z-]+}}" trip_stride 2048 trips 3 families 2 to 4 transfers =

// INSPECT:    families 4 transfers {{[0-9]+}}, families 2..3 read by the trip (2048 bytes a trip of 3)

// EMU: numericalTest=PASS
