// plan-carry.mlir's refusal: a plan.carry layout that does not fit its value (three axes split for two).
func.func @main(%x: tensor<16x96xf16>) -> tensor<16x96xf16> {
  %y.out = graph.repeat 4 iter(%y.in = %x) : (tensor<16x96xf16>) {
    %s = graph.add %y.in, %y.in : (tensor<16x96xf16>, tensor<16x96xf16>) -> tensor<16x96xf16>
    graph.yield %s : tensor<16x96xf16>
  } {plan.carry = [#plan.layout<grid = [1, 6, 2], split = [[0], [1], [2]]>]}
  func.return %y.out : tensor<16x96xf16>
}
