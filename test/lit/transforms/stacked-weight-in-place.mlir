// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1 partials=f16},map-tiles' --target sim16 | filecheck %s --check-prefix=HALF
// RUN: ipu-run %s --target sim16 --checked --poison | filecheck %s --check-prefix=EMU
// RUN: ipu-run %s --target sim16 --partials f16 --checked --poison | filecheck %s --check-prefix=EMU

// A rolled layer's resident weights are read where they lie: each stacked weight the AMP streams
// sits in interleaved memory, and each trip's AMP call is given the stack and reads block
// `iteration` of it (`amp_matmul*_stacked`), in both orientations and with fp16 partials, where
// an `iteration_slice` copied the block out first. A stacked bias added to a product, or a
// stacked scale multiplied in, is read in place the same way (`add_stacked`, `mul_stacked`). The
// plan prices the slice at the calls' address offsets only. A checked run on poisoned memory
// reads nothing never written, and the numbers match the unrolled reference trip by trip.
func.func @main(%x: tensor<32x128xf16>) -> tensor<32x128xf16> {
  %w.all = graph.parameter "h.*.w" #graph.gaussian<seed = 1, std = 0.05> : tensor<3x128x96xf16>
  %v.all = graph.parameter "h.*.v" #graph.gaussian<seed = 2, std = 0.05> : tensor<3x96x128xf16>
  %b.all = graph.parameter "h.*.b" #graph.gaussian<seed = 3, std = 0.5> : tensor<3x96xf16>
  %s.all = graph.parameter "h.*.s" #graph.gaussian<seed = 4, std = 0.5> : tensor<3x128xf16>
  %y.out = graph.repeat 3 iter(%h = %x) : (tensor<32x128xf16>) {
    %w.i = graph.iteration_slice %w.all : tensor<3x128x96xf16> -> tensor<128x96xf16>
    %v.i = graph.iteration_slice %v.all : tensor<3x96x128xf16> -> tensor<96x128xf16>
    %y = graph.matmul %h, %w.i {plan.choice = #plan.choice<gemm, grid = [2, 6, 1], weight = resident, orientation = swapped>} : (tensor<32x128xf16>, tensor<128x96xf16>) -> tensor<32x96xf16>
    %b.i = graph.iteration_slice %b.all : tensor<3x96xf16> -> tensor<96xf16>
    %s.i = graph.iteration_slice %s.all : tensor<3x128xf16> -> tensor<128xf16>
    %yb = graph.add %y, %b.i : (tensor<32x96xf16>, tensor<96xf16>) -> tensor<32x96xf16>
    %z = graph.matmul %yb, %v.i {plan.choice = #plan.choice<gemm, grid = [2, 4, 2], weight = resident, orientation = plain>} : (tensor<32x96xf16>, tensor<96x128xf16>) -> tensor<32x128xf16>
    %zs = graph.mul %z, %s.i : (tensor<32x128xf16>, tensor<128xf16>) -> tensor<32x128xf16>
    graph.yield %zs : tensor<32x128xf16>
  } {rolled}

  func.return %y.out : tensor<32x128xf16>
}

// CHECK:      %w.all = tilemap.weight "h.*.w" {{.*}} -> !tilemap.buffer<3x128x16xf16, {{.*}}memory = interleaved>
// CHECK:      %v.all = tilemap.weight "h.*.v" {{.*}} -> !tilemap.buffer<3x48x32xf16, {{.*}}memory = interleaved>
// CHECK-NOT:  "iteration_slice"
// CHECK:      %y = tilemap.run "amp_matmul_swapped_stacked"(%{{.*}}, %w.all, %{{.*}}) {m = 16 : i64, k = 128 : i64, n = 16 : i64, iterations = 3 : i64}
// CHECK-NOT:  "iteration_slice"
// CHECK:      %yb = tilemap.run "add_stacked"(%y, %b.all) {m = 16 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64, iterations = 3 : i64} : (!tilemap.buffer<16x16xf16, {{.*}}>, !tilemap.buffer<3x16xf16, {{.*}}>)
// CHECK-NOT:  "iteration_slice"
// CHECK:      tilemap.run "amp_matmul_stacked"(%{{.*}}, %v.all) {m = 16 : i64, k = 48 : i64, n = 32 : i64, iterations = 3 : i64}
// CHECK-NOT:  "iteration_slice"
// CHECK:      %zs = tilemap.run "mul_stacked"(%z, %s.all) {m = 16 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64, iterations = 3 : i64}
// CHECK-NOT:  "iteration_slice"

// HALF:       tilemap.run "amp_matmul_swapped_half_stacked"(%{{.*}}, %w.all, %{{.*}})
// HALF:       tilemap.run "amp_matmul_half_stacked"(%{{.*}}, %v.all)

// EMU: numericalTest=PASS
