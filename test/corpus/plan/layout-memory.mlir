// plan/layout-memory: a small matmul/transpose/softmax model compiled for sim16, then damaged
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
  func.func @main(%x: !plan.tensor<8x16xf16, #plan.layout<grid = [8, 1, 1], split = [[0], [2]], align = [1, 2], memory = fast>>) -> !plan.tensor<16x8xf16, #plan.layout<grid = [16], split = [[0], []], memory = standard>> attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]} {
    %w = plan.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : !plan.tensor<16x16xf16, #plan.layout<grid = [8, 1, 1], split = [[2], [1]], align = [2, 1], memory = interleaved>>
    %y = plan.gemm %x, %w {value = "y"} : (!plan.tensor<8x16xf16, #plan.layout<grid = [8, 1, 1], split = [[0], [2]], align = [1, 2], memory = standard>>, !plan.tensor<16x16xf16, #plan.layout<grid = [8, 1, 1], split = [[2], [1]], align = [2, 1], memory = interleaved>>) -> !plan.tensor<8x16xf16, #plan.layout<grid = [8, 1, 1], split = [[0], [1]], memory = interleaved>>
    %y_r = plan.rearrange %y {reason = "transpose alignment"} : !plan.tensor<8x16xf16, #plan.layout<grid = [8, 1, 1], split = [[0], [1]], memory = interleaved>> -> !plan.tensor<8x16xf16, #plan.layout<grid = [8, 1, 1], split = [[0], [1]], align = [2, 1], memory = interleaved>>
    %t = plan.transpose %y_r {value = "t"} : !plan.tensor<8x16xf16, #plan.layout<grid = [8, 1, 1], split = [[0], [1]], align = [2, 1], memory = interleaved>> -> !plan.tensor<16x8xf16, #plan.layout<grid = [8, 1, 1], split = [[1], [0]], align = [16, 2], memory = standard>>
    %t_r = plan.rearrange %t {reason = "graph.softmax"} : !plan.tensor<16x8xf16, #plan.layout<grid = [8, 1, 1], split = [[1], [0]], align = [16, 2], memory = standard>> -> !plan.tensor<16x8xf16, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
    %s = plan.rowwise "softmax" %t_r {value = "s"} : (!plan.tensor<16x8xf16, #plan.layout<grid = [16], split = [[0], []], memory = standard>>) -> !plan.tensor<16x8xf16, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
    func.return %s : !plan.tensor<16x8xf16, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
  }
}

