// Attention with an additive bias down the ladder at sim64: a per-head position bias (a weight,
// T5-style, scale 1) on materialized attention pinned to two key blocks (so each tile's bias
// block is a [query rows, key block] tile of it), and a shared bias computed at run time (a host
// input) on streamed causal attention pinned to two key windows.

// RUN: ipu-opt %s -p 'plan-ops{target=sim64 finalists=1}' --target sim64 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim64 finalists=1},map-tiles' --target sim64 | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %s -p ipu-compile --target sim64 | filecheck %s --check-prefix=TASM
// RUN: ipu-run %s --target sim64 | filecheck %s --check-prefix=EMU

func.func @main(%x: tensor<64x128xf16>, %mask: tensor<1x64x64xf16>) -> (tensor<64x128xf16>, tensor<64x128xf16>) {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 11, std = 0.05> : tensor<128x128xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 12, std = 0.05> : tensor<128x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 13, std = 0.05> : tensor<128x32xf16>
  %pos = graph.parameter "pos" #graph.gaussian<seed = 14, std = 0.5> : tensor<8x64x64xf16>
  %q = graph.matmul %x, %wq : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  %k = graph.matmul %x, %wk : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %v = graph.matmul %x, %wv : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %qh = graph.split_heads %q {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x64x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %a = graph.attention %qh, %kh, %vh bias %pos {form = "materialized", scale = 1.0 : f32, plan.choice = #plan.choice<attention, grid = [2, 4, 4, 2]>} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<8x64x64xf16>) -> tensor<8x64x16xf16>
  %c = graph.attention %qh, %kh, %vh bias %mask {form = "streamed", causal, plan.choice = #plan.choice<attention, grid = [2, 4, 8, 1], key_block = 32>} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<1x64x64xf16>) -> tensor<8x64x16xf16>
  %m = graph.merge_heads %a : tensor<8x64x16xf16> -> tensor<64x128xf16>
  %mc = graph.merge_heads %c : tensor<8x64x16xf16> -> tensor<64x128xf16>
  func.return %m, %mc : tensor<64x128xf16>, tensor<64x128xf16>
}

// --- plan-ops: the bias is laid out like the scores. The per-head weight splits heads, query
// rows and keys as q and k do ([[0, 1], [2], [3]]); the shared input is replicated over the
// head dimensions and keeps every key on each tile for the streamed windows ([[], [2], []]).
// PLAN:       func.func @main(%x: {{.*}}, %mask: !plan.tensor<1x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = {{\[\[}}], [2], []], align = [1, 8, 1], memory = standard>>)
// PLAN:       %pos = plan.parameter "pos" #graph.gaussian<{{.*}}> : !plan.tensor<8x64x64xf16, #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0, 1], [2], [3]], align = [1, 16, 1], memory = standard>>
// PLAN-NEXT:  %a_state = plan.attention %qh, %kh, %vh bias %pos {form = "materialized", scale = 1.000000e+00 : f64, key_block = 32 : i64, value = "a"} : ({{.*}}, !plan.tensor<8x64x64xf16, {{.*}}>) -> !plan.tensor<8x64x18xf32,
// PLAN:       %c_state = plan.attention %qh_r, %kh, %vh bias %mask {form = "streamed", scale = 2.500000e-01 : f64, key_block = 32 : i64, causal, value = "c"}

// --- map-tiles: the bias kernels read the bias after v; attention_start_bias starts the state
// from the first key block (no init), attention_update_bias updates it (the state, operand 6,
// in place); materialized: the tile's [16 x 32] bias block as it is; streamed: each window's
// 32 keys of the tile's 8 bias rows moved out of the [8 x 64] block.
// MAP:        %pos = tilemap.weight "pos" {{.*}} -> !tilemap.buffer<1x16x32xf16, tiles = [0, 64], memory = standard>
// MAP-NOT:    attention_init
// MAP:        %a_state = tilemap.run "attention_start_bias"(%qh, %kh, %vh, %pos, %a_state_offsets, %a_state_scores) {kr = 32 : i64, k_base = 0 : i64, qr = 16 : i64, d = 16 : i64, causal = 0 : i64, scale_bits = 1065353216 : i64} :
// MAP:        %c_state_bias0 = tilemap.move %mask transfers
// MAP:        {reason = "attention bias window"} : !tilemap.buffer<1x8x64xf16, tiles = [0, 64], memory = standard> -> !tilemap.buffer<1x8x32xf16, tiles = [0, 64], memory = standard>
// MAP-NEXT:   %c_state = tilemap.run "attention_start_bias"(%c_state_q_scaled, %c_state_k0, %c_state_v0, %c_state_bias0, %c_state_offsets, %c_state_scores) {kr = 32 : i64, k_base = 0 : i64, qr = 8 : i64, d = 16 : i64, causal = 1 : i64, {{.*}}} :
// MAP:        %c_state_bias32 = tilemap.move %mask transfers
// MAP:        {reason = "attention bias window"}
// MAP-NEXT:   %c_state_1 = tilemap.run "attention_update_bias"(%c_state_q_scaled, %c_state_k32, %c_state_v32, %c_state_bias32, %c_state_offsets, %c_state_scores, %c_state) {kr = 32 : i64, k_base = 32 : i64,

// --- tasm: the materialized attention starts its state in one CALL; the streamed one starts
// it with its first window and updates it with its second.
// TASM:         tasm.call "attention_start_bias" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>)
// TASM:         tasm.call "attention_start_bias" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>)
// TASM:         tasm.call "attention_update_bias" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>)
// TASM-NOT:     tasm.call "attention_{{update|start|init}}"

// --- emulated against the graph reference, scores (bias included) and outputs.
// EMU:        name=a_state_scores value=a aspect=scores
// EMU:        name=c_state_scores value=c aspect=scores@32
// EMU:        numericalTest=PASS
