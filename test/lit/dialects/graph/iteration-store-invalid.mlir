// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%y: tensor<3x2x8xf32>, %h: tensor<2x8xf32>) -> tensor<3x2x8xf32> {
  %s = graph.iteration_store %y, %h : tensor<3x2x8xf32>, tensor<2x8xf32> -> tensor<3x2x8xf32>
  func.return %s : tensor<3x2x8xf32>
}
// CHECK: Operation does not verify: graph.iteration_store: must sit directly in the body of a graph.repeat

// -----

func.func @f(%y0: tensor<3x2x8xf32>, %h: tensor<2x8xf32>) -> tensor<3x2x8xf32> {
  %o = graph.repeat 2 iter(%y = %y0) : (tensor<3x2x8xf32>) {
    %s = graph.iteration_store %y, %h : tensor<3x2x8xf32>, tensor<2x8xf32> -> tensor<3x2x8xf32>
    graph.yield %s : tensor<3x2x8xf32>
  }
  func.return %o : tensor<3x2x8xf32>
}
// CHECK: Operation does not verify: graph.iteration_store: stacks 3 slices in a graph.repeat of 2 iterations

// -----

func.func @f(%y0: tensor<3x2x8xf32>, %h: tensor<8x2xf32>) -> tensor<3x2x8xf32> {
  %o = graph.repeat 3 iter(%y = %y0) : (tensor<3x2x8xf32>) {
    %s = graph.iteration_store %y, %h : tensor<3x2x8xf32>, tensor<8x2xf32> -> tensor<3x2x8xf32>
    graph.yield %s : tensor<3x2x8xf32>
  }
  func.return %o : tensor<3x2x8xf32>
}
// CHECK: Operation does not verify: graph.iteration_store: tensor<8x2xf32> is not one slice of tensor<3x2x8xf32>
