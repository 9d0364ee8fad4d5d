// RUN: ipu-opt %s -p convert-stablehlo-to-graph | filecheck %s
// RUN: ipu-translate --import-stablehlo %s | filecheck %s
// RUN: ipu-run %s --target sim64 | filecheck %s --check-prefix=EMU

// JAX's attention with a causal mask (`jnp.where(tril, s, -inf)`, `jax.nn.softmax`, two einsums),
// a private function called twice and an MLP with tanh GeLU: the conversion reaches the ONNX
// path's canonical forms, graph.attention (causal, scale from the division, heads split from the
// einsum layouts, merged back), graph.gelu from its polynomial, graph.layer_norm from the
// mean / variance / rsqrt chain, and inlines the calls.

// CHECK-LABEL: func.func @main(%arg0: tensor<1x8x2x16xf32>, %arg1: tensor<1x8x2x16xf32>, %arg2: tensor<1x8x2x16xf32>, %arg3: tensor<8x32xf32>) -> (tensor<1x8x2x16xf32>, tensor<8x32xf32>)
// CHECK-SAME: ipu.inputs = ["arg0", "arg1", "arg2", "arg3"], ipu.outputs = ["out0", "out1"]
// CHECK-DAG:  graph.split_heads %{{.*}} {heads = 2 : i64
// CHECK:      graph.attention %{{.*}}, %{{.*}}, %{{.*}} {form = "materialized", causal, scale = 2.500000e-01 : f64
// CHECK:      graph.merge_heads
// CHECK:      graph.layer_norm %arg3
// CHECK:      graph.gelu
// CHECK-NOT:  = stablehlo.

// EMU: numericalTest=PASS
// EMU: totalCycles=
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x8x2x16xf32>, %arg1: tensor<1x8x2x16xf32>, %arg2: tensor<1x8x2x16xf32>, %arg3: tensor<8x32xf32>) -> (tensor<1x8x2x16xf32> {jax.result_info = "result[0]"}, tensor<8x32xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>) -> tensor<1x2x8x8xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x2x8x8xf32>
    %2 = stablehlo.divide %0, %1 : tensor<1x2x8x8xf32>
    %3 = stablehlo.iota dim = 0 : tensor<8x8xi32>
    %4 = stablehlo.iota dim = 1 : tensor<8x8xi32>
    %5 = stablehlo.compare GE, %3, %4, SIGNED : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %6 = stablehlo.broadcast_in_dim %5, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<1x2x8x8xi1>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x2x8x8xf32>
    %8 = stablehlo.select %6, %2, %7 : tensor<1x2x8x8xi1>, tensor<1x2x8x8xf32>
    %9 = stablehlo.reduce(%8 init: %cst_0) applies stablehlo.maximum across dimensions = [3] : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
    %11 = stablehlo.subtract %8, %10 : tensor<1x2x8x8xf32>
    %12 = stablehlo.exponential %11 : tensor<1x2x8x8xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.reduce(%12 init: %cst_1) applies stablehlo.add across dimensions = [3] : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1, 2] : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
    %15 = stablehlo.divide %12, %14 : tensor<1x2x8x8xf32>
    %16 = stablehlo.dot_general %arg2, %15, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x8x2x16xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x16x8xf32>
    %17 = stablehlo.transpose %16, dims = [0, 3, 1, 2] : (tensor<1x2x16x8xf32>) -> tensor<1x8x2x16xf32>
    %18 = call @norm(%arg3) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %19 = call @gelu(%18) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    return %17, %19 : tensor<1x8x2x16xf32>, tensor<8x32xf32>
  }
  func.func private @norm(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
    %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
    %n = stablehlo.constant dense<3.200000e+01> : tensor<8xf32>
    %m = stablehlo.divide %s, %n : tensor<8xf32>
    %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>
    %d = stablehlo.subtract %x, %mb : tensor<8x32xf32>
    %d2 = stablehlo.multiply %d, %d : tensor<8x32xf32>
    %v = stablehlo.reduce(%d2 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
    %vm = stablehlo.divide %v, %n : tensor<8xf32>
    %eps = stablehlo.constant dense<9.99999974E-6> : tensor<8xf32>
    %ve = stablehlo.add %vm, %eps : tensor<8xf32>
    %r = stablehlo.rsqrt %ve : tensor<8xf32>
    %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>
    %y = stablehlo.multiply %d, %rb : tensor<8x32xf32>
    return %y : tensor<8x32xf32>
  }
  func.func private @gelu(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
    %0 = stablehlo.multiply %x, %x : tensor<8x32xf32>
    %1 = stablehlo.multiply %0, %x : tensor<8x32xf32>
    %c0 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %b0 = stablehlo.broadcast_in_dim %c0, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %2 = stablehlo.multiply %b0, %1 : tensor<8x32xf32>
    %3 = stablehlo.add %x, %2 : tensor<8x32xf32>
    %c1 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %b1 = stablehlo.broadcast_in_dim %c1, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %4 = stablehlo.multiply %b1, %3 : tensor<8x32xf32>
    %5 = stablehlo.tanh %4 : tensor<8x32xf32>
    %c2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %b2 = stablehlo.broadcast_in_dim %c2, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %6 = stablehlo.add %b2, %5 : tensor<8x32xf32>
    %c3 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %b3 = stablehlo.broadcast_in_dim %c3, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %7 = stablehlo.multiply %b3, %6 : tensor<8x32xf32>
    %8 = stablehlo.multiply %x, %7 : tensor<8x32xf32>
    return %8 : tensor<8x32xf32>
  }
}
