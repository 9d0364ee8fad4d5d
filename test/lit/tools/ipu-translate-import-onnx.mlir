// RUN: python %S/Inputs/onnx_models.py mlp %t.onnx
// RUN: ipu-translate --import-onnx %t.onnx | filecheck %s
// RUN: ipu-translate --import-onnx %t.onnx -o %t.mlir
// RUN: ipu-opt %t.mlir | filecheck %s
// RUN: ipu-opt %t.mlir -p ipu-compile --target sim16 | filecheck %s --check-prefix=TASM
// RUN: python %S/Inputs/onnx_models.py bad %t.bad.onnx
// RUN: not ipu-translate --import-onnx %t.bad.onnx 2>&1 | filecheck %s --check-prefix=BAD

// An ONNX MLP (MatMul, bias Add, the erf GeLU chain an exporter emits, Softmax) imports to the
// graph dialect: inputs and outputs keep their ONNX names, initializers become parameters with
// their values, every op names its ONNX node, and the GeLU chain fuses into graph.gelu.

// CHECK:      func.func @main(%input.1: tensor<4x8xf32>) -> tensor<4x16xf32> attributes {ipu.inputs = ["input.1"], ipu.outputs = ["probs"], onnx.opset = 17 : i64} {
// CHECK-NEXT:   %fc1.weight = graph.parameter "fc1.weight" dense<{{.*}}> : tensor<8x16xf32> {onnx.node = "/fc1/MatMul:MatMul"} : tensor<8x16xf32>
// CHECK-NEXT:   %h = graph.matmul %input.1, %fc1.weight {onnx.node = "/fc1/MatMul:MatMul"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:   %fc1.bias = graph.parameter "fc1.bias" dense<{{.*}}> : tensor<16xf32> {onnx.node = "/fc1/Add:Add"} : tensor<16xf32>
// CHECK-NEXT:   %hb = graph.add %h, %fc1.bias {onnx.node = "/fc1/Add:Add"} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:   %g = graph.gelu %hb {approximate = "none", onnx.node = "/act/Mul_1:Mul"} : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:   %probs.1 = graph.softmax %g {onnx.node = "/softmax/Softmax:Softmax"} : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:   func.return %probs.1 : tensor<4x16xf32>

// TASM: tasm.stream_in @input.1 :
// TASM: tasm.stream_out @probs :

// BAD: error: onnx import: node '/head/Bernoulli' (Bernoulli): operator Bernoulli is not supported by the graph dialect
