// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1 link_inputs="boundary."}' | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s --check-prefix=HOST
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1 link_inputs="boundary."}' | ipu-opt | filecheck %s

// A pipeline stage's input that another chip writes over the IPU-Links (its name starts with the
// compiler's link prefix, `plan.link_inputs`) arrives once, spread over the tiles in the default
// layout: the matmul's replicated lhs is a rearrangement on the chip, priced by the planner. The
// host writes an input in its reader's layout, replicas and all, and no rearrangement follows; a
// link would carry every replica's bytes (16 copies here).

// CHECK:      func.func @main(%n: !plan.tensor<64x256xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>)
// CHECK-SAME:   plan.link_inputs = ["boundary.n"]
// CHECK-NEXT:   %[[R:.*]] = plan.rearrange %n {reason = "graph.matmul"} : !plan.tensor<64x256xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 16, 1], split = [[0], [2]]
// CHECK:        plan.gemm %[[R]], %w

// HOST:       func.func @main(%n: !plan.tensor<64x256xf32, #plan.layout<grid = [1, 16, 1], split = [[0], [2]]
// HOST-NOT:     plan.link_inputs
// HOST-NOT:     plan.rearrange
// HOST:         plan.gemm %n, %w

func.func @main(%n: tensor<64x256xf32>) -> tensor<64x1024xf32> attributes {ipu.inputs = ["boundary.n"]} {
  %w = graph.parameter "w" #graph.gaussian<seed = 7, std = 0.2> : tensor<256x1024xf32>
  %y = graph.matmul %n, %w : (tensor<64x256xf32>, tensor<256x1024xf32>) -> tensor<64x1024xf32>
  func.return %y : tensor<64x1024xf32>
}
