// RUN: ipu-opt %s | filecheck %s
// RUN: ipu-opt %s | ipu-opt | filecheck %s
// RUN: ipu-opt %s --print-op-generic | ipu-opt | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | ipu-opt | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | ipu-opt | filecheck %s --check-prefix=TILEMAP
// RUN: ipu-opt %s -p ipu-compile --target sim16 | ipu-opt | filecheck %s --check-prefix=TASM
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// Constants holding -inf (the fill of a max reduction, a mask), +inf, NaN and -0.0. MLIR writes
// a non-finite float in a dense literal as its bit pattern in hex (`dense<0xFC00>` is f16 -inf);
// every level reads it as those bits and prints it back the same way (xDSL 0.75 read it as the
// integer 64512.0; ipu.xdsl_fixes), and the hex-string form of the bytes reads alike. The device
// and the reference agree on the result (max with -inf is x; with +inf, +inf).
func.func @main(%x: tensor<4xf32>, %h: tensor<8x16xf16>) -> (tensor<4xf32>, tensor<8x16xf16>) {
  %c = graph.parameter "c" dense<[0xFF800000, 1.0, 0x7F800000, -0.0]> : tensor<4xf32> : tensor<4xf32>
  %y = graph.max %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = graph.parameter "m" dense<0xFC00> : tensor<8x16xf16> : tensor<8x16xf16>
  %z = graph.max %h, %m : (tensor<8x16xf16>, tensor<8x16xf16>) -> tensor<8x16xf16>
  func.return %y, %z : tensor<4xf32>, tensor<8x16xf16>
}

// CHECK:   graph.parameter "c" dense<[0xff800000, 1.000000e+00, 0x7f800000, -0.000000e+00]> : tensor<4xf32> : tensor<4xf32>
// CHECK:   graph.parameter "m" dense<0xfc00> : tensor<8x16xf16> : tensor<8x16xf16>
// PLAN:    plan.parameter "c" dense<[0xff800000, 1.000000e+00, 0x7f800000, -0.000000e+00]> : tensor<4xf32> :
// PLAN:    plan.parameter "m" dense<0xfc00> : tensor<8x16xf16> :
// TILEMAP: tilemap.weight "c" dense<[0xff800000, 1.000000e+00, 0x7f800000, -0.000000e+00]> : tensor<4xf32>
// TILEMAP: tilemap.weight "m" dense<0xfc00> : tensor<8x16xf16>
// TASM:    tasm.weight @c dense<[0xff800000, 1.000000e+00, 0x7f800000, -0.000000e+00]> : tensor<4xf32>
// TASM:    tasm.weight @m dense<0xfc00> : tensor<8x16xf16>
// EMU:     numericalTest=PASS
