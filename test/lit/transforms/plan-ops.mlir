// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefixes=CHECK,SIM16
// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim64 finalists=1}' --target sim64 | filecheck %s --check-prefixes=CHECK,SIM64

// The second half of examples/mlp_small.mlir: the matmul splits its contraction (grid pm x pn x pk
// with pk > 1), so the gemm yields an f32 partial sum reduced by plan.reduce, and gelu's
// default layout is rearranged into the gemm's lhs layout (the lhs lives in standard memory;
// only the rhs weights and the result are interleaved).
func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}

// CHECK-NOT: graph.
// SIM16:      func.func @main(%x: !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>>)
// SIM16-SAME: attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]}
// SIM64:      func.func @main(%x: !plan.tensor<64x1024xf16, #plan.layout<grid = [64, 1], split = {{\[\[}}0], [1]], memory = standard>>)
// SIM64-SAME: attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]}
// CHECK-NEXT: %g = plan.unary "gelu" %x {value = "g"}
// SIM16-NEXT: %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard>>
// SIM64-NEXT: %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 8, 8], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard>>
// SIM16-NEXT: %w2 = plan.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : !plan.tensor<1024x256xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}2], [1]], align = [2, 64], memory = interleaved>>
// SIM64-NEXT: %w2 = plan.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : !plan.tensor<1024x256xf16, #plan.layout<grid = [1, 8, 8], split = {{\[\[}}2], [1]], align = [2, 32], memory = interleaved>>
// CHECK-NEXT: %y_partial = plan.gemm %g_r, %w2 : (
// SIM16-SAME: -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1]], partial = 2, align = [1, 64], memory = interleaved>>
// SIM64-SAME: -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 8, 8], split = {{\[\[}}0], [1]], partial = 2, align = [1, 32], memory = interleaved>>
// CHECK-NEXT: %y = plan.reduce %y_partial {value = "y"} :
// SIM16-SAME: -> !plan.tensor<64x256xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1, 2]], memory = standard>>
// SIM64-SAME: -> !plan.tensor<64x256xf16, #plan.layout<grid = [1, 8, 8], split = {{\[\[}}0], [1, 2]], memory = standard>>
// SIM16-NEXT: %b2 = plan.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : !plan.tensor<256xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}1, 2]], memory = standard>>
// SIM64-NEXT: %b2 = plan.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : !plan.tensor<256xf16, #plan.layout<grid = [1, 8, 8], split = {{\[\[}}1, 2]], memory = standard>>
// CHECK-NEXT: %yb = plan.binary "add" %y, %b2 {value = "yb"}
// CHECK-NEXT: func.return %yb

// -----

// A transpose of a block with an odd row count first rearranges into an aligned layout.
func.func @transpose(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %b = graph.parameter "b" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : tensor<4xf32>
  %g = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %t = graph.transpose %g {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %y = graph.add %t, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @transpose
// SIM16-SAME: (%x: !plan.tensor<4x8xf32, #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard>>)
// SIM64-SAME: (%x: !plan.tensor<4x8xf32, #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], memory = standard>>)
// CHECK-NEXT: %g = plan.unary "relu" %x {value = "g"}
// CHECK-NEXT: %g_r = plan.rearrange %g {reason = "transpose alignment"} : {{.*}} -> !plan.tensor<4x8xf32, #plan.layout<grid = [4, 4], split = {{\[\[}}0], [1]], align = [2, 1], memory = standard>>
// CHECK-NEXT: %t = plan.transpose %g_r {value = "t"} : {{.*}} -> !plan.tensor<8x4xf32, #plan.layout<grid = [4, 4], split = {{\[\[}}1], [0]], align = [2, 2], memory = standard>>
// CHECK-NEXT: %b = plan.parameter "b" dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> : !plan.tensor<4xf32, #plan.layout<grid = [4, 4], split = {{\[\[}}0]], align = [2], memory = standard>>
// CHECK-NEXT: %y = plan.binary "add" %t, %b {value = "y"}
