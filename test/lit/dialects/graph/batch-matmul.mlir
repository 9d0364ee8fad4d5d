// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// graph.batch_matmul: one matmul per batch, [b, m, k] x [b, k, n] -> [b, m, n].
// CHECK-LABEL: func.func @scores
// CHECK-NEXT:    %s = graph.batch_matmul %q, %kt : (tensor<4x32x16xf16>, tensor<4x16x32xf16>) -> tensor<4x32x32xf16>
func.func @scores(%q: tensor<4x32x16xf16>, %kt: tensor<4x16x32xf16>) -> tensor<4x32x32xf16> {
  %s = graph.batch_matmul %q, %kt : (tensor<4x32x16xf16>, tensor<4x16x32xf16>) -> tensor<4x32x32xf16>
  func.return %s : tensor<4x32x32xf16>
}
