// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

// the stack must hold each tile's block of every slice: the value's layout with the stacked axis
// added, unsplit
func.func @f(%h: !plan.tensor<2x8xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>, %y0: !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>) -> !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>> {
  %out = plan.repeat 3 iter(%y = %y0) : (!plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>) {
    %s = plan.iteration_store %y, %h : !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>, !plan.tensor<2x8xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> -> !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>
    plan.yield %s : !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>
  }
  func.return %out : !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>
}
// CHECK: Operation does not verify: plan.iteration_store: the stacked layout must be the value's with the stacked axis added, unsplit

// -----

func.func @f(%h: !plan.tensor<2x8xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>, %y: !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[], [0], []], memory = standard>>) -> !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[], [0], []], memory = standard>> {
  %s = plan.iteration_store %y, %h : !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[], [0], []], memory = standard>>, !plan.tensor<2x8xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> -> !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[], [0], []], memory = standard>>
  func.return %s : !plan.tensor<3x2x8xf32, #plan.layout<grid = [2], split = [[], [0], []], memory = standard>>
}
// CHECK: Operation does not verify: plan.iteration_store: stacks 3 slices; it must sit directly in a plan.repeat of 3 iterations
