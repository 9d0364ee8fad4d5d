// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILE
// RUN: ipu-opt %s -p ipu-compile --target sim16 | tee %t.tasm.mlir | filecheck %s --check-prefix=TASM
// RUN: ipu-translate --to-ipuexe -o %t.ipuexe < %t.tasm.mlir
// RUN: ipu-translate %t.ipuexe --from-ipuexe | filecheck %s --check-prefix=PKG
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A rank-0 (scalar) input and output (an ONNX model's): the graph keeps the declared shape and
// reshapes to [1] and back; the device carries the scalar as [1] on one tile, nothing split, and
// the function records the declared shapes (`ipu.host_shapes`), which the host streams carry
// down to the package: its bindings are tensor<f32> again.
func.func @main(%s: tensor<f32>, %x: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %s1 = graph.reshape %s : tensor<f32> -> tensor<1xf32>
  %r = graph.relu %s1 : tensor<1xf32> -> tensor<1xf32>
  %y = graph.reshape %r : tensor<1xf32> -> tensor<f32>
  %z = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %z : tensor<f32>, tensor<4x8xf32>
}

// PLAN: func.func @main(%s: !plan.tensor<1xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>, %x: !plan.tensor<4x8xf32
// PLAN-SAME: ipu.host_shapes = {s = array<i64>, output0 = array<i64>}
// PLAN-NEXT: %r = plan.unary "relu" %s {value = "r"} : !plan.tensor<1xf32, #plan.layout<grid = [1], split = [[]], memory = standard>>
// PLAN: func.return %r, %z

// TILE: tilemap.host_write "s" : tensor<1xf32> layout #plan.layout<grid = [1], split = [[]], memory = standard> {host_shape = array<i64>}
// TILE: tilemap.host_write "x" : tensor<4x8xf32> layout #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard> ->
// TILE: tilemap.host_read "output0" %r : !tilemap.buffer<2xf32, tiles = [0, 1], memory = standard> as tensor<1xf32> layout #plan.layout<grid = [1], split = [[]], memory = standard> {host_shape = array<i64>}

// TASM: tasm.stream_in @s : tensor<1xf32> host_shape array<i64> layout #plan.layout<grid = [1], split = [[]], memory = standard> at
// TASM: tasm.stream_in @x : tensor<4x8xf32> layout
// TASM: tasm.stream_out @output0 : tensor<1xf32> host_shape array<i64> layout

// PKG: tasm.stream_in @s : tensor<f32> slices = #table.slices<
// PKG: tasm.stream_out @output0 : tensor<f32> slices = #table.slices<

// EMU: output=output0 samples=1 maximumAbsoluteError=0
// EMU: numericalTest=PASS
