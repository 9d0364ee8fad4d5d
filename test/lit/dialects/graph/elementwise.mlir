// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The elementwise ops of real exports in custom and generic form: the unary maps (f16 and f32)
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
  // CHECK-NEXT: %a10 = graph.floor %a9 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a10 = graph.floor %a9 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b10 = graph.floor %b9 : tensor<16xf32> -> tensor<16xf32>
  %b10 = graph.floor %b9 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a11 = graph.ceil %a10 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a11 = graph.ceil %a10 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b11 = graph.ceil %b10 : tensor<16xf32> -> tensor<16xf32>
  %b11 = graph.ceil %b10 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a12 = graph.round %a11 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a12 = graph.round %a11 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b12 = graph.round %b11 : tensor<16xf32> -> tensor<16xf32>
  %b12 = graph.round %b11 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a13 = graph.sign %a12 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a13 = graph.sign %a12 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b13 = graph.sign %b12 : tensor<16xf32> -> tensor<16xf32>
  %b13 = graph.sign %b12 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a14 = graph.tan %a13 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a14 = graph.tan %a13 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b14 = graph.tan %b13 : tensor<16xf32> -> tensor<16xf32>
  %b14 = graph.tan %b13 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a15 = graph.sinh %a14 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a15 = graph.sinh %a14 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b15 = graph.sinh %b14 : tensor<16xf32> -> tensor<16xf32>
  %b15 = graph.sinh %b14 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a16 = graph.cosh %a15 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a16 = graph.cosh %a15 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b16 = graph.cosh %b15 : tensor<16xf32> -> tensor<16xf32>
  %b16 = graph.cosh %b15 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a17 = graph.asin %a16 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a17 = graph.asin %a16 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b17 = graph.asin %b16 : tensor<16xf32> -> tensor<16xf32>
  %b17 = graph.asin %b16 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a18 = graph.acos %a17 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a18 = graph.acos %a17 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b18 = graph.acos %b17 : tensor<16xf32> -> tensor<16xf32>
  %b18 = graph.acos %b17 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a19 = graph.atan %a18 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a19 = graph.atan %a18 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b19 = graph.atan %b18 : tensor<16xf32> -> tensor<16xf32>
  %b19 = graph.atan %b18 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a20 = graph.asinh %a19 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a20 = graph.asinh %a19 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b20 = graph.asinh %b19 : tensor<16xf32> -> tensor<16xf32>
  %b20 = graph.asinh %b19 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a21 = graph.acosh %a20 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a21 = graph.acosh %a20 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b21 = graph.acosh %b20 : tensor<16xf32> -> tensor<16xf32>
  %b21 = graph.acosh %b20 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a22 = graph.atanh %a21 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a22 = graph.atanh %a21 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b22 = graph.atanh %b21 : tensor<16xf32> -> tensor<16xf32>
  %b22 = graph.atanh %b21 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a23 = graph.softplus %a22 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a23 = graph.softplus %a22 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b23 = graph.softplus %b22 : tensor<16xf32> -> tensor<16xf32>
  %b23 = graph.softplus %b22 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %a24 = graph.softsign %a23 : tensor<4x8xf16> -> tensor<4x8xf16>
  %a24 = graph.softsign %a23 : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %b24 = graph.softsign %b23 : tensor<16xf32> -> tensor<16xf32>
  %b24 = graph.softsign %b23 : tensor<16xf32> -> tensor<16xf32>
  // CHECK-NEXT: func.return %a24, %b24 : tensor<4x8xf16>, tensor<16xf32>
  func.return %a24, %b24 : tensor<4x8xf16>, tensor<16xf32>
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
// GENERIC: "graph.floor"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.floor"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.ceil"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.ceil"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.round"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.round"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.sign"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.sign"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.tan"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.tan"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.sinh"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.sinh"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.cosh"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.cosh"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.asin"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.asin"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.acos"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.acos"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.atan"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.atan"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.asinh"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.asinh"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.acosh"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.acosh"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.atanh"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.atanh"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.softplus"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.softplus"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC: "graph.softsign"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC: "graph.softsign"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>

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
