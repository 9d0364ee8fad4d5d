// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | ipu-opt | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --print-op-generic | ipu-opt | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,screen-tiles,select-finalist,schedule-exchange,join-phases,place-storage' | filecheck %s --check-prefix=PLACED
// RUN: ipu-opt %s --target sim16 -p ipu-compile | filecheck %s --check-prefix=TASM

// A scan, as a recurrent layer imports: the steps' input projections are computed before the
// loop and stacked [4, 2, 8]; each trip slices its step out (graph.iteration_slice of a computed
// value, not a weight) and stores its state into the carried stack of outputs
// (graph.iteration_store). The stack is laid out slice by slice; the computed stack is moved into
// that layout once, before the loop; the store writes the carried slot in place, so the yield
// copies only the 2x8 state.

func.func @scan(%x: tensor<8x6xf32>, %h0: tensor<2x8xf32>) -> tensor<4x2x8xf32> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.3> : tensor<6x8xf32>
  %r = graph.parameter "r" #graph.gaussian<seed = 2, std = 0.3> : tensor<8x8xf32>
  %xw = graph.matmul %x, %w : (tensor<8x6xf32>, tensor<6x8xf32>) -> tensor<8x8xf32>
  %xs = graph.reshape %xw : tensor<8x8xf32> -> tensor<4x2x8xf32>
  %y0 = graph.parameter "y0" dense<0.0> : tensor<1xf32> : tensor<4x2x8xf32>
  %h, %ys = graph.repeat 4 iter(%hi = %h0, %yi = %y0) : (tensor<2x8xf32>, tensor<4x2x8xf32>) {
    %xt = graph.iteration_slice %xs : tensor<4x2x8xf32> -> tensor<2x8xf32>
    %hr = graph.matmul %hi, %r : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %a = graph.add %xt, %hr : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %hn = graph.tanh %a : tensor<2x8xf32> -> tensor<2x8xf32>
    %yn = graph.iteration_store %yi, %hn : tensor<4x2x8xf32>, tensor<2x8xf32> -> tensor<4x2x8xf32>
    graph.yield %hn, %yn : tensor<2x8xf32>, tensor<4x2x8xf32>
  }
  func.return %ys : tensor<4x2x8xf32>
}

// CHECK-LABEL: func.func @scan
// CHECK:       %y0 = plan.parameter "y0" {{.*}} : !plan.tensor<4x2x8xf32, #plan.layout<grid = [2, 4], split = {{\[\[}}], [0], [1]], memory = standard>>
// CHECK:       %xs_r = plan.rearrange %xs {reason = "stacked for a loop"} : {{.*}} -> !plan.tensor<4x2x8xf32, #plan.layout<grid = [2, 4], split = {{\[\[}}], [0], [1]], memory = standard>>
// CHECK-NEXT:  %h, %ys = plan.repeat 4 iter(%hi = %h0, %yi = %y0)
// CHECK:         %xt = plan.iteration_slice %xs_r : {{.*}} -> !plan.tensor<2x8xf32, #plan.layout<grid = [2, 4], split = {{\[\[}}0], [1]], memory = standard>>
// CHECK-NOT:     plan.rearrange %xs
// CHECK:         %yn = plan.iteration_store %yi, %hn : !plan.tensor<4x2x8xf32, {{.*}}>, !plan.tensor<2x8xf32, #plan.layout<grid = [2, 4], split = {{\[\[}}0], [1]], memory = standard>> -> !plan.tensor<4x2x8xf32
// CHECK-NEXT:    plan.yield %hn, %yn

// MAP:         tilemap.repeat 4 iter(%hi = %h0, %yi = %y0)
// MAP:           %xt = tilemap.run "iteration_slice"(%xs_r) {iterations = 4 : i64, elements = 2 : i64}
// MAP:           %yn = tilemap.run "iteration_store"(%hn, %yi) {iterations = 4 : i64, elements = 2 : i64} {inplace = 1 : i64}
// MAP-SAME:        -> !tilemap.buffer<4x1x2xf32, tiles = [0, 8], memory = standard>
// MAP-NEXT:      tilemap.yield %hn, %yn

// the store's result is the carried stack's own slot
// PLACED:      tilemap.run "iteration_store"(%hn, %yi) {{.*}} slot = #exchange.slot<[[S:0x[0-9a-f]+]], 32, standard>
// PLACED:      carried_slots = [#exchange.slot<{{.*}}>, #exchange.slot<[[S]], 32, standard>]

// TASM:        tasm.loop 4 {
// TASM:          tasm.call "iteration_store" out([[Y:[0-9]+]])
// TASM-NOT:      tasm.call "copy" out([[Y]])
// TASM:        }
