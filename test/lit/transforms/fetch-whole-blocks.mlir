// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s
// RUN: ipu-run %s --target sim16 --checked --poison | filecheck %s --check-prefix=EMU

// A rolled layer's fetched weight: `iteration_slice` copies this trip's whole blocks out of the
// stacked weight, whose padding (90 columns in 6 blocks of 16: 96) the host writes as zeros, so
// the fetch moves whole padded blocks and nothing is zeroed on the device first. A checked run
// on poisoned memory reads nothing never written.
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
// CHECK:      tilemap.run "iteration_slice"(%w.all)
// CHECK:      {reason = "weight fetch"} : !tilemap.buffer<64x16xf16, tiles = [0, 12], memory = standard> -> !tilemap.buffer<128x16xf16, tiles = [0, 12], memory = interleaved>

// EMU: numericalTest=PASS
