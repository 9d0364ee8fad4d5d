// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @add_mixed(%a: tensor<4xi32>, %b: tensor<4xf32>) -> tensor<4xi32> {
  %s = graph.add %a, %b : (tensor<4xi32>, tensor<4xf32>) -> tensor<4xi32>
  func.return %s : tensor<4xi32>
}
// CHECK: Operation does not verify: graph.add: element types differ

// -----

func.func @pow_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  %s = graph.pow %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %s : tensor<4xi32>
}
// CHECK: Operation does not verify: graph.pow: element type i32 is not supported (expected f16 or f32)

// -----

func.func @add_bool(%a: tensor<4xi1>) -> tensor<4xi1> {
  %s = graph.add %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return %s : tensor<4xi1>
}
// CHECK: Operation does not verify: graph.add: element type i1 is not supported (expected f16, f32 or i32)

// -----

func.func @and_float(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = graph.and %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
// CHECK: Operation does not verify: graph.and: element type f32 is not supported (expected i1 or i32)

// -----

func.func @sqrt_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  %s = graph.sqrt %a : tensor<4xi32> -> tensor<4xi32>
  func.return %s : tensor<4xi32>
}
// CHECK: Operation does not verify: graph.sqrt: element type i32 is not supported (expected f16 or f32)

// -----

func.func @not_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  %s = graph.not %a : tensor<4xi32> -> tensor<4xi32>
  func.return %s : tensor<4xi32>
}
// CHECK: Operation does not verify: graph.not: element type i32 is not supported (expected i1)

// -----

func.func @less_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = graph.less %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
// CHECK: Operation does not verify: graph.less: result element type must be i1, got f32

// -----

func.func @less_mixed(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xi1> {
  %s = graph.less %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  func.return %s : tensor<4xi1>
}
// CHECK: Operation does not verify: graph.less: operand element types differ

// -----

func.func @wrap_to(%a: tensor<4xi32>) -> tensor<4xi32> {
  %s = graph.wrap %a {to = "i4"} : tensor<4xi32> -> tensor<4xi32>
  func.return %s : tensor<4xi32>
}
// CHECK: Operation does not verify: graph.wrap: to must be one of i8, u8, i16, u16, not 'i4'

// -----

func.func @where_condition(%c: tensor<4xi32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %s = graph.where %c, %x, %x : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
// CHECK: Operation does not verify: graph.where: condition element type must be i1, got i32

// -----

func.func @where_values(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  %s = graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
// CHECK: Operation does not verify: graph.where: value element types differ

// -----

func.func @where_shape(%c: tensor<4xi1>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %s = graph.where %c, %x, %x : (tensor<4xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %s : tensor<2x4xf32>
}
// CHECK: Operation does not verify: graph.where: condition, values and result must have one shape

// -----

func.func @arg_result(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  %s = graph.arg_reduce %x {kind = "max"} : tensor<4x6xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
// CHECK: Operation does not verify: graph.arg_reduce: result element type must be i32, got f32

// -----

func.func @arg_kind(%x: tensor<4x6xf32>) -> tensor<4xi32> {
  %s = graph.arg_reduce %x {kind = "sum"} : tensor<4x6xf32> -> tensor<4xi32>
  func.return %s : tensor<4xi32>
}
// CHECK: Operation does not verify: graph.arg_reduce: kind must be max or min, not 'sum'

// -----

// matmuls stay float-only (their operands are float tensors)
func.func @matmul_int(%a: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %s = graph.matmul %a, %a : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi32>
  func.return %s : tensor<4x4xi32>
}
// CHECK: Unexpected attribute i32
