// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @sigmoid
func.func @sigmoid(%x: tensor<4x8xf16>, %y: tensor<16xf32>) -> (tensor<4x8xf16>, tensor<16xf32>) {
  // CHECK: %s = graph.sigmoid %x : tensor<4x8xf16> -> tensor<4x8xf16>
  %s = graph.sigmoid %x : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %t = graph.sigmoid %y : tensor<16xf32> -> tensor<16xf32>
  %t = graph.sigmoid %y : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: func.return %s, %t : tensor<4x8xf16>, tensor<16xf32>
  func.return %s, %t : tensor<4x8xf16>, tensor<16xf32>
}

// GENERIC: "graph.sigmoid"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.sigmoid"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
