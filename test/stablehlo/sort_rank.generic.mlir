"builtin.module"() <{sym_name = "jit_sort_rank"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg16: tensor<4x8xf32>):
    %70 = "func.call"(%arg16) <{callee = @sort}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %71 = "func.call"(%arg16) <{callee = @argsort}> : (tensor<4x8xf32>) -> tensor<4x8xi32>
    %72 = "func.call"(%arg16) <{callee = @sort_0}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %73 = "func.call"(%arg16) <{callee = @argsort_1}> : (tensor<4x8xf32>) -> tensor<4x8xi32>
    "func.return"(%70, %71, %72, %73) : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x8xf32>) -> tensor<4x8xf32>, res_attrs = [{}], sym_name = "sort", sym_visibility = "private"}> ({
  ^bb0(%arg13: tensor<4x8xf32>):
    %54 = "stablehlo.sort"(%arg13) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
      %55 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %56 = "stablehlo.compare"(%arg14, %55) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %57 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %58 = "stablehlo.select"(%56, %57, %arg14) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %59 = "stablehlo.compare"(%arg14, %arg14) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %60 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %61 = "stablehlo.select"(%59, %60, %58) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %62 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %63 = "stablehlo.compare"(%arg15, %62) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %64 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %65 = "stablehlo.select"(%63, %64, %arg15) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %66 = "stablehlo.compare"(%arg15, %arg15) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %67 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %68 = "stablehlo.select"(%66, %67, %65) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %69 = "stablehlo.compare"(%61, %68) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%69) : (tensor<i1>) -> ()
    }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%54) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x8xf32>) -> tensor<4x8xi32>, res_attrs = [{}], sym_name = "argsort", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<4x8xf32>):
    %37 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4x8xi32>
    %38:2 = "stablehlo.sort"(%arg8, %37) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>, %arg11: tensor<i32>, %arg12: tensor<i32>):
      %39 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %40 = "stablehlo.compare"(%arg9, %39) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %41 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %42 = "stablehlo.select"(%40, %41, %arg9) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %43 = "stablehlo.compare"(%arg9, %arg9) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %44 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %45 = "stablehlo.select"(%43, %44, %42) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %46 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %47 = "stablehlo.compare"(%arg10, %46) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %48 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %49 = "stablehlo.select"(%47, %48, %arg10) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %50 = "stablehlo.compare"(%arg10, %arg10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %51 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %52 = "stablehlo.select"(%50, %51, %49) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %53 = "stablehlo.compare"(%45, %52) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%53) : (tensor<i1>) -> ()
    }) : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
    "func.return"(%38#1) : (tensor<4x8xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x8xf32>) -> tensor<4x8xf32>, res_attrs = [{}], sym_name = "sort_0", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<4x8xf32>):
    %20 = "stablehlo.sort"(%arg5) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %22 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %23 = "stablehlo.compare"(%arg6, %22) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %24 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %25 = "stablehlo.select"(%23, %24, %arg6) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %26 = "stablehlo.compare"(%arg6, %arg6) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %27 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %28 = "stablehlo.select"(%26, %27, %25) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %29 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %30 = "stablehlo.compare"(%arg7, %29) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %31 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %32 = "stablehlo.select"(%30, %31, %arg7) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %33 = "stablehlo.compare"(%arg7, %arg7) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %34 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %35 = "stablehlo.select"(%33, %34, %32) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %36 = "stablehlo.compare"(%28, %35) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%36) : (tensor<i1>) -> ()
    }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %21 = "stablehlo.reverse"(%20) <{dimensions = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%21) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x8xf32>) -> tensor<4x8xi32>, res_attrs = [{}], sym_name = "argsort_1", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x8xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4x8xi32>
    %1 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64: 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %2 = "stablehlo.reverse"(%0) <{dimensions = array<i64: 0>}> : (tensor<4x8xi32>) -> tensor<4x8xi32>
    %3:2 = "stablehlo.sort"(%1, %2) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %5 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %6 = "stablehlo.compare"(%arg1, %5) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %7 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %8 = "stablehlo.select"(%6, %7, %arg1) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %9 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %10 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %11 = "stablehlo.select"(%9, %10, %8) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %12 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %13 = "stablehlo.compare"(%arg2, %12) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %14 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %15 = "stablehlo.select"(%13, %14, %arg2) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %16 = "stablehlo.compare"(%arg2, %arg2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %17 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %18 = "stablehlo.select"(%16, %17, %15) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %19 = "stablehlo.compare"(%11, %18) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%19) : (tensor<i1>) -> ()
    }) : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
    %4 = "stablehlo.reverse"(%3#1) <{dimensions = array<i64: 0>}> : (tensor<4x8xi32>) -> tensor<4x8xi32>
    "func.return"(%4) : (tensor<4x8xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
