// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

tasm.phase 0 lower_bound 2 horizon 2 scheduler "greedy-longest-first" transfers = dense<[[0, 327744, 8, 0, 327712, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]]> : tensor<1x16xi32>
// CHECK: Operation does not verify: tasm.phase: transfer table must be [n, 17]

// -----

// rows * words = 4 * 2 = 8 cycles (and words * pc = 8): the family ends at cycle 8 > horizon 4.
tasm.phase 0 lower_bound 4 horizon 4 scheduler "greedy-longest-first" transfers = dense<[[0, 0, 327744, 8, 0, 327712, 8, 4, 2, 4, 1, 1, 1, 1, 0, 0, 0]]> : tensor<1x17xi32>
// CHECK: Operation does not verify: tasm.phase: a transfer ends after the horizon

// -----

tasm.program @p0 tiles(0, 16) {
  tasm.call "relu" out(327744) in(array<i64: 327712>) {elements = 2 : i64} : i32 -> f32
}
// CHECK: Operation does not verify: tasm.call: element types must be floats

// -----

tasm.program @p0 tiles(0, 16) {
  tasm.call "relu" out(327744) in(array<i64: 327712>) {elements = 2 : i64} : f16 -> index
}
// CHECK: Operation does not verify: tasm.call: element types must be floats

// -----

tasm.program @p0 tiles(0, 0) {
  tasm.sync
}
// CHECK: Operation does not verify: tasm.program: tile range must be non-empty

// -----

func.func @f() {
  tasm.sync
  func.return
}
// CHECK: Operation does not verify: 'tasm.sync' expects parent op to be one of 'tasm.program', 'tasm.loop'
