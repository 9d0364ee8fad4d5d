// RUN: ipu-opt %s --target sim64 -p 'plan-ops{finalists=1}' | filecheck %s
// RUN: ipu-run %s --target sim64 --check all --poison | filecheck %s --check-prefix=EMU

// A residual add read by a layer norm: 8 rows of 1024 on sim64, where the norm runs split in
// column blocks ([4 x 16] blocks of 2 rows by 64 columns, its statistics gathered over each
// row's tiles). The add's operands both need a move (the matmul's result and the input are in
// different layouts), so the add is computed in the norm's layout: the two moves share one
// exchange and the norm reads the sum as it is, where the rhs used to move before the add and
// the sum after it (two exchanges; 20,279 -> 19,875 cycles).

// CHECK-LABEL: func.func @main
// CHECK:       %y_r = plan.rearrange %y {reason = "graph.add"} : {{.*}} -> !plan.tensor<8x1024xf16, #plan.layout<grid = [4, 16], split = {{\[\[}}0], [1]], memory = standard>>
// CHECK-NEXT:  %x_r = plan.rearrange %x {reason = "graph.add"} : {{.*}} -> !plan.tensor<8x1024xf16, #plan.layout<grid = [4, 16], split = {{\[\[}}0], [1]], memory = standard>>
// CHECK-NEXT:  %r = plan.binary "add" %y_r, %x_r
// CHECK-NOT:   plan.rearrange
// CHECK:       %n = plan.rowwise "layer_norm" %r,

// EMU: numericalTest=PASS
// EMU: estimatedOverEmulated=1.0000
func.func @main(%x: tensor<8x1024xf16>) -> tensor<8x1024xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<1024x1024xf16>
  %g = graph.parameter "g" dense<1.0> : tensor<1024xf16> : tensor<1024xf16>
  %b = graph.parameter "b" dense<0.0> : tensor<1024xf16> : tensor<1024xf16>
  %y = graph.matmul %x, %w : (tensor<8x1024xf16>, tensor<1024x1024xf16>) -> tensor<8x1024xf16>
  %r = graph.add %y, %x : (tensor<8x1024xf16>, tensor<8x1024xf16>) -> tensor<8x1024xf16>
  %n = graph.layer_norm %r, %g, %b : (tensor<8x1024xf16>, tensor<1024xf16>, tensor<1024xf16>) -> tensor<8x1024xf16>
  func.return %n : tensor<8x1024xf16>
}
