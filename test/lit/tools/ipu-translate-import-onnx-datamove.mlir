// RUN: python %S/Inputs/onnx_datamove.py %t.onnx
// RUN: ipu-translate --import-onnx %t.onnx | filecheck %s
// RUN: ipu-run %t.onnx --target sim16 | filecheck %s --check-prefix=EMU

// Slice, Split, Pad and Concat of computed tensors import as graph.slice / graph.pad /
// graph.concat on the coarsest view of each box; a MatMul of two computed [2, .., ..] operands
// is one graph.batch_matmul (plan-ops unrolls it into one 2-D matmul per batch).

// CHECK: %s.1 = graph.slice %h {starts = array<i64: 0, 2>, onnx.node = "/s/Slice:Slice"} : tensor<8x8xf32> -> tensor<8x4xf32>
// CHECK: %[[V:.*]] = graph.reshape %h {onnx.node = "/sp/Split:Split"} : tensor<8x8xf32> -> tensor<2x4x8xf32>
// CHECK: %a = graph.slice %[[V]] {starts = array<i64: 0, 0, 0>, onnx.node = "/sp/Split:Split"} : tensor<2x4x8xf32> -> tensor<2x1x8xf32>
// CHECK-NEXT: %b = graph.slice %[[V]] {starts = array<i64: 0, 1, 0>, onnx.node = "/sp/Split:Split"} : tensor<2x4x8xf32> -> tensor<2x3x8xf32>
// CHECK: %pa = graph.pad %a {low = array<i64: 0, 1, 0>, onnx.node = "/pa/Pad:Pad"} : tensor<2x1x8xf32> -> tensor<2x3x8xf32>
// CHECK: %c = graph.concat %pa, %b {axis = 1 : i64, onnx.node = "/c/Concat:Concat"} : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x6x8xf32>
// CHECK: graph.batch_matmul {{.*}} : (tensor<2x6x8xf32>, tensor<2x8x4xf32>) -> tensor<2x6x4xf32>
// CHECK-NOT: graph.matmul

// EMU: output=s samples=32 maximumAbsoluteError=0.000000
// EMU: output=y samples=48
// EMU: numericalTest=PASS
