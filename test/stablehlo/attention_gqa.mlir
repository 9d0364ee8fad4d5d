module @jit_attend attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x32x4x16xf32>, %arg1: tensor<1x32x2x16xf32>, %arg2: tensor<1x32x2x16xf32>) -> (tensor<1x32x4x16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1, 2, 4] : (tensor<1x32x2x16xf32>) -> tensor<1x32x2x2x16xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x32x2x2x16xf32>) -> tensor<1x32x4x16xf32>
    %2 = stablehlo.broadcast_in_dim %arg2, dims = [0, 1, 2, 4] : (tensor<1x32x2x16xf32>) -> tensor<1x32x2x2x16xf32>
    %3 = stablehlo.reshape %2 : (tensor<1x32x2x2x16xf32>) -> tensor<1x32x4x16xf32>
    %4 = stablehlo.dot_general %arg0, %1, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x32x4x16xf32>, tensor<1x32x4x16xf32>) -> tensor<1x4x32x32xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x4x32x32xf32>
    %6 = stablehlo.divide %4, %5 : tensor<1x4x32x32xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<32x32xi1>
    %8 = call @tril(%7) : (tensor<32x32xi1>) -> tensor<32x32xi1>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %9 = call @_where(%8, %6, %cst_0) : (tensor<32x32xi1>, tensor<1x4x32x32xf32>, tensor<f32>) -> tensor<1x4x32x32xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst_1) applies stablehlo.maximum across dimensions = [3] : (tensor<1x4x32x32xf32>, tensor<f32>) -> tensor<1x4x32xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<1x4x32xf32>
    %12 = stablehlo.maximum %11, %10 : tensor<1x4x32xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1, 2] : (tensor<1x4x32xf32>) -> tensor<1x4x32x1xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1, 2, 3] : (tensor<1x4x32x1xf32>) -> tensor<1x4x32x32xf32>
    %15 = stablehlo.subtract %9, %14 : tensor<1x4x32x32xf32>
    %16 = stablehlo.exponential %15 : tensor<1x4x32x32xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.reduce(%16 init: %cst_3) applies stablehlo.add across dimensions = [3] : (tensor<1x4x32x32xf32>, tensor<f32>) -> tensor<1x4x32xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1, 2] : (tensor<1x4x32xf32>) -> tensor<1x4x32x1xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2, 3] : (tensor<1x4x32x1xf32>) -> tensor<1x4x32x32xf32>
    %20 = stablehlo.divide %16, %19 : tensor<1x4x32x32xf32>
    %21 = stablehlo.dot_general %3, %20, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x32x4x16xf32>, tensor<1x4x32x32xf32>) -> tensor<1x4x16x32xf32>
    %22 = stablehlo.transpose %21, dims = [0, 3, 1, 2] : (tensor<1x4x16x32xf32>) -> tensor<1x32x4x16xf32>
    return %22 : tensor<1x32x4x16xf32>
  }
  func.func private @tril(%arg0: tensor<32x32xi1>) -> tensor<32x32xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<32x32xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<32x32xi32>
    %2 = stablehlo.add %0, %1 : tensor<32x32xi32>
    %3 = stablehlo.iota dim = 1 : tensor<32x32xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<32x32xi32>, tensor<32x32xi32>) -> tensor<32x32xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<32x32xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<32x32xi1>, tensor<32x32xi1>
    return %6 : tensor<32x32xi1>
  }
  func.func private @_where(%arg0: tensor<32x32xi1>, %arg1: tensor<1x4x32x32xf32>, %arg2: tensor<f32>) -> tensor<1x4x32x32xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<32x32xi1>) -> tensor<1x4x32x32xi1>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<1x4x32x32xf32>
    %3 = stablehlo.select %1, %arg1, %2 : tensor<1x4x32x32xi1>, tensor<1x4x32x32xf32>
    return %3 : tensor<1x4x32x32xf32>
  }
}
