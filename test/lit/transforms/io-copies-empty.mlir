// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILE
// RUN: ipu-opt %s -p ipu-compile --target sim16 | tee %t.tasm.mlir | filecheck %s --check-prefix=TASM
// RUN: ipu-opt %s -p convert-precision{dtype=f16} | filecheck %s --check-prefix=F16
// RUN: ipu-translate --to-ipuexe -o %t.ipuexe < %t.tasm.mlir
// RUN: ipu-translate %t.ipuexe --from-ipuexe | filecheck %s --check-prefix=PKG
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// What an imported model's outputs need beyond computed values: an output that is an input
// unchanged, or a constant (a weight), is a device copy (`graph.cast` to its own type) into a
// buffer of its own; a zero-size input or output (`ipu.empty_inputs` / `ipu.empty_outputs`) has
// no bytes on any tile: lower-to-tasm gives it a stream with an empty slice table, streamed by
// every program (zero bytes).
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<2x4xf32>) attributes {ipu.inputs = ["x"], ipu.outputs = ["y", "c"], ipu.empty_inputs = {e = tensor<3x0xf32>}, ipu.empty_outputs = {z = tensor<0xf32>}} {
  %w = graph.parameter "w" dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32> : tensor<2x4xf32>
  %xy = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %wc = graph.cast %w : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %xy, %wc : tensor<4x8xf32>, tensor<2x4xf32>
}

// TILE: %xy = tilemap.run "copy"(%x)
// TILE: %wc = tilemap.run "copy"(%w)
// TILE: tilemap.host_read "y" %xy
// TILE: tilemap.host_read "c" %wc

// TASM:      tasm.program @p0 tiles(0, 4) {
// TASM-NEXT:   tasm.host_in @e
// TASM-NEXT:   tasm.host_in @x
// TASM-NEXT:   tasm.call "copy"
// TASM:        tasm.host_out @z
// TASM-NEXT: }
// TASM:      tasm.program @p1 tiles(4, 12) {
// TASM-NEXT:   tasm.host_in @e
// TASM:        tasm.host_out @z
// TASM-NEXT: }
// TASM: tasm.stream_in @e : tensor<3x0xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]>
// TASM: tasm.stream_out @z : tensor<0xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]>

// The package keeps the empty streams' shapes, with no slices.
// PKG: tasm.stream_in @e : tensor<3x0xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]>
// PKG: tasm.stream_out @z : tensor<0xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]>

// Narrowed, the outputs are the casts back to f32: the same-type copies go (the widening cast
// writes a buffer of its own).
// F16: %x_1 = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
// F16: %xy.f32 = graph.cast %x_1 : tensor<4x8xf16> -> tensor<4x8xf32>
// F16: %wc.f32 = graph.cast %w : tensor<2x4xf16> -> tensor<2x4xf32>
// F16: func.return %xy.f32, %wc.f32

// EMU: output=y samples=32 maximumAbsoluteError=0
// EMU: output=c samples=8 maximumAbsoluteError=0
// EMU: numericalTest=PASS
