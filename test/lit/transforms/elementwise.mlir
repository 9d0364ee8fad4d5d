// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILES
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage,lower-to-tasm' --target sim16 | filecheck %s --check-prefix=TASM

// The elementwise ops of real exports after a matmul: each unary op is a plan.unary of its own
// kind in its input's layout (no rearrangement), one kernel run per tile on the 32x16 block and
// a tasm.call of that kernel; min, div and pow are plan.binary ops like max.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x128xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 5, std = 0.05> : tensor<256x128xf16>
  %h = graph.matmul %x, %w : (tensor<64x256xf16>, tensor<256x128xf16>) -> tensor<64x128xf16>
  %a = graph.abs %h : tensor<64x128xf16> -> tensor<64x128xf16>
  %s = graph.sqrt %a : tensor<64x128xf16> -> tensor<64x128xf16>
  %r = graph.rsqrt %s : tensor<64x128xf16> -> tensor<64x128xf16>
  %c = graph.reciprocal %r : tensor<64x128xf16> -> tensor<64x128xf16>
  %l = graph.log %c : tensor<64x128xf16> -> tensor<64x128xf16>
  %n = graph.neg %l : tensor<64x128xf16> -> tensor<64x128xf16>
  %e = graph.erf %n : tensor<64x128xf16> -> tensor<64x128xf16>
  %si = graph.sin %e : tensor<64x128xf16> -> tensor<64x128xf16>
  %co = graph.cos %h : tensor<64x128xf16> -> tensor<64x128xf16>
  %sl = graph.silu %h : tensor<64x128xf16> -> tensor<64x128xf16>
  %m = graph.min %si, %co : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %d = graph.div %m, %c : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %p = graph.pow %c, %sl : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %y = graph.add %d, %p : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}

// PLAN:      %h = plan.gemm
// PLAN-SAME: ) -> !plan.tensor<64x128xf16, [[LAYOUT:#plan.layout<[^>]*>]]>
// PLAN-NOT:  plan.rearrange
// PLAN:      %a = plan.unary "abs" %h {{{.*}}} : !plan.tensor<64x128xf16, [[LAYOUT]]> -> !plan.tensor<64x128xf16, [[LAYOUT]]>
// PLAN-NEXT: %s = plan.unary "sqrt" %a
// PLAN-NEXT: %r = plan.unary "rsqrt" %s
// PLAN-NEXT: %c = plan.unary "reciprocal" %r
// PLAN-NEXT: %l = plan.unary "log" %c
// PLAN-NEXT: %n = plan.unary "neg" %l
// PLAN-NEXT: %e = plan.unary "erf" %n
// PLAN-NEXT: %si = plan.unary "sin" %e
// PLAN-NEXT: %co = plan.unary "cos" %h
// PLAN-NEXT: %sl = plan.unary "silu" %h
// PLAN-NEXT: %m = plan.binary "min" %si, %co {{{.*}}} : (!plan.tensor<64x128xf16, [[LAYOUT]]>, !plan.tensor<64x128xf16, [[LAYOUT]]>)
// PLAN-NEXT: %d = plan.binary "div" %m, %c
// PLAN-NEXT: %p = plan.binary "pow" %c, %sl
// PLAN-NOT:  plan.rearrange

// TILES-NOT: graph.{{[a-z]+}} %
// TILES:     %a = tilemap.run "abs"(%h) {elements = 512 : i64} : (!tilemap.buffer<32x16xf16, tiles = [0, 16], memory = {{[a-z]+}}>) -> !tilemap.buffer<32x16xf16, tiles = [0, 16], memory = {{[a-z]+}}>
// TILES:     tilemap.run "sqrt"(%a) {elements = 512 : i64}
// TILES:     tilemap.run "rsqrt"(%s) {elements = 512 : i64}
// TILES:     tilemap.run "reciprocal"(%r) {elements = 512 : i64}
// TILES:     tilemap.run "log"(%c) {elements = 512 : i64}
// TILES:     tilemap.run "neg"(%l) {elements = 512 : i64}
// TILES:     tilemap.run "erf"(%n) {elements = 512 : i64}
// TILES:     tilemap.run "sin"(%e) {elements = 512 : i64}
// TILES:     tilemap.run "cos"(%h) {elements = 512 : i64}
// TILES:     tilemap.run "silu"(%h) {elements = 512 : i64}
// TILES:     tilemap.run "min"(%si, %co) {m = 32 : i64, n = 16 : i64, b_rows = 32 : i64, b_cols = 16 : i64}
// TILES:     tilemap.run "div"(%m, %c)
// TILES:     tilemap.run "pow"(%c, %sl)

// TASM:      tasm.call "amp_matmul"
// TASM:      tasm.call "abs" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}>) {elements = 512 : i64} : f16 -> f16
// TASM:      tasm.call "sqrt"
// TASM:      tasm.call "rsqrt"
// TASM:      tasm.call "reciprocal"
// TASM:      tasm.call "log"
// TASM:      tasm.call "neg"
// TASM:      tasm.call "erf"
// TASM:      tasm.call "sin"
// TASM:      tasm.call "cos"
// TASM:      tasm.call "silu"
// TASM:      tasm.call "min" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}>)
// TASM:      tasm.call "div"
// TASM:      tasm.call "pow"
