// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s -p convert-stablehlo-to-graph | filecheck %s --check-prefix=GRAPH
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU
// RUN: not ipu-opt %S/Inputs/while-not-static.mlir -p convert-stablehlo-to-graph 2>&1 | filecheck %s --check-prefix=NOTSTATIC

// jax.lax.fori_loop(0, 3, ...) as JAX lowers it: a stablehlo.while whose carried counter starts
// at a constant, is compared LT with 3 and stepped by 1, printed back the same way (both regions
// name the header's carried values); and a scan's output row written by dynamic_update_slice.
// The loop's counter does nothing but count, so it imports as one graph.repeat of the body;
// the update after it, at a constant row, is a static one.
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<4x8xf32>, %acc: tensor<3x4x8xf32>) -> (tensor<4x8xf32>, tensor<3x4x8xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  // CHECK: %r, %r_1 = stablehlo.while(%h = %x, %i = %c0) : tensor<4x8xf32>, tensor<i32> cond {
  // CHECK-NEXT:   %n = stablehlo.constant dense<3> : tensor<i32>
  // CHECK-NEXT:   %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  // CHECK-NEXT:   stablehlo.return %p : tensor<i1>
  // CHECK-NEXT: } do {
  // CHECK-NEXT:   %t = stablehlo.tanh %h : tensor<4x8xf32>
  // CHECK-NEXT:   %one = stablehlo.constant dense<1> : tensor<i32>
  // CHECK-NEXT:   %j = stablehlo.add %i, %one : tensor<i32>
  // CHECK-NEXT:   stablehlo.return %t, %j : tensor<4x8xf32>, tensor<i32>
  // CHECK-NEXT: }
  %r:2 = stablehlo.while(%h = %x, %i = %c0) : tensor<4x8xf32>, tensor<i32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %t = stablehlo.tanh %h : tensor<4x8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %t, %j : tensor<4x8xf32>, tensor<i32>
  }
  %row = stablehlo.reshape %r#0 : (tensor<4x8xf32>) -> tensor<1x4x8xf32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  // CHECK: %u = stablehlo.dynamic_update_slice %acc, %row, %c1, %c0, %c0 : (tensor<3x4x8xf32>, tensor<1x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3x4x8xf32>
  %u = stablehlo.dynamic_update_slice %acc, %row, %c1, %c0, %c0 : (tensor<3x4x8xf32>, tensor<1x4x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3x4x8xf32>
  return %r#0, %u : tensor<4x8xf32>, tensor<3x4x8xf32>
}

// one loop of three trips of the body, then the update: the row between the accumulator's rows
// around it (on the importer's [rows, last] collapse of the rank-3 value)
// GRAPH:         %loop = graph.repeat 3 iter(%[[H:.*]] = %arg0) : (tensor<4x8xf32>) {
// GRAPH-NEXT:      %tanh = graph.tanh %[[H]]
// GRAPH-NEXT:      graph.yield %tanh : tensor<4x8xf32>
// GRAPH-NEXT:    }
// GRAPH-NOT:     graph.tanh
// GRAPH:         %slice = graph.slice %[[A:.*]] {starts = array<i64: 0, 0>, {{.*}}} : tensor<12x8xf32> -> tensor<4x8xf32>
// GRAPH-NEXT:    %slice.1 = graph.slice %[[A]] {starts = array<i64: 8, 0>, {{.*}}} : tensor<12x8xf32> -> tensor<4x8xf32>
// GRAPH-NEXT:    %update = graph.concat %slice, %loop, %slice.1 {axis = 0 : i64

// EMU: numericalTest=PASS

// NOTSTATIC: stablehlo import: stablehlo.while: only a loop with a static trip count imports
