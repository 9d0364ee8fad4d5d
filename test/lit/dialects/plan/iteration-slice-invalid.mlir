// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

// the stacked axis must be unsplit, the rest of the layout the result's
func.func @f(%x: !plan.tensor<4x8xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>, %w: !plan.tensor<3x8x8xf32, #plan.layout<grid = [4], split = [[0], [], []], memory = standard>>) -> !plan.tensor<4x8xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> {
  %out = plan.repeat 3 iter(%h = %x) : (!plan.tensor<4x8xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) {
    %wi = plan.iteration_slice %w : !plan.tensor<3x8x8xf32, #plan.layout<grid = [4], split = [[0], [], []], memory = standard>> -> !plan.tensor<8x8xf32, #plan.layout<grid = [4], split = [[], []], memory = standard>>
    plan.yield %h : !plan.tensor<4x8xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  }
  func.return %out : !plan.tensor<4x8xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
}
// CHECK: Operation does not verify: plan.iteration_slice: the input's layout must be the result's with the stacked axis added, unsplit

// -----

func.func @f(%w: !plan.tensor<3x8x8xf32, #plan.layout<grid = [4], split = [[], [0], []], memory = standard>>) -> !plan.tensor<8x8xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> {
  %wi = plan.iteration_slice %w : !plan.tensor<3x8x8xf32, #plan.layout<grid = [4], split = [[], [0], []], memory = standard>> -> !plan.tensor<8x8xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return %wi : !plan.tensor<8x8xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
}
// CHECK: Operation does not verify: plan.iteration_slice: stacks 3 slices; it must sit directly in a plan.repeat of 3 iterations
