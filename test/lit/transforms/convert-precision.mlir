// RUN: ipu-opt %s -p convert-precision | filecheck %s
// RUN: ipu-opt %s -p convert-precision -o %t.mlir && ipu-run %t.mlir --target sim16 2>&1 | filecheck %s --check-prefix=EMU
// RUN: not ipu-opt %s -p 'convert-precision{dtype=bf16}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: ipu-opt %s -p 'plan-ops{target=sim16}' | not ipu-opt -p convert-precision 2>&1 | filecheck %s --check-prefix=LATE

// A float32 model computed in float16: the interface stays float32 (one cast in, one out), the
// weights and every value inside become float16, a repeat's carried values included.
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<64x64xf32>
  %r = graph.repeat 2 iter(%h = %x) : (tensor<64x64xf32>) {
    %m = graph.matmul %h, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %g = graph.gelu %m : tensor<64x64xf32> -> tensor<64x64xf32>
    graph.yield %g : tensor<64x64xf32>
  }
  func.return %r : tensor<64x64xf32>
}

// CHECK:      func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
// CHECK-NEXT:   %x_1 = graph.cast %x : tensor<64x64xf32> -> tensor<64x64xf16>
// CHECK-NEXT:   %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<64x64xf16>
// CHECK-NEXT:   %r = graph.repeat 2 iter(%h = %x_1) : (tensor<64x64xf16>) {
// CHECK-NEXT:     %m = graph.matmul %h, %w : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
// CHECK-NEXT:     %g = graph.gelu %m : tensor<64x64xf16> -> tensor<64x64xf16>
// CHECK-NEXT:     graph.yield %g : tensor<64x64xf16>
// CHECK-NEXT:   }
// CHECK-NEXT:   %{{.*}} = graph.cast %r : tensor<64x64xf16> -> tensor<64x64xf32>
// CHECK-NEXT:   func.return
// CHECK-NOT:  xf32> -> tensor<64x64xf32>

// EMU: numericalTest=PASS

// BAD: convert-precision: dtype must be one of ['f16', 'f32'], not 'bf16'
// LATE: convert-precision: works on graph-level IR; this module is plan-level
