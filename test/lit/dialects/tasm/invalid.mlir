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

// -----

// A binding is placed by a layout at an address, or by a slice table: exactly one of them.
tasm.stream_in 0 "x" : tensor<4x8xf32>
// CHECK: Operation does not verify: tasm.stream_in: exactly one of a layout or a slice table is required

// -----

tasm.stream_in 0 "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> at 327712 slices = dense<[[0, 8, 4, 2, 0, 4, 1, 327712, 8]]> : tensor<1x9xi64>
// CHECK: Operation does not verify: tasm.stream_in: exactly one of a layout or a slice table is required

// -----

"tasm.stream_out"() <{index = 0 : i64, sym_name = "y", tensor = tensor<4x8xf32>, address = 327712 : i64, slices = dense<[[0, 8, 4, 2, 0, 4, 1, 327712, 8]]> : tensor<1x9xi64>}> : () -> ()
// CHECK: Operation does not verify: tasm.stream_out: a layout needs an address, a slice table takes none

// -----

"tasm.stream_out"() <{index = 0 : i64, sym_name = "y", tensor = tensor<4x8xf32>, layout = #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>}> : () -> ()
// CHECK: Operation does not verify: tasm.stream_out: a layout needs an address, a slice table takes none

// -----

tasm.stream_out 0 "y" : tensor<4x8xf32> slices = dense<[[0, 8, 4, 2, 0, 4, 1, 327712]]> : tensor<1x8xi64>
// CHECK: Operation does not verify: tasm.stream_out: the slice table must be [n, 9], not [1, 8]

// -----

tasm.stream_out 0 "y" : tensor<4x8xf32> slices = dense<[[0, 8, 4, 2, 0, 4, 1, 327712, 8]]> : tensor<1x9xi32>
// CHECK: Operation does not verify: tasm.stream_out: the slice table must be a 2-d i64 tensor

// -----

tasm.stream_out 0 "y" : tensor<4x8xf32> slices = dense<[0, 8, 4, 2, 0, 4, 1, 327712, 8]> : tensor<9xi64>
// CHECK: Operation does not verify: tasm.stream_out: the slice table must be a 2-d i64 tensor

// -----

tasm.checkpoint_def 0 "g" value "g" : tensor<4x8xf32> slices = dense<[[0, 8, 4, 2, 0, 4, -1, 327712, 8]]> : tensor<1x9xi64>
// CHECK: Operation does not verify: tasm.checkpoint_def: slice 0 column 6 is negative (-1)

// -----

tasm.weight "b" dense<[1.0, 2.0]> : tensor<2xf32> : tensor<4xf32> slices = dense<[[0, 4, 1, 4, 0, 16, 1, 327680, 16]]> : tensor<1x9xi64>
// CHECK: Operation does not verify: tasm.weight: dense initializer shape [2] is not [4]

// -----

tasm.program @p0 tiles(0, 16) at -64 {
  tasm.sync
}
// CHECK: Operation does not verify: tasm.program: code address must be non-negative
