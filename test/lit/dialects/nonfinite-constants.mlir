// RUN: ipu-opt %s | filecheck %s
// RUN: ipu-opt %s | ipu-opt | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | ipu-opt | filecheck %s --check-prefix=TILEMAP
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A constant holding -inf (the fill of a max reduction or a mask). xDSL's builtin syntax would
// print it as the hex integer 0xff800000 and read that back as 4286578688.0; the weights of every
// level print such a constant as the hex of its bytes instead, which reads back exactly.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.parameter "c" dense<"0x000080FF0000803F0000004000004040"> : tensor<4xf32> : tensor<4xf32>
  %y = graph.max %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK:   graph.parameter "c" dense<"0x000080FF0000803F0000004000004040"> : tensor<4xf32> : tensor<4xf32>
// PLAN:    plan.parameter "c" dense<"0x000080FF0000803F0000004000004040"> : tensor<4xf32> :
// TILEMAP: tilemap.weight "c" dense<"0x000080FF0000803F0000004000004040"> : tensor<4xf32>
// EMU:     numericalTest=PASS
