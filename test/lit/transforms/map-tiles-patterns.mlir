// RUN: ipu-opt %s --split-input-file -p map-tiles | filecheck %s
// RUN: ipu-opt %s --split-input-file -p map-tiles --print-op-generic | ipu-opt --split-input-file | filecheck %s

// One plan op of each family through its map-tiles pattern. The inputs are plan-ops output
// (`plan-ops{target=sim16 finalists=1}`) of small graphs.

// Elementwise ops (MapElementwise): a unary op runs its kind as the kernel, a cast runs `copy`
// over the result block's elements, and a reshape whose copy would rewrite its input's bytes (read
// by nothing else) is a view of its buffer (MapReshape); a rearrange becomes a move (MapRearrange). The
// arguments become host writes, the results host reads, and every op naming a graph value (`value = "t"`) is
// checkpointed, numbered in program order.
func.func @main(%x: !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>) -> !plan.tensor<16x32xf16, #plan.layout<grid = [16], split = [[0], []], memory = standard>> attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]} {
  %t = plan.unary "tanh" %x {value = "t"} : !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>
  %t_r = plan.rearrange %t {reason = "graph.reshape"} : !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
  %r = plan.reshape %t_r {value = "r"} : !plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>> -> !plan.tensor<16x32xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
  %c = plan.cast %r {value = "c"} : !plan.tensor<16x32xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>> -> !plan.tensor<16x32xf16, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
  func.return %c : !plan.tensor<16x32xf16, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
}

// CHECK:      func.func @main() attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"], tilemap.mapping = #tilemap.mapping<identity>} {
// CHECK-NEXT:   %x = tilemap.host_write "x" : tensor<32x16xf32> layout #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard> -> !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT:   %t = tilemap.run "tanh"(%x) {elements = 32 : i64} : (!tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT:   tilemap.checkpoint "t" value "t" %t : !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard> as tensor<32x16xf32>
// CHECK-NEXT:   %t_r = tilemap.move %t transfers = #table.transfers<[src_tile, {{.*}}
// CHECK:      {{^ +\[.*\]}}> {reason = "graph.reshape"} : !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT:   %r = tilemap.view %t_r : !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x32xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT:   tilemap.checkpoint "r" value "r" %r
// CHECK-NEXT:   %c = tilemap.run "copy"(%r) {elements = 32 : i64} : (!tilemap.buffer<1x32xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<1x32xf16, tiles = [0, 16], memory = standard>
// CHECK-NEXT:   tilemap.checkpoint "c" value "c" %c
// CHECK-NEXT:   tilemap.host_read "output0" %c : !tilemap.buffer<1x32xf16, tiles = [0, 16], memory = standard> as tensor<16x32xf16> layout #plan.layout<grid = [16], split = {{\[\[}}0], []], memory = standard>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }

// -----

// A parameter becomes a weight (MapParameter); binary ops (MapBinary) take the rhs as the same
// block (b_rows = m) or as a broadcast row (b_rows = 1); a transpose (MapTranspose) runs on the
// input block [m, n].
func.func @main(%x: !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>) -> !plan.tensor<16x32xf32, #plan.layout<grid = [16, 1], split = [[1], [0]], align = [16, 2], memory = standard>> attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]} {
  %b = plan.parameter "b" #graph.gaussian<seed = 1, std = 0.1> : !plan.tensor<16xf32, #plan.layout<grid = [16, 1], split = [[1]], memory = standard>>
  %y = plan.binary "add" %x, %b {value = "y"} : (!plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>, !plan.tensor<16xf32, #plan.layout<grid = [16, 1], split = [[1]], memory = standard>>) -> !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>
  %z = plan.binary "mul" %y, %x {value = "z"} : (!plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>, !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>) -> !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>
  %t = plan.transpose %z {value = "t"} : !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<16x32xf32, #plan.layout<grid = [16, 1], split = [[1], [0]], align = [16, 2], memory = standard>>
  func.return %t : !plan.tensor<16x32xf32, #plan.layout<grid = [16, 1], split = [[1], [0]], align = [16, 2], memory = standard>>
}

// CHECK:      %x = tilemap.host_write "x"
// CHECK-NEXT: %b = tilemap.weight "b" #graph.gaussian<seed = 1, std = 0.1> : tensor<16xf32> layout #plan.layout<grid = [16, 1], split = {{\[\[}}1]], memory = standard> -> !tilemap.buffer<16xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT: %y = tilemap.run "add"(%x, %b) {m = 2 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64}
// CHECK-NEXT: tilemap.checkpoint "y" value "y" %y
// CHECK-NEXT: %z = tilemap.run "mul"(%y, %x) {m = 2 : i64, n = 16 : i64, b_rows = 2 : i64, b_cols = 16 : i64}
// CHECK-NEXT: tilemap.checkpoint "z" value "z" %z
// CHECK-NEXT: %t = tilemap.run "transpose"(%z) {m = 2 : i64, n = 16 : i64} : (!tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<16x2xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT: tilemap.checkpoint "t" value "t" %t
// CHECK-NEXT: tilemap.host_read "output0" %t

// -----

// Row ops (MapRowwise) over whole rows: softmax, a norm with its epsilon as f32 bits
// (1e-6 = 0x358637BD = 897988541) and a row reduction (mean = kind 3); two results, two host reads.
func.func @main(%x: !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>>) -> (!plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>, !plan.tensor<32xf32, #plan.layout<grid = [16], split = [[0]], memory = standard>>) attributes {ipu.inputs = ["x"], ipu.outputs = ["output0", "output1"]} {
  %x_r = plan.rearrange %x {reason = "graph.softmax"} : !plan.tensor<32x16xf32, #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>> -> !plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
  %s = plan.rowwise "softmax" %x_r {value = "s"} : (!plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>) -> !plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
  %g = plan.parameter "g" #graph.gaussian<seed = 1, std = 0.1> : !plan.tensor<16xf32, #plan.layout<grid = [16], split = [[]], memory = standard>>
  %n = plan.rowwise "rms_norm" %s, %g {value = "n", epsilon = 1.000000e-06 : f64} : (!plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>, !plan.tensor<16xf32, #plan.layout<grid = [16], split = [[]], memory = standard>>) -> !plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>
  %m = plan.rowwise "mean" %n {value = "m"} : (!plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>) -> !plan.tensor<32xf32, #plan.layout<grid = [16], split = [[0]], memory = standard>>
  func.return %n, %m : !plan.tensor<32x16xf32, #plan.layout<grid = [16], split = [[0], []], memory = standard>>, !plan.tensor<32xf32, #plan.layout<grid = [16], split = [[0]], memory = standard>>
}

// CHECK:      %s = tilemap.run "softmax_rows"(%x_r) {rows = 2 : i64, cols = 16 : i64, valid = 16 : i64}
// CHECK-NEXT: tilemap.checkpoint "s" value "s" %s
// CHECK-NEXT: %g = tilemap.weight "g"
// CHECK-NEXT: %n = tilemap.run "rms_norm_rows"(%s, %g) {rows = 2 : i64, cols = 16 : i64, valid = 16 : i64, eps_bits = 897988541 : i64}
// CHECK-NEXT: tilemap.checkpoint "n" value "n" %n
// CHECK-NEXT: %m = tilemap.run "reduce_rows"(%n) {rows = 2 : i64, cols = 16 : i64, valid = 16 : i64, kind = 3 : i64} : (!tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<2xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT: tilemap.checkpoint "m" value "m" %m
// CHECK-NEXT: tilemap.host_read "output0" %n
// CHECK-NEXT: tilemap.host_read "output1" %m
// CHECK-NEXT: func.return
