// RUN: ipu-opt %s --split-input-file -p map-tiles | filecheck %s
// RUN: ipu-opt %s --split-input-file -p 'map-tiles,schedule-exchange,place-storage,lower-to-tasm' | filecheck %s --check-prefix=TASM

// Partial sums move to their staging buffers as whole padded blocks when nothing reads the sum's
// padding as data, so no staging buffer is zeroed; a sum whose padding a contraction reads keeps
// its zero fill.

// @whole: a [8, 16] x b [16, 6], K cut in 2, columns in 2 blocks of 4 (8, two of padding). The
// sum is only returned; its layout cuts the columns in 4 blocks of 2 (the same 8). So each
// tile's partial moves whole: both 2-column halves of its 4 columns, the padding included.
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
func.func @whole(%a: !plan.tensor<8x16xf16, #plan.layout<grid = [1, 2, 2], split = [[0], [2]], memory = standard>>,
                 %b: !plan.tensor<16x6xf16, #plan.layout<grid = [1, 2, 2], split = [[2], [1]], memory = interleaved>>)
    -> !plan.tensor<8x6xf16, #plan.layout<grid = [1, 2, 2], split = [[0], [1, 2]], memory = standard>>
    attributes {ipu.inputs = ["a", "b"], ipu.outputs = ["y"]} {
  %p = plan.gemm %a, %b : (!plan.tensor<8x16xf16, #plan.layout<grid = [1, 2, 2], split = [[0], [2]], memory = standard>>, !plan.tensor<16x6xf16, #plan.layout<grid = [1, 2, 2], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<8x6xf32, #plan.layout<grid = [1, 2, 2], split = [[0], [1]], partial = 2, memory = interleaved>>
  %y = plan.reduce %p : !plan.tensor<8x6xf32, #plan.layout<grid = [1, 2, 2], split = [[0], [1]], partial = 2, memory = interleaved>> -> !plan.tensor<8x6xf16, #plan.layout<grid = [1, 2, 2], split = [[0], [1, 2]], memory = standard>>
  func.return %y : !plan.tensor<8x6xf16, #plan.layout<grid = [1, 2, 2], split = [[0], [1, 2]], memory = standard>>
}
}

// CHECK:      %y_stage = tilemap.move %p transfers
// CHECK-NEXT: [0, 0, 16, 0, 0, 8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0],
// CHECK-NEXT: [0, 8, 16, 1, 0, 8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1, 0, 16, 0, 64, 8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0],
// CHECK-NEXT: [1, 8, 16, 1, 64, 8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0]> {reason = "reduce"} : !tilemap.buffer<8x4xf32, tiles = [0, 4], memory = interleaved> -> !tilemap.buffer<2x8x2xf32, tiles = [0, 4], memory = standard>

// TASM:        tasm.call "amp_matmul" {{.*}} {m = 8 : i64, k = 8 : i64, n = 4 : i64} : f16 -> f32
// TASM-NEXT:   tasm.sync
// TASM-NEXT:   tasm.exchange @phase0
// TASM-NEXT:   tasm.call "reduce_sum" {{.*}} {parts = 2 : i64, elements = 16 : i64} : f32 -> f16

// -----

// @read: %r = a [22, 16] x b [16, 8], K cut in 2, rows in 3 blocks of 8 (24, two of padding),
// is the rhs of a second gemm that contracts over those rows: its staging is zeroed first.
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
func.func @read(%a: !plan.tensor<22x16xf16, #plan.layout<grid = [3, 1, 2], split = [[0], [2]], memory = standard>>,
                %b: !plan.tensor<16x8xf16, #plan.layout<grid = [3, 1, 2], split = [[2], [1]], memory = interleaved>>,
                %l: !plan.tensor<4x22xf16, #plan.layout<grid = [3, 1, 2], split = [[], [0]], memory = standard>>)
    -> !plan.tensor<4x8xf16, #plan.layout<grid = [3, 1, 2], split = [[], [1, 2]], memory = standard>>
    attributes {ipu.inputs = ["a", "b", "l"], ipu.outputs = ["y"]} {
  %p = plan.gemm %a, %b : (!plan.tensor<22x16xf16, #plan.layout<grid = [3, 1, 2], split = [[0], [2]], memory = standard>>, !plan.tensor<16x8xf16, #plan.layout<grid = [3, 1, 2], split = [[2], [1]], memory = interleaved>>) -> !plan.tensor<22x8xf32, #plan.layout<grid = [3, 1, 2], split = [[0], [1]], partial = 2, memory = interleaved>>
  %r = plan.reduce %p : !plan.tensor<22x8xf32, #plan.layout<grid = [3, 1, 2], split = [[0], [1]], partial = 2, memory = interleaved>> -> !plan.tensor<22x8xf16, #plan.layout<grid = [3, 1, 2], split = [[0], [1, 2]], memory = interleaved>>
  %q = plan.gemm %l, %r : (!plan.tensor<4x22xf16, #plan.layout<grid = [3, 1, 2], split = [[], [0]], memory = standard>>, !plan.tensor<22x8xf16, #plan.layout<grid = [3, 1, 2], split = [[0], [1, 2]], memory = interleaved>>) -> !plan.tensor<4x8xf32, #plan.layout<grid = [3, 1, 2], split = [[], [1, 2]], partial = 0, memory = interleaved>>
  %y = plan.reduce %q : !plan.tensor<4x8xf32, #plan.layout<grid = [3, 1, 2], split = [[], [1, 2]], partial = 0, memory = interleaved>> -> !plan.tensor<4x8xf16, #plan.layout<grid = [3, 1, 2], split = [[], [1, 2]], memory = standard>>
  func.return %y : !plan.tensor<4x8xf16, #plan.layout<grid = [3, 1, 2], split = [[], [1, 2]], memory = standard>>
}
}

// CHECK:      %r_stage = tilemap.move %p transfers
// CHECK:      {reason = "reduce", zero_fill} : !tilemap.buffer<8x8xf32, tiles = [0, 6], memory = interleaved> -> !tilemap.buffer<2x8x4xf32, tiles = [0, 6], memory = standard>
// CHECK:      %y_stage = tilemap.move %q transfers
// CHECK:      {reason = "reduce"} : !tilemap.buffer<4x4xf32, tiles = [0, 6], memory = interleaved> -> !tilemap.buffer<3x4x4xf32, tiles = [0, 6], memory = standard>

// TASM:        tasm.call "amp_matmul" {{.*}} {m = 8 : i64, k = 8 : i64, n = 8 : i64} : f16 -> f32
// TASM-NEXT:   tasm.call "zero" {{.*}} {elements = 64 : i64} : f32 -> f32
// TASM-NEXT:   tasm.sync
// TASM:        tasm.call "amp_matmul" {{.*}} {m = 4 : i64, k = 8 : i64, n = 4 : i64} : f16 -> f32
// TASM-NEXT:   tasm.sync
