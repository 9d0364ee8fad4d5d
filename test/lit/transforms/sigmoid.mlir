// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILES
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage,lower-to-tasm' --target sim16 | filecheck %s --check-prefix=TASM

// SiLU, x * sigmoid(x): graph.sigmoid becomes a plan.unary of kind "sigmoid" in its input's
// layout (no rearrangement), one "sigmoid" kernel call per tile on its 32x16 block, and a
// tasm.call of that kernel.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x128xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 5, std = 0.05> : tensor<256x128xf16>
  %h = graph.matmul %x, %w : (tensor<64x256xf16>, tensor<256x128xf16>) -> tensor<64x128xf16>
  %s = graph.sigmoid %h : tensor<64x128xf16> -> tensor<64x128xf16>
  %y = graph.mul %h, %s : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}

// PLAN:      %h = plan.gemm
// PLAN-SAME: ) -> !plan.tensor<64x128xf16, [[LAYOUT:#plan.layout<[^>]*>]]>
// PLAN-NOT:  plan.rearrange
// PLAN:      %s = plan.unary "sigmoid" %h {{{.*}}} : !plan.tensor<64x128xf16, [[LAYOUT]]> -> !plan.tensor<64x128xf16, [[LAYOUT]]>
// PLAN-NEXT: plan.binary "mul" %h, %s

// TILES-NOT: graph.sigmoid
// TILES:     %s = tilemap.run "sigmoid"(%h) {elements = 512 : i64} : (!tilemap.buffer<32x16xf16, tiles = [0, 16], memory = {{[a-z]+}}>) -> !tilemap.buffer<32x16xf16, tiles = [0, 16], memory = {{[a-z]+}}>
// TILES:     tilemap.run "mul"(%h, %s)

// TASM:      tasm.call "amp_matmul"
// TASM:      tasm.call "sigmoid" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}>) {elements = 512 : i64} : f16 -> f16
// TASM:      tasm.call "mul"
