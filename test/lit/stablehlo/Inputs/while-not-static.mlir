// A while whose trip count is an argument: not static.
func.func @main(%x: tensor<4x8xf32>, %n: tensor<i32>) -> tensor<4x8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%h = %x, %i = %c0) : tensor<4x8xf32>, tensor<i32>
  cond {
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %t = stablehlo.tanh %h : tensor<4x8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %t, %j : tensor<4x8xf32>, tensor<i32>
  }
  return %r#0 : tensor<4x8xf32>
}
