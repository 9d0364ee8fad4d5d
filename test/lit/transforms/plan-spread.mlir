// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim64 finalists=1 spread=on}' | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim64 finalists=1 spread=off}' | filecheck %s --check-prefix=OFF
// RUN: not ipu-opt %s -p 'plan-ops{target=sim64 spread=sideways}' 2>&1 | filecheck %s --check-prefix=BAD

// Weights spread over the machine: each matmul's resident weight starts where the tiles hold
// least so far, and the gemm moves with it (its operands and result follow). Here each weight
// takes 16 of sim64's 64 tiles: the first at tile 0, the second from tile 16. Off, every layout
// starts at tile 0 and the low tiles hold both (the default). `auto` spreads when a function's
// weights would average 40 % of a tile's memory.

func.func @two(%x: tensor<1x64xf16>) -> tensor<1x64xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.1> : tensor<64x64xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 2, std = 0.1> : tensor<64x64xf16>
  %h = graph.matmul %x, %w1 : (tensor<1x64xf16>, tensor<64x64xf16>) -> tensor<1x64xf16>
  %y = graph.matmul %h, %w2 : (tensor<1x64xf16>, tensor<64x64xf16>) -> tensor<1x64xf16>
  func.return %y : tensor<1x64xf16>
}
// CHECK:      %w1 = plan.parameter "w1" {{.*}} #plan.layout<grid = [1, 4, 4], split = {{\[\[}}2], [1]], align = [2, 16], memory = interleaved>>
// CHECK:      %w2 = plan.parameter "w2" {{.*}} #plan.layout<grid = [1, 4, 4], split = {{\[\[}}2], [1]], first = 16, align = [2, 16], memory = interleaved>>
// CHECK-NEXT: %y_partial = plan.gemm %h_r, %w2 : (!plan.tensor<1x64xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [2]], first = 16,

// OFF-NOT:    first =

// BAD: plan-ops: spread must be one of auto, on, off, got 'sideways'
