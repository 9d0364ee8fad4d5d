// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The elementwise ops of real exports in custom and generic form: ten unary maps (f16 and f32)
// and the binary min, div and pow, which broadcast like NumPy.

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf16>, %y: tensor<16xf32>) -> (tensor<4x8xf16>, tensor<16xf32>) {
  // CHECK: %a0 = graph.sqrt %x : tensor<4x8xf16> -> tensor<4x8xf16>
  %a0 = graph.sqrt %x : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b0 = graph.sqrt %y : tensor<16xf32> -> tensor<16xf32>
  %b0 = graph.sqrt %y : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a1 = graph.rsqrt %a0 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a1 = graph.rsqrt %a0 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b1 = graph.rsqrt %b0 : tensor<16xf32> -> tensor<16xf32>
  %b1 = graph.rsqrt %b0 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a2 = graph.reciprocal %a1 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a2 = graph.reciprocal %a1 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b2 = graph.reciprocal %b1 : tensor<16xf32> -> tensor<16xf32>
  %b2 = graph.reciprocal %b1 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a3 = graph.neg %a2 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a3 = graph.neg %a2 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b3 = graph.neg %b2 : tensor<16xf32> -> tensor<16xf32>
  %b3 = graph.neg %b2 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a4 = graph.abs %a3 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a4 = graph.abs %a3 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b4 = graph.abs %b3 : tensor<16xf32> -> tensor<16xf32>
  %b4 = graph.abs %b3 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a5 = graph.erf %a4 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a5 = graph.erf %a4 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b5 = graph.erf %b4 : tensor<16xf32> -> tensor<16xf32>
  %b5 = graph.erf %b4 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a6 = graph.sin %a5 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a6 = graph.sin %a5 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b6 = graph.sin %b5 : tensor<16xf32> -> tensor<16xf32>
  %b6 = graph.sin %b5 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a7 = graph.cos %a6 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a7 = graph.cos %a6 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b7 = graph.cos %b6 : tensor<16xf32> -> tensor<16xf32>
  %b7 = graph.cos %b6 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a8 = graph.log %a7 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a8 = graph.log %a7 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b8 = graph.log %b7 : tensor<16xf32> -> tensor<16xf32>
  %b8 = graph.log %b7 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a9 = graph.silu %a8 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a9 = graph.silu %a8 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b9 = graph.silu %b8 : tensor<16xf32> -> tensor<16xf32>
  %b9 = graph.silu %b8 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: func.return %a9, %b9 : tensor<4x8xf16>, tensor<16xf32>
  func.return %a9, %b9 : tensor<4x8xf16>, tensor<16xf32>
}

// GENERIC: "graph.sqrt"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.sqrt"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.rsqrt"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.rsqrt"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.reciprocal"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.reciprocal"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.neg"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.neg"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.abs"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.abs"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.erf"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.erf"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.sin"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.sin"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.cos"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.cos"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.log"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.log"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.silu"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.silu"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>

// -----

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: %m = graph.min %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %m = graph.min %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %d = graph.div %m, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = graph.div %m, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %p = graph.pow %d, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %p = graph.pow %d, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %p : tensor<4x8xf32>
}

// GENERIC: "graph.min"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: "graph.div"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: "graph.pow"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
