// RUN: IPU_ROUNDTRIP

// A scalar run input and output carried as [1] on the device: `host_shape` is the declared
// (host) shape, the same elements in order.

// CHECK-LABEL: func.func @main
func.func @main() attributes {ipu.inputs = ["s"], ipu.outputs = ["y"]} {
  // CHECK: %s = tilemap.host_write "s" : tensor<1xf32> layout #plan.layout<grid = [1], split = {{\[\[}}]], memory = standard> {host_shape = array<i64>} -> !tilemap.buffer<2xf32, tiles = [0, 1], memory = standard>
  %s = tilemap.host_write "s" : tensor<1xf32> layout #plan.layout<grid = [1], split = [[]], memory = standard> {host_shape = array<i64>} -> !tilemap.buffer<2xf32, tiles = [0, 1], memory = standard>
  // CHECK-NEXT: tilemap.host_read "y" %s : !tilemap.buffer<2xf32, tiles = [0, 1], memory = standard> as tensor<1xf32> layout #plan.layout<grid = [1], split = {{\[\[}}]], memory = standard> {host_shape = array<i64: 1, 1>}
  tilemap.host_read "y" %s : !tilemap.buffer<2xf32, tiles = [0, 1], memory = standard> as tensor<1xf32> layout #plan.layout<grid = [1], split = [[]], memory = standard> {host_shape = array<i64: 1, 1>}
  func.return
}
