// RUN: ipu-opt %s -p convert-stablehlo-to-graph | filecheck %s
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// jax.lax.scan as JAX writes it (trimmed: the callee inlined): a counter from 0 that only picks
// the row of xs (dynamic_slice) and of ys (dynamic_update_slice) at the trip. It converts to one
// graph.repeat: xs, passed through the loop unchanged, stays outside and is sliced per trip;
// the ys buffer is carried as [T, rows, cols] and written in place, row by row.

func.func @main(%xs: tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %h0 = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
  %ys0 = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<3x2x4xf32>
  %0:4 = stablehlo.while(%x = %xs, %i = %c0, %h = %h0, %ys = %ys0) : tensor<3x2x4xf32>, tensor<i32>, tensor<2x4xf32>, tensor<3x2x4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %row = stablehlo.dynamic_slice %x, %i, %z, %z, sizes = [1, 2, 4] : (tensor<3x2x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x4xf32>
    %r = stablehlo.reshape %row : (tensor<1x2x4xf32>) -> tensor<2x4xf32>
    %s = stablehlo.add %h, %r : tensor<2x4xf32>
    %t = stablehlo.tanh %s : tensor<2x4xf32>
    %u = stablehlo.reshape %t : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
    %ys2 = stablehlo.dynamic_update_slice %ys, %u, %i, %z, %z : (tensor<3x2x4xf32>, tensor<1x2x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3x2x4xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %x, %i2, %t, %ys2 : tensor<3x2x4xf32>, tensor<i32>, tensor<2x4xf32>, tensor<3x2x4xf32>
  }
  return %0#3 : tensor<3x2x4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK:         graph.repeat 3 iter(%[[H:.*]] = %{{.*}}, %[[YS:.*]] = %{{.*}}) : (tensor<2x4xf32>, tensor<3x2x4xf32>) {
// CHECK-NEXT:      %[[ROW:.*]] = graph.iteration_slice %arg0 : tensor<3x2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:      %[[S:.*]] = graph.add %[[H]], %[[ROW]]
// CHECK-NEXT:      %[[T:.*]] = graph.tanh %[[S]]
// CHECK-NEXT:      %[[Y:.*]] = graph.iteration_store %[[YS]], %[[T]] : tensor<3x2x4xf32>, tensor<2x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:      graph.yield %[[T]], %[[Y]]
// CHECK-NOT:     graph.tanh

// EMU: PASS
