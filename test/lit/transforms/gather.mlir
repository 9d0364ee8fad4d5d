// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILES
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles,schedule-exchange,place-storage,lower-to-tasm' --target sim16 | filecheck %s --check-prefix=TASM
// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | ipu-opt -p 'plan-materialize{target=sim16}' | filecheck %s --check-prefix=PLAN
// RUN: not ipu-opt %S/Inputs/gather-pin-too-large.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=LARGE
// RUN: not ipu-opt %S/Inputs/gather-pin-not-gather.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=WRONG

// An embedding lookup the PopLibs multiSlice way, its grid pinned to 4 row blocks x 4 column
// blocks: the table stays a distributed resident weight ([16, 8] per tile, never whole on a
// tile), the i32 ids are written by the host to every tile of the grid, each tile slices its rows
// into an f32 partial [8, 8] and plan.reduce sums the four row blocks' partials by exchange.
func.func @main(%ids: tensor<1x8xi32>) -> tensor<8x16xf16> {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.5> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0, plan.choice = #plan.choice<gather, grid = [4, 4]>} : (tensor<64x32xf16>, tensor<1x8xi32>) -> tensor<8x32xf16>
  %w = graph.parameter "w" #graph.gaussian<seed = 2, std = 0.2> : tensor<32x16xf16>
  %y = graph.matmul %x, %w : (tensor<8x32xf16>, tensor<32x16xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}

// PLAN:      func.func @main(%ids: !plan.tensor<1x8xi32, #plan.layout<grid = [4, 4], split = [[], []], memory = standard>>)
// PLAN:      %emb = plan.parameter "emb" {{.*}} : !plan.tensor<64x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>
// PLAN:      %x_partial = plan.embedding_slice %emb, %ids : ({{.*}}) -> !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>>
// PLAN-NEXT: %x = plan.reduce %x_partial {value = "x"} : !plan.tensor<8x32xf32, #plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>> -> !plan.tensor<8x32xf16, #plan.layout<grid = [4, 4], split = [[0], [1]], memory = standard>>
// PLAN:      plan.gemm

// TILES:      %ids = tilemap.host_write "ids" : tensor<1x8xi32> layout #plan.layout<grid = [4, 4], split = [[], []], memory = standard> -> !tilemap.buffer<1x8xi32, tiles = [0, 16], memory = standard>
// TILES:      %emb = tilemap.weight "emb" {{.*}} -> !tilemap.buffer<16x8xf16, tiles = [0, 16], memory = standard>
// TILES:      %x_rows = tilemap.weight "x_rows" #table.offsets<[row_begin, row_end]
// TILES-NEXT: [0, 16],
// TILES-NEXT: [0, 16],
// TILES-NEXT: [0, 16],
// TILES-NEXT: [0, 16],
// TILES-NEXT: [16, 32],
// TILES:      [48, 64]> : tensor<16x2xi32>
// TILES:      %x_partial = tilemap.run "embedding_slice"(%emb, %ids, %x_rows) {indices = 8 : i64, rows = 16 : i64, cols = 8 : i64} : (!tilemap.buffer<16x8xf16, tiles = [0, 16], memory = standard>, !tilemap.buffer<1x8xi32, tiles = [0, 16], memory = standard>, !tilemap.buffer<1x2xi32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<8x8xf32, tiles = [0, 16], memory = standard>
// TILES-NEXT: %x_stage = tilemap.move %x_partial
// TILES:      %x = tilemap.run "reduce_sum"(%x_stage) {parts = 4 : i64, elements = 16 : i64} : (!tilemap.buffer<4x2x8xf32, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<2x8xf16, tiles = [0, 16], memory = standard>

// TASM:      tasm.call "embedding_slice" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>) {indices = 8 : i64, rows = 16 : i64, cols = 8 : i64} : f16 -> f32
// TASM:      tasm.call "reduce_sum"
// TASM:      tasm.call "amp_matmul"
// TASM:      tasm.stream_in @ids {{.*}}tensor<1x8xi32>

// LARGE: error: plan-ops: graph.gather %x (op 1): gather grid 4x8 does not fit table [64x32] on sim16 (16 tiles; at most 64 row blocks and 16 column blocks of two columns)
// WRONG: error: plan-ops: graph.gather %x (op 1): plan.choice must be a #plan.choice<…> of gather
