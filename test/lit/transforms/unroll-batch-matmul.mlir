// RUN: ipu-opt %s -p unroll-batch-matmul | filecheck %s
// RUN: ipu-opt %s -p unroll-batch-matmul | ipu-opt | filecheck %s

// A batched matmul no pattern fused: one graph.matmul per batch over slices of the operands'
// row views, joined and viewed back; the new values are derived (no checkpoint), the view keeps
// the batch matmul's name.
// CHECK-LABEL: func.func @scores
// CHECK-NEXT:    %[[A:.*]] = graph.reshape %q {ipu.derived} : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.reshape %kt {ipu.derived} : tensor<2x16x8xf32> -> tensor<32x8xf32>
// CHECK-NEXT:    %[[A0:.*]] = graph.slice %[[A]] {starts = array<i64: 0, 0>, ipu.derived} : tensor<16x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %[[B0:.*]] = graph.slice %[[B]] {starts = array<i64: 0, 0>, ipu.derived} : tensor<32x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT:    %[[M0:.*]] = graph.matmul %[[A0]], %[[B0]] {ipu.derived} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[A1:.*]] = graph.slice %[[A]] {starts = array<i64: 8, 0>, ipu.derived} : tensor<16x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %[[B1:.*]] = graph.slice %[[B]] {starts = array<i64: 16, 0>, ipu.derived} : tensor<32x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT:    %[[M1:.*]] = graph.matmul %[[A1]], %[[B1]] {ipu.derived} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[J:.*]] = graph.concat %[[M0]], %[[M1]] {axis = 0 : i64, ipu.derived} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
// CHECK-NEXT:    %s = graph.reshape %[[J]] : tensor<16x8xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT:    func.return %s
func.func @scores(%q: tensor<2x8x16xf32>, %kt: tensor<2x16x8xf32>) -> tensor<2x8x8xf32> {
  %s = graph.batch_matmul %q, %kt : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  func.return %s : tensor<2x8x8xf32>
}
