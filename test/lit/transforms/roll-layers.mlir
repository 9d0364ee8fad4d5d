// RUN: ipu-opt %s -p roll-layers --log-level info 2>&1 | filecheck %s
// RUN: ipu-opt %s -p 'roll-layers,plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'roll-layers,plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILE
// RUN: ipu-opt %s -p 'roll-layers,ipu-compile' --target sim16 | filecheck %s --check-prefix=TASM
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// Three identical pre-norm MLP layers, as an exporter writes them: the same ops on each layer's
// own weights (l0.*, l1.*, l2.*), and one norm scale shared by all (tied). roll-layers makes them
// one graph.repeat 3: the body is the last layer's ops (so its values keep the names the unrolled
// reference gives them), each per-layer weight becomes a stacked [3, ...] parameter read through
// graph.iteration_slice, and the tied scale stays one parameter. The residual stream is the one
// carried value. Below the graph level the slice is a plan.iteration_slice (the stacked weight
// in the slice's layout with the stacked axis unsplit). A slice the AMP reads as its weights has
// its stack in interleaved memory, and map-tiles gives the AMP call the stack itself
// (`amp_matmul_stacked`: this trip's block read in place, no copy); the norm's shift is copied
// out by a tilemap.run of `iteration_slice`, a tasm.call in the tasm.loop. The emulated model
// matches the unrolled reference.

// CHECK:      rolled layers count=3 body_operations=10 carried=1 stacked=4
// CHECK:      %gamma = graph.parameter "gamma"
// CHECK-NEXT: %lall.beta = graph.parameter "l*.beta" dense<{{.*}}> : tensor<3x32xf32>
// CHECK-NEXT: %lall.w1 = graph.parameter "l*.w1" dense<"0x{{[0-9A-F]+}}"> : tensor<3x32x64xf32>
// CHECK-NEXT: %lall.w2 = graph.parameter "l*.w2" dense<"0x{{[0-9A-F]+}}"> : tensor<3x64x32xf32>
// CHECK-NEXT: %lall.c = graph.parameter "l*.c"
// CHECK-NEXT: %y2.out = graph.repeat 3 iter(%y2.in = %x) : (tensor<16x32xf32>) {
// CHECK-NEXT:   %li.beta = graph.iteration_slice %lall.beta : tensor<3x32xf32> -> tensor<32xf32>
// CHECK-NEXT:   %li.w1 = graph.iteration_slice %lall.w1 : tensor<3x32x64xf32> -> tensor<32x64xf32>
// CHECK-NEXT:   %li.w2 = graph.iteration_slice
// CHECK-NEXT:   %li.c = graph.iteration_slice
// CHECK-NEXT:   %n2 = graph.layer_norm %y2.in, %gamma, %li.beta
// CHECK-NEXT:   %h2 = graph.matmul %n2, %li.w1
// CHECK:        %y2 = graph.add %y2.in, %e2
// CHECK-NEXT:   graph.yield %y2 : tensor<16x32xf32>
// CHECK-NEXT: } {rolled}
// CHECK-NEXT: %out = graph.relu %y2.out
// CHECK-NEXT: func.return %out

// PLAN:       %lall.w1 = plan.parameter "l*.w1" {{.*}} : !plan.tensor<3x32x64xf32, #plan.layout<grid = [[[G:[0-9, ]+]]], split = {{\[\[}}], {{.*}}memory = interleaved>>
// PLAN:       plan.repeat 3 iter
// PLAN:       %li.w1 = plan.iteration_slice %lall.w1 : !plan.tensor<3x32x64xf32, {{.*}}> -> !plan.tensor<32x64xf32, #plan.layout<grid = [[[G]]], {{.*}}memory = interleaved>>
// PLAN:       plan.gemm %{{.*}}, %li.w1
// PLAN-NOT:   value = "y2.out"

// TILE:       tilemap.repeat 3
// TILE:       %li.beta = tilemap.run "iteration_slice"(%lall.beta) {iterations = 3 : i64, elements = 32 : i64} : (!tilemap.buffer<3x32xf32, {{.*}}memory = standard>) -> !tilemap.buffer<32xf32, {{.*}}memory = standard>
// TILE-NOT:   "iteration_slice"(%lall.w1)
// TILE:       %h2 = tilemap.run "amp_matmul_stacked"(%{{.*}}, %lall.w1) {m = {{[0-9]+}} : i64, k = 32 : i64, n = {{[0-9]+}} : i64, iterations = 3 : i64} : (!tilemap.buffer<{{.*}}>, !tilemap.buffer<3x32x{{[0-9]+}}xf32, {{.*}}memory = interleaved>)

// TASM:       tasm.loop 3 {
// TASM:       tasm.call "iteration_slice" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}>) {iterations = 3 : i64, elements = 32 : i64} : f32 -> f32
// TASM:       tasm.call "amp_matmul_stacked" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}>) {m = {{[0-9]+}} : i64, k = 32 : i64, n = {{[0-9]+}} : i64, iterations = 3 : i64} : f32 -> f32
// TASM:       tasm.weight @"l*.w1" dense<"0x{{[0-9A-F]+}}"> : tensor<3x32x64xf32> : tensor<3x32x64xf32> layout #plan.layout<grid = [{{.*}}], split = {{\[\[}}], {{.*}}memory = interleaved> at {{[0-9]+}}

// EMU:        numericalTest=PASS

func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %gamma = graph.parameter "gamma" #graph.gaussian<seed = 1, std = 0.1> : tensor<32xf32>
  %l0.beta = graph.parameter "l0.beta" #graph.gaussian<seed = 2, std = 0.1> : tensor<32xf32>
  %l0.w1 = graph.parameter "l0.w1" #graph.gaussian<seed = 3, std = 0.1> : tensor<32x64xf32>
  %l0.w2 = graph.parameter "l0.w2" #graph.gaussian<seed = 4, std = 0.1> : tensor<64x32xf32>
  %l0.c = graph.parameter "l0.c" #graph.gaussian<seed = 5, std = 0.1> : tensor<32xf32>
  %n0 = graph.layer_norm %x, %gamma, %l0.beta : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h0 = graph.matmul %n0, %l0.w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %g0 = graph.gelu %h0 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f0 = graph.matmul %g0, %l0.w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %e0 = graph.add %f0, %l0.c : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %y0 = graph.add %x, %e0 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %l1.beta = graph.parameter "l1.beta" #graph.gaussian<seed = 12, std = 0.1> : tensor<32xf32>
  %l1.w1 = graph.parameter "l1.w1" #graph.gaussian<seed = 13, std = 0.1> : tensor<32x64xf32>
  %l1.w2 = graph.parameter "l1.w2" #graph.gaussian<seed = 14, std = 0.1> : tensor<64x32xf32>
  %l1.c = graph.parameter "l1.c" #graph.gaussian<seed = 15, std = 0.1> : tensor<32xf32>
  %n1 = graph.layer_norm %y0, %gamma, %l1.beta : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h1 = graph.matmul %n1, %l1.w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %g1 = graph.gelu %h1 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f1 = graph.matmul %g1, %l1.w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %e1 = graph.add %f1, %l1.c : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %y1 = graph.add %y0, %e1 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %l2.beta = graph.parameter "l2.beta" #graph.gaussian<seed = 22, std = 0.1> : tensor<32xf32>
  %l2.w1 = graph.parameter "l2.w1" #graph.gaussian<seed = 23, std = 0.1> : tensor<32x64xf32>
  %l2.w2 = graph.parameter "l2.w2" #graph.gaussian<seed = 24, std = 0.1> : tensor<64x32xf32>
  %l2.c = graph.parameter "l2.c" #graph.gaussian<seed = 25, std = 0.1> : tensor<32xf32>
  %n2 = graph.layer_norm %y1, %gamma, %l2.beta : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h2 = graph.matmul %n2, %l2.w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %g2 = graph.gelu %h2 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f2 = graph.matmul %g2, %l2.w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %e2 = graph.add %f2, %l2.c : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %y2 = graph.add %y1, %e2 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %out = graph.relu %y2 : tensor<16x32xf32> -> tensor<16x32xf32>
  func.return %out : tensor<16x32xf32>
}
