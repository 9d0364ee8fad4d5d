// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// Streams whose host shape differs from the device tensor (a scalar carried as [1]), and a
// zero-size stream (no bytes on any tile: an empty slice table).

// CHECK-LABEL: builtin.module
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
  tasm.program @p0 tiles(0, 16) {
    tasm.host_in @s
    tasm.host_in @e
    tasm.host_out @y
  }
  // CHECK: tasm.stream_in @s : tensor<1xf32> host_shape array<i64> layout #plan.layout<grid = [1], split = {{\[\[}}]], memory = standard> at 327680
  tasm.stream_in @s : tensor<1xf32> host_shape array<i64> layout #plan.layout<grid = [1], split = [[]], memory = standard> at 327680
  // CHECK-NEXT: tasm.stream_in @e : tensor<3x0xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]>
  tasm.stream_in @e : tensor<3x0xf32> slices = #table.slices<[logical_offset, logical_stride, rows, row_elements, tile, tile_count, tile_step, address, tile_stride]>
  // CHECK-NEXT: tasm.stream_out @y : tensor<1xf32> host_shape array<i64> layout
  tasm.stream_out @y : tensor<1xf32> host_shape array<i64> layout #plan.layout<grid = [1], split = [[]], memory = standard> at 327680
}
