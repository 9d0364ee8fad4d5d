// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILES
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage,lower-to-tasm' --target sim16 | filecheck %s --check-prefix=TASM

// Integers and bools down the ladder: bool (i1) becomes an i32 word 0/1 at the plan level, the
// integer ops are plan.binary / plan.unary kinds of the same kernels with an i32 dtype word,
// comparisons and to_bool change only the element type, where is a plan.select and arg_reduce
// a row kernel.
func.func @main(%a: tensor<8x32xi32>, %b: tensor<8x32xi32>, %x: tensor<8x32xf16>) -> (tensor<8x32xi32>, tensor<8x32xf16>, tensor<8xi32>) {
  %s = graph.add %a, %b : (tensor<8x32xi32>, tensor<8x32xi32>) -> tensor<8x32xi32>
  %w = graph.wrap %s {to = "i8"} : tensor<8x32xi32> -> tensor<8x32xi32>
  %c = graph.less %a, %b : (tensor<8x32xi32>, tensor<8x32xi32>) -> tensor<8x32xi1>
  %t = graph.cast %x : tensor<8x32xf16> -> tensor<8x32xi1>
  %q = graph.or %c, %t : (tensor<8x32xi1>, tensor<8x32xi1>) -> tensor<8x32xi1>
  %f = graph.cast %w : tensor<8x32xi32> -> tensor<8x32xf16>
  %y = graph.where %q, %x, %f : (tensor<8x32xi1>, tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  %am = graph.arg_reduce %a {kind = "max"} : tensor<8x32xi32> -> tensor<8xi32>
  func.return %w, %y, %am : tensor<8x32xi32>, tensor<8x32xf16>, tensor<8xi32>
}

// PLAN:      %s = plan.binary "add" %a, %b {value = "s"} : (!plan.tensor<8x32xi32, [[L:#plan.layout<[^>]*>]]>, !plan.tensor<8x32xi32, [[L]]>) -> !plan.tensor<8x32xi32, [[L]]>
// PLAN-NEXT: %w = plan.unary "wrap_i8" %s
// PLAN-NEXT: %c = plan.binary "less" %a, %b {value = "c"} : ({{.*}}) -> !plan.tensor<8x32xi32, [[L]]>
// PLAN-NEXT: %t = plan.unary "to_bool" %x {value = "t"} : !plan.tensor<8x32xf16, [[L]]> -> !plan.tensor<8x32xi32, [[L]]>
// PLAN-NEXT: %q = plan.binary "or" %c, %t
// PLAN-NEXT: %f = plan.cast %w {value = "f"} : !plan.tensor<8x32xi32, [[L]]> -> !plan.tensor<8x32xf16, [[L]]>
// PLAN-NEXT: %y = plan.select %x, %f, %q {value = "y"} : (!plan.tensor<8x32xf16, [[L]]>, !plan.tensor<8x32xf16, [[L]]>, !plan.tensor<8x32xi32, [[L]]>) -> !plan.tensor<8x32xf16, [[L]]>
// PLAN:      %am = plan.rowwise "argmax" %a_r {value = "am"} : ({{.*}}) -> !plan.tensor<8xi32,

// TILES:      %s = tilemap.run "add"(%a, %b) {m = 1 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64} : (!tilemap.buffer<1x16xi32
// TILES:      %w = tilemap.run "wrap_i8"(%s) {elements = 16 : i64}
// TILES:      %c = tilemap.run "less"(%a, %b)
// TILES:      %t = tilemap.run "to_bool"(%x) {elements = 16 : i64} : (!tilemap.buffer<1x16xf16{{.*}}) -> !tilemap.buffer<1x16xi32
// TILES:      %q = tilemap.run "or"(%c, %t)
// TILES:      %f = tilemap.run "copy"(%w) {elements = 16 : i64} : (!tilemap.buffer<1x16xi32{{.*}}) -> !tilemap.buffer<1x16xf16
// TILES:      %y = tilemap.run "select"(%x, %f, %q) {elements = 16 : i64}
// TILES:      %am = tilemap.run "arg_rows"(%a_r) {rows = 2 : i64, cols = 32 : i64, valid = 32 : i64, kind = 1 : i64, last = 0 : i64}

// TASM:      tasm.call "add" {{.*}} : i32 -> i32
// TASM:      tasm.call "wrap_i8" {{.*}} : i32 -> i32
// TASM:      tasm.call "less" {{.*}} : i32 -> i32
// TASM:      tasm.call "to_bool" {{.*}} : f16 -> i32
// TASM:      tasm.call "or" {{.*}} : i32 -> i32
// TASM:      tasm.call "copy" {{.*}} : i32 -> f16
// TASM:      tasm.call "select" {{.*}} : f16 -> f16
// TASM:      tasm.call "arg_rows" {{.*}} {rows = 2 : i64, cols = 32 : i64, valid = 32 : i64, kind = 1 : i64, last = 0 : i64} : i32 -> i32
