// plan-carry.mlir's loop with its carried layout pinned (`plan.carry`, one entry per carried value).
func.func @main(%x: tensor<16x96xf16>, %w: tensor<96x96xf16>, %g: tensor<96xf16>) -> tensor<16x96xf16> {
  %x2 = graph.neg %x : tensor<16x96xf16> -> tensor<16x96xf16>
  %y.out = graph.repeat 4 iter(%y.in = %x2) : (tensor<16x96xf16>) {
    %n = graph.rms_norm %y.in, %g : (tensor<16x96xf16>, tensor<96xf16>) -> tensor<16x96xf16>
    %h = graph.matmul %n, %w : (tensor<16x96xf16>, tensor<96x96xf16>) -> tensor<16x96xf16>
    %s = graph.add %h, %y.in : (tensor<16x96xf16>, tensor<16x96xf16>) -> tensor<16x96xf16>
    graph.yield %s : tensor<16x96xf16>
  } {plan.carry = [#plan.layout<grid = [1, 6, 2], split = [[0], [1, 2]]>]}
  func.return %y.out : tensor<16x96xf16>
}
