// RUN: python %S/Inputs/onnx_models.py act %t.onnx
// RUN: ipu-translate --import-onnx %t.onnx | filecheck %s
// RUN: ipu-run %t.onnx --target sim16 | filecheck %s --check-prefix=EMU

// A rank-4 ONNX input and output (kept at their ONNX shape at the boundary, carried as the row
// collapse [8, 8] between) through the activations of real exports: x * Sigmoid(x) fuses into
// graph.silu, Reciprocal(Sqrt(.)) into graph.rsqrt, Div by a computed tensor is graph.div, Clip
// with constant bounds graph.max and graph.min by splats, Neg graph.neg.

// CHECK:      func.func @main(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT:   %x.1 = graph.reshape %x : tensor<1x2x4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:   %h = graph.silu %x.1 {onnx.node = "/act/Mul:Mul"} : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:   %sq = graph.mul %h, %h
// CHECK:        %inv = graph.rsqrt %se {onnx.node = "/rms/Reciprocal:Reciprocal"} : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:   %d = graph.div %h, %inv {onnx.node = "/div/Div:Div"}
// CHECK:        graph.max %d, %_clip_Clip_lo {onnx.node = "/clip/Clip:Clip"}
// CHECK:        %c = graph.min %0, %_clip_Clip_hi {onnx.node = "/clip/Clip:Clip"}
// CHECK-NEXT:   %y.1 = graph.neg %c {onnx.node = "/out/Neg:Neg"}
// CHECK-NEXT:   %y.2 = graph.reshape %y.1 : tensor<8x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT:   func.return %y.2 : tensor<1x2x4x8xf32>

// EMU: output=y samples=64
// EMU: oracleOutput=y oracle=onnxruntime samples=64
// EMU: numericalTest=PASS
