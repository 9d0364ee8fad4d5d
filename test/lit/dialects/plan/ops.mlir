// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// Trimmed from `ipu-opt -p plan-ops --target sim16` on a gelu -> matmul -> add block.

// CHECK-LABEL: func.func @split_contraction
// CHECK-SAME: (%x: !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>>)
func.func @split_contraction(%x: !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>) -> !plan.tensor<64x256xf16, #plan.layout<grid = [1, 8, 2], split = [[0], [1, 2]], memory = standard>> {
  // CHECK: %g = plan.unary "gelu" %x {value = "g"} : !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>> -> !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>>
  %g = plan.unary "gelu" %x {value = "g"} : !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>
  // CHECK-NEXT: %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [2]], memory = interleaved>>
  %g_r = plan.rearrange %g {reason = "graph.matmul"} : !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 8, 2], split = [[0], [2]], memory = interleaved>>
  // CHECK-NEXT: %w2 = plan.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : !plan.tensor<1024x256xf16, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}2], [1]], align = [2, 32], memory = interleaved>>
  %w2 = plan.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : !plan.tensor<1024x256xf16, #plan.layout<grid = [1, 8, 2], split = [[2], [1]], align = [2, 32], memory = interleaved>>
  // CHECK-NEXT: %y_partial = plan.gemm %g_r, %w2 : ({{.*}}) -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [1]], partial = 2, align = [1, 32], memory = interleaved>>
  %y_partial = plan.gemm %g_r, %w2 : (!plan.tensor<64x1024xf16, #plan.layout<grid = [1, 8, 2], split = [[0], [2]], memory = interleaved>>, !plan.tensor<1024x256xf16, #plan.layout<grid = [1, 8, 2], split = [[2], [1]], align = [2, 32], memory = interleaved>>) -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 8, 2], split = [[0], [1]], partial = 2, align = [1, 32], memory = interleaved>>
  // CHECK-NEXT: %y = plan.reduce %y_partial {value = "y"} : {{.*}} -> !plan.tensor<64x256xf16, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [1, 2]], memory = standard>>
  %y = plan.reduce %y_partial {value = "y"} : !plan.tensor<64x256xf32, #plan.layout<grid = [1, 8, 2], split = [[0], [1]], partial = 2, align = [1, 32], memory = interleaved>> -> !plan.tensor<64x256xf16, #plan.layout<grid = [1, 8, 2], split = [[0], [1, 2]], memory = standard>>
  // CHECK-NEXT: %b2 = plan.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : !plan.tensor<256xf16, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}1, 2]], memory = standard>>
  %b2 = plan.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : !plan.tensor<256xf16, #plan.layout<grid = [1, 8, 2], split = [[1, 2]], memory = standard>>
  // CHECK-NEXT: %yb = plan.binary "add" %y, %b2 {value = "yb"} : ({{.*}}) -> !plan.tensor<64x256xf16, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [1, 2]], memory = standard>>
  %yb = plan.binary "add" %y, %b2 {value = "yb"} : (!plan.tensor<64x256xf16, #plan.layout<grid = [1, 8, 2], split = [[0], [1, 2]], memory = standard>>, !plan.tensor<256xf16, #plan.layout<grid = [1, 8, 2], split = [[1, 2]], memory = standard>>) -> !plan.tensor<64x256xf16, #plan.layout<grid = [1, 8, 2], split = [[0], [1, 2]], memory = standard>>
  // CHECK-NEXT: func.return %yb
  func.return %yb : !plan.tensor<64x256xf16, #plan.layout<grid = [1, 8, 2], split = [[0], [1, 2]], memory = standard>>
}

// -----

// Layout fields print in a fixed order; defaults (partial = -1, first = 0, no align) are omitted.
// CHECK-LABEL: func.func @layout_fields
func.func @layout_fields() -> (!plan.tensor<8x8xf32, #plan.layout<grid = [2, 2], split = [[0], []], first = 4, memory = standard>>, !plan.tensor<8x8xf32, #plan.layout<grid = [2], split = [[0], []], partial = -1, first = 0, memory = standard>>) {
  // CHECK: %a = plan.parameter "a" dense<1.000000e+00> : tensor<8x8xf32> : !plan.tensor<8x8xf32, #plan.layout<grid = [2, 2], split = {{\[\[}}0], []], first = 4, memory = standard>>
  %a = plan.parameter "a" dense<1.0> : tensor<8x8xf32> : !plan.tensor<8x8xf32, #plan.layout<memory = standard, first = 4, grid = [2, 2], split = [[0], []]>>
  // CHECK-NEXT: %b = plan.parameter "b" dense<2.000000e+00> : tensor<8x8xf32> : !plan.tensor<8x8xf32, #plan.layout<grid = [2], split = {{\[\[}}0], []], memory = standard>>
  %b = plan.parameter "b" dense<2.0> : tensor<8x8xf32> : !plan.tensor<8x8xf32, #plan.layout<grid = [2], split = [[0], []], partial = -1, first = 0, memory = standard>>
  func.return %a, %b : !plan.tensor<8x8xf32, #plan.layout<grid = [2, 2], split = [[0], []], first = 4, memory = standard>>, !plan.tensor<8x8xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
}

// -----

// CHECK-LABEL: func.func @transpose_reshape
func.func @transpose_reshape(%x: !plan.tensor<8x4xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>) -> !plan.tensor<16x2xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> {
  // CHECK: %t = plan.transpose %x {value = "t"} : !plan.tensor<8x4xf32, #plan.layout<grid = [2], split = {{\[\[}}0], []], memory = standard>> -> !plan.tensor<4x8xf32, #plan.layout<grid = [2], split = {{\[}}[], [0]], memory = standard>>
  %t = plan.transpose %x {value = "t"} : !plan.tensor<8x4xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> -> !plan.tensor<4x8xf32, #plan.layout<grid = [2], split = [[], [0]], memory = standard>>
  // CHECK-NEXT: %r = plan.reshape %x {value = "r"} : !plan.tensor<8x4xf32, {{.*}}> -> !plan.tensor<16x2xf32, #plan.layout<grid = [2], split = {{\[\[}}0], []], memory = standard>>
  %r = plan.reshape %x {value = "r"} : !plan.tensor<8x4xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> -> !plan.tensor<16x2xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
  // CHECK-NEXT: %s = plan.binary "mul" %r, %r : {{.*}}
  %s = plan.binary "mul" %r, %r : (!plan.tensor<16x2xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>, !plan.tensor<16x2xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>) -> !plan.tensor<16x2xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
  // CHECK-NEXT: %u = plan.unary "relu" %s : {{.*}}
  %u = plan.unary "relu" %s : !plan.tensor<16x2xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> -> !plan.tensor<16x2xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
  func.return %u : !plan.tensor<16x2xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
}

// A unit axis added over a 3-D grid (GPT-2's logits, [32, 256] -> [1, 32, 256]): the same blocks,
// the split carried to its axis. No alignment on either side (was refused: the view the verifier
// built carried an all-ones alignment, which compared unequal to none).
// CHECK-LABEL: func.func @unit_axis
func.func @unit_axis(%x: !plan.tensor<32x256xf32, #plan.layout<grid = [4, 16, 1], split = [[0], [1]], memory = standard>>) -> !plan.tensor<1x32x256xf32, #plan.layout<grid = [4, 16, 1], split = [[], [0], [1]], memory = standard>> {
  // CHECK: %r = plan.reshape %x : {{.*}} -> !plan.tensor<1x32x256xf32, #plan.layout<grid = [4, 16, 1], split = {{\[\[}}], [0], [1]], memory = standard>>
  %r = plan.reshape %x : !plan.tensor<32x256xf32, #plan.layout<grid = [4, 16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<1x32x256xf32, #plan.layout<grid = [4, 16, 1], split = [[], [0], [1]], memory = standard>>
  func.return %r : !plan.tensor<1x32x256xf32, #plan.layout<grid = [4, 16, 1], split = [[], [0], [1]], memory = standard>>
}
