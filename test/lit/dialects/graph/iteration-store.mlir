// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// graph.iteration_store: on trip i of the enclosing graph.repeat, the carried stack with slice i
// replaced by a value (a recurrent layer's per-step outputs, what the ONNX importer writes).

// CHECK-LABEL: func.func @scan
func.func @scan(%h0: tensor<2x8xf32>, %y0: tensor<3x2x8xf32>) -> tensor<3x2x8xf32> {
  // CHECK-NEXT: %h, %ys = graph.repeat 3 iter(%hi = %h0, %yi = %y0) : (tensor<2x8xf32>, tensor<3x2x8xf32>) {
  %h, %ys = graph.repeat 3 iter(%hi = %h0, %yi = %y0) : (tensor<2x8xf32>, tensor<3x2x8xf32>) {
    // CHECK-NEXT: %hn = graph.tanh %hi
    %hn = graph.tanh %hi : tensor<2x8xf32> -> tensor<2x8xf32>
    // CHECK-NEXT: %yn = graph.iteration_store %yi, %hn : tensor<3x2x8xf32>, tensor<2x8xf32> -> tensor<3x2x8xf32>
    %yn = graph.iteration_store %yi, %hn : tensor<3x2x8xf32>, tensor<2x8xf32> -> tensor<3x2x8xf32>
    graph.yield %hn, %yn : tensor<2x8xf32>, tensor<3x2x8xf32>
  }
  func.return %ys : tensor<3x2x8xf32>
}
