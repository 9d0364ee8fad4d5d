// plan-carry.mlir's refusal: a plan.carry on an op that is not a loop.
func.func @main(%x: tensor<16x96xf16>) -> tensor<16x96xf16> {
  %y.out = graph.repeat 4 iter(%y.in = %x) : (tensor<16x96xf16>) {
    %s = graph.add %y.in, %y.in {plan.carry = []} : (tensor<16x96xf16>, tensor<16x96xf16>) -> tensor<16x96xf16>
    graph.yield %s : tensor<16x96xf16>
  }
  func.return %y.out : tensor<16x96xf16>
}
