// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// A slice (the window inside its input) and a pad or concatenation part (negative offsets: the
// input placed inside a zero result).
// CHECK-LABEL: func.func @slice
func.func @slice(%x: !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> {
  // CHECK: %s = plan.window %x {offsets = array<i64: 2, 8>, value = "s"} : !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
  %s = plan.window %x {offsets = array<i64: 2, 8>, value = "s"} : !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
  func.return %s : !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
}

// CHECK-LABEL: func.func @pad
func.func @pad(%x: !plan.tensor<2x3x8xf16, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>) -> !plan.tensor<2x5x8xf16, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>> {
  // CHECK: %p = plan.window %x {offsets = array<i64: 0, -2, 0>} : !plan.tensor<2x3x8xf16
  %p = plan.window %x {offsets = array<i64: 0, -2, 0>} : !plan.tensor<2x3x8xf16, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>> -> !plan.tensor<2x5x8xf16, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>
  func.return %p : !plan.tensor<2x5x8xf16, #plan.layout<grid = [2], split = [[0], [], []], memory = standard>>
}
