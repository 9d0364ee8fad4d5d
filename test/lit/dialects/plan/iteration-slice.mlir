// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// plan.iteration_slice: the stacked weight keeps each tile's block of every slice (the result's
// layout with the stacked axis added, unsplit), in standard memory; the slice lands in the layout
// its consumer wants (here the AMP's interleaved rhs). Trimmed from roll-layers + plan-ops on sim16.
// CHECK-LABEL: func.func @rolled
func.func @rolled(%x: !plan.tensor<4x8xf32, #plan.layout<grid = [4, 1, 1], split = [[0], [2]], align = [1, 2], memory = standard>>) -> !plan.tensor<4x8xf32, #plan.layout<grid = [4, 1, 1], split = [[0], [2]], align = [1, 2], memory = standard>> {
  // CHECK: %w = plan.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : !plan.tensor<3x8x8xf32, #plan.layout<grid = [4, 1, 1], split = {{\[\[}}], [2], [1]], align = [1, 2, 1], memory = standard>>
  %w = plan.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : !plan.tensor<3x8x8xf32, #plan.layout<grid = [4, 1, 1], split = [[], [2], [1]], align = [1, 2, 1], memory = standard>>
  %out = plan.repeat 3 iter(%h = %x) : (!plan.tensor<4x8xf32, #plan.layout<grid = [4, 1, 1], split = [[0], [2]], align = [1, 2], memory = standard>>) {
    // CHECK: %wi = plan.iteration_slice %w : !plan.tensor<3x8x8xf32, {{.*}}> -> !plan.tensor<8x8xf32, #plan.layout<grid = [4, 1, 1], split = {{\[\[}}2], [1]], align = [2, 1], memory = interleaved>>
    %wi = plan.iteration_slice %w : !plan.tensor<3x8x8xf32, #plan.layout<grid = [4, 1, 1], split = [[], [2], [1]], align = [1, 2, 1], memory = standard>> -> !plan.tensor<8x8xf32, #plan.layout<grid = [4, 1, 1], split = [[2], [1]], align = [2, 1], memory = interleaved>>
    plan.yield %h : !plan.tensor<4x8xf32, #plan.layout<grid = [4, 1, 1], split = [[0], [2]], align = [1, 2], memory = standard>>
  }
  func.return %out : !plan.tensor<4x8xf32, #plan.layout<grid = [4, 1, 1], split = [[0], [2]], align = [1, 2], memory = standard>>
}
