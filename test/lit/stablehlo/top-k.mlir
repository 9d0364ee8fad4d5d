// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s -p convert-stablehlo-to-graph | filecheck %s --check-prefix=GRAPH
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// jax.lax.top_k as JAX writes it (a mixture-of-experts router's top 2 of 8 experts): chlo.top_k
// prints back the same way and converts to two rounds of an arg reduction (values sorted, the
// lower index first among equal values), its i32 indices as JAX gives them.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<4x8xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
// GRAPH-COUNT-2: graph.arg_reduce
// GRAPH-NOT:     = chlo.
// EMU: numericalTest=PASS
func.func @main(%arg0: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>) {
  %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<4x8xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
  return %values, %indices : tensor<4x2xf32>, tensor<4x2xi32>
}
