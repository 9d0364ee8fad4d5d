// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @params
func.func @params() -> (tensor<4x8xf16>, tensor<8xf32>, tensor<2x2xf32>) {
  // CHECK: %w = graph.parameter "w" #graph.gaussian<seed = 7, std = 0.5> : tensor<4x8xf16>
  %w = graph.parameter "w" #graph.gaussian<seed = 7, std = 0.5> : tensor<4x8xf16>
  // CHECK-NEXT: %b = graph.parameter "b" dense<1.000000e+00> : tensor<8xf32> : tensor<8xf32>
  %b = graph.parameter "b" dense<1.0> : tensor<8xf32> : tensor<8xf32>
  // CHECK-NEXT: %d = graph.parameter "d" dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32> : tensor<2x2xf32>
  %d = graph.parameter "d" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32> : tensor<2x2xf32>
  func.return %w, %b, %d : tensor<4x8xf16>, tensor<8xf32>, tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @ops
// CHECK-SAME: (%x: tensor<4x8xf16>, %y: tensor<8x16xf16>, %v: tensor<16xf16>) -> tensor<16x4xf16>
func.func @ops(%x: tensor<4x8xf16>, %y: tensor<8x16xf16>, %v: tensor<16xf16>) -> tensor<16x4xf16> {
  // CHECK: %m = graph.matmul %x, %y : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  %m = graph.matmul %x, %y : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  // CHECK-NEXT: %a = graph.add %m, %v : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %a = graph.add %m, %v : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  // CHECK-NEXT: %s = graph.sub %a, %m : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %s = graph.sub %a, %m : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  // CHECK-NEXT: %p = graph.mul %s, %v : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %p = graph.mul %s, %v : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  // CHECK-NEXT: %q = graph.max %p, %a : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %q = graph.max %p, %a : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  // CHECK-NEXT: %g = graph.gelu %q : tensor<4x16xf16> -> tensor<4x16xf16>
  %g = graph.gelu %q : tensor<4x16xf16> -> tensor<4x16xf16>
  // CHECK-NEXT: %r = graph.relu %g : tensor<4x16xf16> -> tensor<4x16xf16>
  %r = graph.relu %g : tensor<4x16xf16> -> tensor<4x16xf16>
  // CHECK-NEXT: %t = graph.transpose %r {perm = array<i64: 1, 0>} : tensor<4x16xf16> -> tensor<16x4xf16>
  %t = graph.transpose %r {perm = array<i64: 1, 0>} : tensor<4x16xf16> -> tensor<16x4xf16>
  // CHECK-NEXT: %f = graph.reshape %t : tensor<16x4xf16> -> tensor<64xf16>
  %f = graph.reshape %t : tensor<16x4xf16> -> tensor<64xf16>
  // CHECK-NEXT: %u = graph.reshape %f : tensor<64xf16> -> tensor<16x4xf16>
  %u = graph.reshape %f : tensor<64xf16> -> tensor<16x4xf16>
  // CHECK-NEXT: func.return %u : tensor<16x4xf16>
  func.return %u : tensor<16x4xf16>
}

// -----

// CHECK-LABEL: func.func @transposed_matmul
func.func @transposed_matmul(%x: tensor<8x4xf32>, %y: tensor<16x8xf32>) -> tensor<4x16xf32> {
  // CHECK: %m = graph.matmul %x, %y {transpose_lhs, transpose_rhs} : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %m = graph.matmul %x, %y {transpose_lhs, transpose_rhs} : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  func.return %m : tensor<4x16xf32>
}
