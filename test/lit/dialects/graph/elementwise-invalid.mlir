// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @sqrt_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.sqrt %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.sqrt: result type must equal input type

// -----

func.func @rsqrt_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.rsqrt %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.rsqrt: result type must equal input type

// -----

func.func @reciprocal_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.reciprocal %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.reciprocal: result type must equal input type

// -----

func.func @neg_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.neg %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.neg: result type must equal input type

// -----

func.func @abs_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.abs %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.abs: result type must equal input type

// -----

func.func @erf_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.erf %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.erf: result type must equal input type

// -----

func.func @sin_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.sin %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.sin: result type must equal input type

// -----

func.func @cos_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.cos %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.cos: result type must equal input type

// -----

func.func @log_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.log %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.log: result type must equal input type

// -----

func.func @silu_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.silu %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.silu: result type must equal input type

// -----

func.func @min_shape(%x: tensor<4x8xf32>, %y: tensor<3xf32>) -> tensor<4x8xf32> {
  %s = graph.min %x, %y : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.min: shapes (4, 8) and (3,) do not broadcast

// -----

func.func @div_shape(%x: tensor<4x8xf32>, %y: tensor<3xf32>) -> tensor<4x8xf32> {
  %s = graph.div %x, %y : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.div: shapes (4, 8) and (3,) do not broadcast

// -----

func.func @pow_shape(%x: tensor<4x8xf32>, %y: tensor<3xf32>) -> tensor<4x8xf32> {
  %s = graph.pow %x, %y : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.pow: shapes (4, 8) and (3,) do not broadcast

// -----

func.func @div_dtype(%x: tensor<4x8xf32>, %y: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.div %x, %y : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.div: element types differ

// -----

func.func @floor_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.floor %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.floor: result type must equal input type

// -----

func.func @ceil_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.ceil %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.ceil: result type must equal input type

// -----

func.func @round_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.round %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.round: result type must equal input type

// -----

func.func @sign_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.sign %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.sign: result type must equal input type

// -----

func.func @tan_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.tan %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.tan: result type must equal input type

// -----

func.func @sinh_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.sinh %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.sinh: result type must equal input type

// -----

func.func @cosh_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.cosh %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.cosh: result type must equal input type

// -----

func.func @asin_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.asin %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.asin: result type must equal input type

// -----

func.func @acos_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.acos %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.acos: result type must equal input type

// -----

func.func @atan_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.atan %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.atan: result type must equal input type

// -----

func.func @asinh_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.asinh %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.asinh: result type must equal input type

// -----

func.func @acosh_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.acosh %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.acosh: result type must equal input type

// -----

func.func @atanh_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.atanh %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.atanh: result type must equal input type

// -----

func.func @softplus_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.softplus %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.softplus: result type must equal input type

// -----

func.func @softsign_dtype(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %s = graph.softsign %x : tensor<4x8xf16> -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
// CHECK: Operation does not verify: graph.softsign: result type must equal input type
