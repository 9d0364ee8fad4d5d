// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%x: !plan.tensor<8x8xf16, #plan.layout<grid = [2], split = [[0], []], memory = fast>>) {
  func.return
}
// CHECK: plan.layout: memory must be one of ('standard', 'interleaved')

// -----

func.func @f(%x: !plan.tensor<8x8xf16, #plan.layout<grid = [2, 2], split = [[0], [0]], memory = standard>>) {
  func.return
}
// CHECK: plan.layout: each grid dimension may split at most one axis

// -----

func.func @f(%x: !plan.tensor<8x8xf16, #plan.layout<grid = [2], split = [[0]], memory = standard>>) {
  func.return
}
// CHECK: plan.tensor: layout split has rank 1, tensor 2

// -----

// The lhs contraction axis is split over grid dimension 1, the rhs's over dimension 2.
func.func @f(%a: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], memory = interleaved>>, %b: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) {
  %c = plan.gemm %a, %b : (!plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], memory = interleaved>>, !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], partial = 2, memory = interleaved>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm: operand splits do not align with the result (rows, k, cols)

// -----

func.func @f(%a: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, %b: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) {
  %c = plan.gemm %a, %b : (!plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], memory = interleaved>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm: a split contraction must produce a partial result and vice versa

// -----

// The lhs may live in standard memory, but the rhs weights must be interleaved.
func.func @f(%a: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = standard>>, %b: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = standard>>) {
  %c = plan.gemm %a, %b : (!plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = standard>>, !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = standard>>) -> !plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], partial = 2, memory = interleaved>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm: AMP weights (rhs) and result live in interleaved memory

// -----

func.func @f(%a: !plan.tensor<64x32xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, %b: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) {
  %c = plan.gemm %a, %b : (!plan.tensor<64x32xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], partial = 2, memory = interleaved>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm: shapes (64, 32) x (64, 64) -> (64, 64) do not match

// -----

// The broadcast row vector is split over grid dimension 0, the lhs columns over dimension 1.
func.func @f(%a: !plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, %b: !plan.tensor<16xf16, #plan.layout<grid = [2, 2], split = [[0]], memory = standard>>) {
  %c = plan.binary "add" %a, %b : (!plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, !plan.tensor<16xf16, #plan.layout<grid = [2, 2], split = [[0]], memory = standard>>) -> !plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.binary: broadcast row vector must be split like the lhs columns

// -----

func.func @f(%a: !plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, %b: !plan.tensor<8xf16, #plan.layout<grid = [2, 2], split = [[1]], memory = standard>>) {
  %c = plan.binary "add" %a, %b : (!plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, !plan.tensor<8xf16, #plan.layout<grid = [2, 2], split = [[1]], memory = standard>>) -> !plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.binary: rhs shape (8,) does not broadcast to (16, 16) here

// -----

func.func @f(%a: !plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>) {
  %c = plan.binary "rem" %a, %a : (!plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, !plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>) -> !plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.binary: unknown kind 'rem'

// -----

func.func @f(%a: !plan.tensor<16x8xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, %b: !plan.tensor<8xf16, #plan.layout<grid = [2, 2], split = [[0]], memory = standard>>) {
  %c = plan.binary "sub" %a, %b {column} : (!plan.tensor<16x8xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, !plan.tensor<8xf16, #plan.layout<grid = [2, 2], split = [[0]], memory = standard>>) -> !plan.tensor<16x8xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.binary: a column rhs (8,) must hold one value per row of (16, 8)

// -----

func.func @f(%a: !plan.tensor<16x8xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, %b: !plan.tensor<16xf16, #plan.layout<grid = [2, 2], split = [[1]], memory = standard>>) {
  %c = plan.binary "sub" %a, %b {column} : (!plan.tensor<16x8xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>, !plan.tensor<16xf16, #plan.layout<grid = [2, 2], split = [[1]], memory = standard>>) -> !plan.tensor<16x8xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.binary: broadcast column vector must be split like the lhs rows

// -----

func.func @f(%a: !plan.tensor<16x16xf32, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>) {
  %c = plan.reduce %a : !plan.tensor<16x16xf32, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>> -> !plan.tensor<16x16xf16, #plan.layout<grid = [2, 2], split = [[0], [1]], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.reduce: input must be a partial-sum layout

// -----

func.func @f(%a: !plan.tensor<16x16xf32, #plan.layout<grid = [2, 2], split = [[0], []], partial = 1, memory = standard>>) {
  %c = plan.rearrange %a : !plan.tensor<16x16xf32, #plan.layout<grid = [2, 2], split = [[0], []], partial = 1, memory = standard>> -> !plan.tensor<16x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.rearrange: partial sums are reduced with plan.reduce

// -----

func.func @f(%a: !plan.tensor<16x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) {
  %c = plan.rearrange %a : !plan.tensor<16x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<16x16xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.rearrange: logical tensor types differ

// -----

func.func @f(%a: !plan.tensor<16x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) {
  %c = plan.unary "mish" %a : !plan.tensor<16x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<16x16xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.unary: unknown kind 'mish'

// -----

func.func @f() {
  %w = plan.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : !plan.tensor<16x16xf32, #plan.layout<grid = [2, 2], split = [[0], []], partial = 1, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.parameter: a weight cannot be a partial sum

// -----

func.func @f(%x: !plan.tensor<8x4xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>) {
  %t = plan.transpose %x : !plan.tensor<8x4xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>> -> !plan.tensor<4x8xf32, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.transpose: result must swap the axes and their splits

// -----

func.func @f(%x: tensor<8x8xf16>, %w: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm, grid = [2, 2]>} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
  func.return %y : tensor<8x8xf16>
}
// CHECK: plan.choice: gemm takes a grid of 3 positive parts

// -----

func.func @f(%x: tensor<8x8xf16>, %w: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm_serial, grid = [2, 2], weight = resident>} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
  func.return %y : tensor<8x8xf16>
}
// CHECK: plan.choice: weight (one of ('resident', 'fetched')) applies to gemm only

// -----

func.func @f(%x: tensor<8x8xf16>, %w: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<winograd, grid = [2, 2]>} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
  func.return %y : tensor<8x8xf16>
}
// CHECK: plan.choice: implementation must be one of ('gemm', 'gemm_serial', 'attention', 'gather', 'conv', 'pool'), got winograd

// -----

func.func @f(%x: !plan.tensor<8x8xf16, #plan.layout<grid = [2], split = [[0], []], memory = standard>>) {
  plan.yield %x : !plan.tensor<8x8xf16, #plan.layout<grid = [2], split = [[0], []], memory = standard>>
}
// CHECK: 'plan.yield' expects parent op 'plan.repeat'

// -----

// half partials take half operands
func.func @f(%a: !plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, %b: !plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) {
  %c = plan.gemm %a, %b {half_partials} : (!plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, !plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], partial = 2, memory = interleaved>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm: half_partials needs f16 operands

// -----

// a split contraction with half partials holds them in f16
func.func @f(%a: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, %b: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) {
  %c = plan.gemm %a, %b {half_partials} : (!plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<64x64xf32, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], partial = 2, memory = interleaved>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm: a split contraction's partial sums are f16 (half_partials), not f32

// -----

// and without them in f32
func.func @f(%a: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, %b: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) {
  %c = plan.gemm %a, %b : (!plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2]], memory = interleaved>>, !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], partial = 2, memory = interleaved>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm: a split contraction's partial sums are f32, not f16

// -----

func.func @f(%x: tensor<8x8xf16>, %w: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm_serial, grid = [2, 2], partials = f16>} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
  func.return %y : tensor<8x8xf16>
}
// CHECK: plan.choice: partials (one of ('f32', 'f16')) applies to gemm and conv only

// -----

// a pool's channels split over grid dimension 2, dimension 3 of one part
func.func @f(%x: !plan.tensor<1x8x8x16xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], memory = standard>>) {
  %y = plan.pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : !plan.tensor<1x8x8x16xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], memory = standard>> -> !plan.tensor<1x4x4x16xf16, #plan.layout<grid = [1, 2, 2, 2], split = [[0], [1], [], [2]], memory = standard>>
  func.return
}
// CHECK: plan.pool: the result splits batch, rows and channels over grid dimensions 0, 1 and 2 (dimension 3 of 1 part)

// -----

func.func @f(%x: !plan.tensor<1x8x8x16xf16, #plan.layout<grid = [1, 2, 2, 1], split = [[0], [1], [], [2]], memory = standard>>) {
  %y = plan.pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : !plan.tensor<1x8x8x16xf16, #plan.layout<grid = [1, 2, 2, 1], split = [[0], [1], [], [2]], memory = standard>> -> !plan.tensor<1x6x4x16xf16, #plan.layout<grid = [1, 2, 2, 1], split = [[0], [1], [], [2]], memory = standard>>
  func.return
}
// CHECK: plan.pool: 6 outputs on axis 1 of 8 with this window (at most 5)

// -----

// a swapped gemm's lhs is the AMP's weights: it must lie in interleaved memory
func.func @f(%a: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 1], split = [[0], [2]], memory = standard>>, %b: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 1], split = [[2], [1]], memory = interleaved>>) {
  %c = plan.gemm %a, %b {swapped} : (!plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 1], split = [[0], [2]], memory = standard>>, !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 1], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 1], split = [[0], [1]], memory = interleaved>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm: a swapped gemm's lhs is the AMP's weights, in interleaved memory

// -----

func.func @f(%x: tensor<8x8xf16>, %w: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm_serial, grid = [2, 2], orientation = swapped>} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
  func.return %y : tensor<8x8xf16>
}
// CHECK: plan.choice: orientation (one of ('plain', 'swapped')) applies to gemm only

// -----

func.func @f(%x: tensor<8x8xf16>, %w: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm, grid = [2, 2, 1], orientation = sideways>} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
  func.return %y : tensor<8x8xf16>
}
// CHECK: plan.choice: orientation (one of ('plain', 'swapped')) applies to gemm only

// -----

func.func @f(%x: tensor<8x8xf16>, %w: tensor<8x8xf16>) -> tensor<8x8xf16> {
  %y = graph.matmul %x, %w {plan.choice = #plan.choice<gemm_serial, grid = [2, 2, 2, 2]>} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
  func.return %y : tensor<8x8xf16>
}
// CHECK: plan.choice: gemm_serial takes a grid of 2 or 3 positive parts

// -----

// a serial gemm's partial result lies on a 3-d grid, partial over its last dimension, in f32
func.func @f(%a: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2, 1]], memory = standard>>, %b: !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2, 0], [1]], memory = standard>>) {
  %c = plan.gemm_serial %a, %b {k_steps = 2 : i64} : (!plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [2, 1]], memory = standard>>, !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[2, 0], [1]], memory = standard>>) -> !plan.tensor<64x64xf16, #plan.layout<grid = [2, 2, 2], split = [[0], [1]], partial = 2, memory = standard>>
  func.return
}
// CHECK: Operation does not verify: plan.gemm_serial: a split contraction's partial sums are f32
