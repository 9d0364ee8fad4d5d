// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A rank-4 input and output with a leading unit axis (an ONNX [1, C, H, W] tensor) and its row
// collapse: both reshapes cut the first non-unit axis and the rows alike over 8 tiles (a
// contiguous range of elements per tile), not the whole tensor onto one tile.
func.func @main(%x: tensor<1x8x4x6xf32>) -> tensor<1x8x4x6xf32> {
  %f = graph.reshape %x : tensor<1x8x4x6xf32> -> tensor<32x6xf32>
  %e = graph.exp %f : tensor<32x6xf32> -> tensor<32x6xf32>
  %y = graph.reshape %e : tensor<32x6xf32> -> tensor<1x8x4x6xf32>
  func.return %y : tensor<1x8x4x6xf32>
}

// PLAN: func.func @main(%x: !plan.tensor<1x8x4x6xf32, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>>)
// PLAN: %f = plan.reshape %x {value = "f"} : !plan.tensor<1x8x4x6xf32, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>> -> !plan.tensor<32x6xf32, #plan.layout<grid = [8], split = [[0], []], memory = standard>>
// PLAN: %e = plan.unary "exp" %f
// PLAN: %y = plan.reshape %e {value = "y"} : !plan.tensor<32x6xf32, #plan.layout<grid = [8], split = [[0], []], memory = standard>> -> !plan.tensor<1x8x4x6xf32, #plan.layout<grid = [8], split = [[], [0], [], []], memory = standard>>

// EMU: output=output0 samples=192 maximumAbsoluteError=
// EMU: numericalTest=PASS
