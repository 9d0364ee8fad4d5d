// RUN: ipu-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @outside(%x: !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> {
  %s = plan.window %x {offsets = array<i64: 8, 0>} : !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
  func.return %s : !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
}
// CHECK: plan.window: offsets [8, 0] put (4, 6) outside (8, 16)

// -----

func.func @rank(%x: !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> {
  %s = plan.window %x {offsets = array<i64: 0>} : !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
  func.return %s : !plan.tensor<4x6xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
}
// CHECK: plan.window: 1 offsets for (8, 16) -> (4, 6)

// -----

func.func @odd_f16(%x: !plan.tensor<8x16xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<8x6xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>> {
  %s = plan.window %x {offsets = array<i64: 0, 3>} : !plan.tensor<8x16xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<8x6xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return %s : !plan.tensor<8x6xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
}
// CHECK: plan.window: a 2-byte window that moves or cuts the last axis needs an even offset and even last-axis sizes

// -----

func.func @types(%x: !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<8x6xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>> {
  %s = plan.window %x {offsets = array<i64: 0, 2>} : !plan.tensor<8x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<8x6xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return %s : !plan.tensor<8x6xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
}
// CHECK: plan.window: element types differ
