// RUN: IPU_ROUNDTRIP


// CHECK-LABEL: func.func @unsplit_contraction
func.func @unsplit_contraction(%x: !plan.tensor<64x256xf16, #plan.layout<grid = [1, 16, 1], split = [[0], [2]], memory = interleaved>>) -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 16, 1], split = [[0], [1]], memory = interleaved>> {
  %w1 = plan.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : !plan.tensor<256x1024xf16, #plan.layout<grid = [1, 16, 1], split = [[2], [1]], align = [2, 1], memory = interleaved>>
  // CHECK: %h = plan.gemm %x, %w1 {value = "h"} : ({{.*}}) -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 16, 1], split = {{\[\[}}0], [1]], memory = interleaved>>
  %h = plan.gemm %x, %w1 {value = "h"} : (!plan.tensor<64x256xf16, #plan.layout<grid = [1, 16, 1], split = [[0], [2]], memory = interleaved>>, !plan.tensor<256x1024xf16, #plan.layout<grid = [1, 16, 1], split = [[2], [1]], align = [2, 1], memory = interleaved>>) -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 16, 1], split = [[0], [1]], memory = interleaved>>
  func.return %h : !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 16, 1], split = [[0], [1]], memory = interleaved>>
}
