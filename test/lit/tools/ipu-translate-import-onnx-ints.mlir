// RUN: python %S/Inputs/onnx_models.py ints %t.onnx
// RUN: ipu-translate --import-onnx %t.onnx | filecheck %s
// RUN: ipu-run %t.onnx --target sim16 | filecheck %s --check-prefix=EMU

// Integer and bool tensors of an ONNX model: int8 and int64 inputs are i32 on the device (the
// function records the model's own dtypes), the int8 Add wraps (graph.wrap), Less gives i1, a
// Cast to float, Where with that runtime condition, ArgMax an i32 index of the int64 input;
// everything checked against onnxruntime.

// CHECK:      func.func @main(%a: tensor<4x8xi32>, %b: tensor<4x8xi32>, %k: tensor<4x8xi32>) -> (tensor<4x8xi32>, tensor<4x8xi1>, tensor<4x8xf32>, tensor<4xi32>)
// CHECK-SAME: onnx.input_dtypes = ["int8", "int8", "int64"], onnx.output_dtypes = {s = "int8", lt = "bool", w = "float32", am = "int64"}
// CHECK-NEXT:   %0 = graph.add %a, %b {onnx.node = "/add/Add:Add"} : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
// CHECK-NEXT:   %s.1 = graph.wrap %0 {to = "i8", onnx.node = "/add/Add:Add"} : tensor<4x8xi32> -> tensor<4x8xi32>
// CHECK-NEXT:   %lt.1 = graph.less %a, %b {{.*}} -> tensor<4x8xi1>
// CHECK-NEXT:   %f = graph.cast %s.1 {{.*}} : tensor<4x8xi32> -> tensor<4x8xf32>
// CHECK-NEXT:   %nf = graph.neg %f
// CHECK-NEXT:   %w.1 = graph.where %lt.1, %f, %nf {{.*}} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:   %am.1 = graph.arg_reduce %k {kind = "max", {{.*}}} : tensor<4x8xi32> -> tensor<4xi32>

// EMU: output=s samples=32 maximumAbsoluteError=0.000000
// EMU: output=lt samples=32 maximumAbsoluteError=0.000000
// EMU: oracleOutput=s oracle=onnxruntime samples=32 maximumAbsoluteError=0.000000
// EMU: oracleOutput=lt oracle=onnxruntime samples=32 maximumAbsoluteError=0.000000
// EMU: oracleOutput=am oracle=onnxruntime samples=4 maximumAbsoluteError=0.000000
// EMU: numericalTest=PASS
