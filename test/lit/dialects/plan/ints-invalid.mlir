// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @bool_type(%a: !plan.tensor<4xi1, #plan.layout<grid = [1], split = [[]], memory = standard>>) {
  func.return
}
// CHECK: plan.tensor: element type i1; the device holds f16, f32 and i32 (bool is an i32 word 0 or 1)

// -----

func.func @less_result(%a: !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>) {
  %c = plan.binary "less" %a, %a : (!plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>, !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>) -> !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.binary: less: result type must be the lhs layout with element type i32 (non-partial operands)

// -----

func.func @to_bool_result(%a: !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>) {
  %c = plan.unary "to_bool" %a : !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>> -> !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.unary: to_bool: result type must be the input's layout with element type i32

// -----

func.func @select_condition(%a: !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>) {
  %c = plan.select %a, %a, %a : (!plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>, !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>, !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>) -> !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.select: the condition must be i32 (bool) in the values' layout

// -----

func.func @mixed(%a: !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>, %b: !plan.tensor<4xi32, #plan.layout<grid = [1], split = [[]], memory = standard>>) {
  %c = plan.binary "add" %a, %b : (!plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>, !plan.tensor<4xi32, #plan.layout<grid = [1], split = [[]], memory = standard>>) -> !plan.tensor<4xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.binary: operand element types differ
