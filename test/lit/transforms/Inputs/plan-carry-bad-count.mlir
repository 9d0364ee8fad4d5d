// plan-carry.mlir's refusal: a plan.carry of the wrong length (one entry per carried value).
func.func @main(%x: tensor<16x96xf16>) -> tensor<16x96xf16> {
  %y.out = graph.repeat 4 iter(%y.in = %x) : (tensor<16x96xf16>) {
    %s = graph.add %y.in, %y.in : (tensor<16x96xf16>, tensor<16x96xf16>) -> tensor<16x96xf16>
    graph.yield %s : tensor<16x96xf16>
  } {plan.carry = []}
  func.return %y.out : tensor<16x96xf16>
}
