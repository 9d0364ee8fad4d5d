// RUN: ipu-opt %s | filecheck %s
// RUN: ipu-opt %s | ipu-opt | filecheck %s
// RUN: ipu-opt %s --print-op-generic | ipu-opt | filecheck %s
// RUN: ipu-translate --import-stablehlo %S/Inputs/softmax.generic.mlir | filecheck %s --check-prefix=GRAPH

// MLIR writes float bit patterns in hex: `dense<0xFF800000> : tensor<f32>` is -inf (softmax's and
// max reductions' init value), not the integer 4286578688 that xDSL 0.75's own reader made of it
// (ipu.xdsl_fixes). It reads as the float and prints back in the same hex form, also in the
// generic form (GENERIC).

// CHECK-LABEL: func.func @splats
// CHECK-NEXT: %ninf = stablehlo.constant dense<0xff800000> : tensor<f32>
// CHECK-NEXT: %inf2 = stablehlo.constant dense<0x7f800000> : tensor<2xf32>
// CHECK-NEXT: %mix = stablehlo.constant dense<[1.000000e+00, 0xffc00000]> : tensor<2xf32>
// CHECK-NEXT: %h = stablehlo.constant dense<0xfc00> : tensor<f16>
// CHECK-NEXT: %one = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %int = stablehlo.constant dense<255> : tensor<i32>
func.func @splats() -> tensor<f32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %inf2 = stablehlo.constant dense<0x7F800000> : tensor<2xf32>
  %mix = stablehlo.constant dense<[1.0, 0xFFC00000]> : tensor<2xf32>
  %h = stablehlo.constant dense<0xFC00> : tensor<f16>
  %one = stablehlo.constant dense<0x3F800000> : tensor<f32>
  %int = stablehlo.constant dense<0xFF> : tensor<i32>
  func.return %ninf : tensor<f32>
}

// A generic-form program (JAX's `get_asm(print_generic_op_form=True)`) whose max reduction starts
// at -inf: the import reads the -inf and fuses the chain into a softmax.
// GRAPH: graph.softmax
