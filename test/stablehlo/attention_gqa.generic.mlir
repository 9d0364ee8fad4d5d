"builtin.module"() <{sym_name = "jit_attend"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<1x32x4x16xf32>, tensor<1x32x2x16xf32>, tensor<1x32x2x16xf32>) -> tensor<1x32x4x16xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg4: tensor<1x32x4x16xf32>, %arg5: tensor<1x32x2x16xf32>, %arg6: tensor<1x32x2x16xf32>):
    %13 = "stablehlo.broadcast_in_dim"(%arg5) <{broadcast_dimensions = array<i64: 0, 1, 2, 4>}> : (tensor<1x32x2x16xf32>) -> tensor<1x32x2x2x16xf32>
    %14 = "stablehlo.reshape"(%13) : (tensor<1x32x2x2x16xf32>) -> tensor<1x32x4x16xf32>
    %15 = "stablehlo.broadcast_in_dim"(%arg6) <{broadcast_dimensions = array<i64: 0, 1, 2, 4>}> : (tensor<1x32x2x16xf32>) -> tensor<1x32x2x2x16xf32>
    %16 = "stablehlo.reshape"(%15) : (tensor<1x32x2x2x16xf32>) -> tensor<1x32x4x16xf32>
    %17 = "stablehlo.dot_general"(%arg4, %14) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<1x32x4x16xf32>, tensor<1x32x4x16xf32>) -> tensor<1x4x32x32xf32>
    %18 = "stablehlo.constant"() <{value = dense<4.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x4x32x32xf32>
    %20 = "stablehlo.divide"(%17, %19) : (tensor<1x4x32x32xf32>, tensor<1x4x32x32xf32>) -> tensor<1x4x32x32xf32>
    %21 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<32x32xi1>
    %23 = "func.call"(%22) <{callee = @tril}> : (tensor<32x32xi1>) -> tensor<32x32xi1>
    %24 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %25 = "func.call"(%23, %20, %24) <{callee = @_where}> : (tensor<32x32xi1>, tensor<1x4x32x32xf32>, tensor<f32>) -> tensor<1x4x32x32xf32>
    %26 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %27 = "stablehlo.reduce"(%25, %26) <{dimensions = array<i64: 3>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %43 = "stablehlo.maximum"(%arg9, %arg10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%43) : (tensor<f32>) -> ()
    }) : (tensor<1x4x32x32xf32>, tensor<f32>) -> tensor<1x4x32xf32>
    %28 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %29 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x4x32xf32>
    %30 = "stablehlo.maximum"(%29, %27) : (tensor<1x4x32xf32>, tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
    %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x4x32xf32>) -> tensor<1x4x32x1xf32>
    %32 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x4x32x1xf32>) -> tensor<1x4x32x32xf32>
    %33 = "stablehlo.subtract"(%25, %32) : (tensor<1x4x32x32xf32>, tensor<1x4x32x32xf32>) -> tensor<1x4x32x32xf32>
    %34 = "stablehlo.exponential"(%33) : (tensor<1x4x32x32xf32>) -> tensor<1x4x32x32xf32>
    %35 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %36 = "stablehlo.reduce"(%34, %35) <{dimensions = array<i64: 3>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %42 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%42) : (tensor<f32>) -> ()
    }) : (tensor<1x4x32x32xf32>, tensor<f32>) -> tensor<1x4x32xf32>
    %37 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x4x32xf32>) -> tensor<1x4x32x1xf32>
    %38 = "stablehlo.broadcast_in_dim"(%37) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x4x32x1xf32>) -> tensor<1x4x32x32xf32>
    %39 = "stablehlo.divide"(%34, %38) : (tensor<1x4x32x32xf32>, tensor<1x4x32x32xf32>) -> tensor<1x4x32x32xf32>
    %40 = "stablehlo.dot_general"(%16, %39) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<1x32x4x16xf32>, tensor<1x4x32x32xf32>) -> tensor<1x4x16x32xf32>
    %41 = "stablehlo.transpose"(%40) <{permutation = array<i64: 0, 3, 1, 2>}> : (tensor<1x4x16x32xf32>) -> tensor<1x32x4x16xf32>
    "func.return"(%41) : (tensor<1x32x4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<32x32xi1>) -> tensor<32x32xi1>, res_attrs = [{}], sym_name = "tril", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<32x32xi1>):
    %4 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<32x32xi32>
    %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<32x32xi32>
    %7 = "stablehlo.add"(%4, %6) : (tensor<32x32xi32>, tensor<32x32xi32>) -> tensor<32x32xi32>
    %8 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<32x32xi32>
    %9 = "stablehlo.compare"(%7, %8) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<32x32xi32>, tensor<32x32xi32>) -> tensor<32x32xi1>
    %10 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<32x32xi1>
    %12 = "stablehlo.select"(%9, %arg3, %11) : (tensor<32x32xi1>, tensor<32x32xi1>, tensor<32x32xi1>) -> tensor<32x32xi1>
    "func.return"(%12) : (tensor<32x32xi1>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<32x32xi1>, tensor<1x4x32x32xf32>, tensor<f32>) -> tensor<1x4x32x32xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<32x32xi1>, %arg1: tensor<1x4x32x32xf32>, %arg2: tensor<f32>):
    %0 = "stablehlo.convert"(%arg2) : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 2, 3>}> : (tensor<32x32xi1>) -> tensor<1x4x32x32xi1>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x4x32x32xf32>
    %3 = "stablehlo.select"(%1, %arg1, %2) : (tensor<1x4x32x32xi1>, tensor<1x4x32x32xf32>, tensor<1x4x32x32xf32>) -> tensor<1x4x32x32xf32>
    "func.return"(%3) : (tensor<1x4x32x32xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
