// RUN: IPU_ROUNDTRIP

// A weight's bytes survive print and parse: where the builtin dense syntax would change them
// (-0.0 next to 0.0 prints as a splat 0.0, a NaN's payload), `tasm.weight` prints the hex of the
// bytes instead; other values print as usual (NaN and infinities as MLIR's hex bit patterns). (The
// generic form prints the builtin syntax, so it is not a round trip for such bytes.)

// f16 1.0, -0.0, NaN with payload 1, -inf
// CHECK: tasm.weight @s dense<"0x003C0080017E00FC"> : tensor<4xf16> : tensor<4xf16> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]
// CHECK-NEXT: [0, 4, 1, 4, 0, 16, 1, 327696, 8]>
tasm.weight @s dense<"0x003C0080017E00FC"> : tensor<4xf16> : tensor<4xf16> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 4, 1, 4, 0, 16, 1, 327696, 8]>
// f16 0.0, -0.0, 0.0, 0.0
// CHECK-NEXT: tasm.weight @z dense<"0x0000008000000000"> : tensor<4xf16> : tensor<4xf16> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]
// CHECK-NEXT: [0, 4, 1, 4, 0, 16, 1, 327704, 8]>
tasm.weight @z dense<"0x0000008000000000"> : tensor<4xf16> : tensor<4xf16> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 4, 1, 4, 0, 16, 1, 327704, 8]>
// f32 NaN in a layout-placed weight
// CHECK-NEXT: tasm.weight @n dense<[0x7fc00000, 1.000000e+00]> : tensor<2xf32> : tensor<2xf32> layout #plan.layout<grid = [1, 16], split = [[1]], memory = standard> at 327712
tasm.weight @n dense<"0x0000C07F0000803F"> : tensor<2xf32> : tensor<2xf32> layout #plan.layout<grid = [1, 16], split = [[1]], memory = standard> at 327712
// f16 1.0 everywhere: a splat
// CHECK-NEXT: tasm.weight @one dense<1.000000e+00> : tensor<4xf16> : tensor<4xf16> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]
// CHECK-NEXT: [0, 4, 1, 4, 0, 16, 1, 327720, 8]>
tasm.weight @one dense<"0x003C003C003C003C"> : tensor<4xf16> : tensor<4xf16> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride] [0, 4, 1, 4, 0, 16, 1, 327720, 8]>
