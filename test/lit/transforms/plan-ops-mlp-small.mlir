// RUN: ipu-opt %examples/mlp_small.mlir -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s


// CHECK:      %h = plan.gemm %x, %w1 {value = "h"} : ({{.*}}) -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 16, 1], split = {{\[\[}}0], [1]], memory = interleaved>>
// CHECK:      %hb = plan.binary "add" %h, %b1 {value = "hb"}
// CHECK-NEXT: %g = plan.unary "gelu" %hb {value = "g"}
// CHECK-NEXT: %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard>>
// CHECK:      %y_partial = plan.gemm %g_r, %w2 : ({{.*}}) -> !plan.tensor<64x256xf32, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [1]], partial = 2, align = [1, 64], memory = interleaved>>
// CHECK-NEXT: %y = plan.reduce %y_partial {value = "y"}
