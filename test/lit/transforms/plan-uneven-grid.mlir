// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-run %s --target sim16 --check all --poison | filecheck %s --check-prefix=EMU

// A matmul grid whose row and K splits do not divide the matmul (up to 16 parts, for at most
// 256 rows): 20 rows in 3 blocks of 7, K = 100 in 4 blocks of 26, the last blocks padded. The
// padding of K must add nothing to the sums: tile memory starts as 0xFF bytes (--poison), and
// every element is checked.

func.func @main(%x: tensor<20x100xf16>) -> tensor<20x40xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<100x40xf16>
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm, grid = [3, 1, 4]>} : (tensor<20x100xf16>, tensor<100x40xf16>) -> tensor<20x40xf16>
  %z = graph.gelu %y : tensor<20x40xf16> -> tensor<20x40xf16>
  func.return %z : tensor<20x40xf16>
}

// CHECK: %y_partial = plan.gemm %x, %w : (!plan.tensor<20x100xf16, #plan.layout<grid = [3, 1, 4], split = {{\[\[}}0], [2]], align = [1, 2], memory = {{[a-z]+}}>>, !plan.tensor<100x40xf16, #plan.layout<grid = [3, 1, 4], split = {{\[\[}}2], [1]]
// CHECK-SAME: -> !plan.tensor<20x40xf32, #plan.layout<grid = [3, 1, 4], split = {{\[\[}}0], [1]], partial = 2
// CHECK: plan.reduce %y_partial

// EMU: output=output0 samples=800
// EMU: numericalTest=PASS
