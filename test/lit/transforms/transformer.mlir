// Transformer ops down the ladder at sim64: plan-ops, map-tiles and the whole ipu-compile on
// examples/transformer_block_small.mlir and examples/attention_small.mlir (materialized
// attention), and on this file's own graph model (streamed causal attention).

// RUN: ipu-opt %S/Inputs/transformer-block-key-split.mlir -p 'plan-ops{target=sim64 finalists=1}' --target sim64 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %S/Inputs/attention-key-split.mlir -p 'plan-ops{target=sim64 finalists=1},map-tiles' --target sim64 | filecheck %s --check-prefix=MAP
// RUN: ipu-opt %S/Inputs/transformer-block-key-split.mlir -p ipu-compile --target sim64 | filecheck %s --check-prefix=TB
// RUN: ipu-opt %S/Inputs/attention-key-split.mlir -p ipu-compile --target sim64 | filecheck %s --check-prefix=ATT
// RUN: ipu-opt %examples/attention_small.mlir -p ipu-compile --target sim64 | filecheck %s --check-prefix=ATT1
// RUN: ipu-opt %s -p 'plan-ops{target=sim64 finalists=1}' --target sim64 | filecheck %s --check-prefix=SPLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim64 finalists=1},map-tiles' --target sim64 | filecheck %s --check-prefix=SMAP
// RUN: ipu-opt %S/Inputs/attention-streamed-windows.mlir -p map-tiles --target sim64 | filecheck %s --check-prefix=WMAP
// RUN: ipu-opt %S/Inputs/attention-streamed-windows.mlir -p ipu-compile --target sim64 | filecheck %s --check-prefix=WTASM

// Seq 64, 8 query heads over 2 KV heads, head_dim 16, streamed causal attention.
func.func @main(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 31, std = 0.05> : tensor<128x128xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 32, std = 0.05> : tensor<128x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 33, std = 0.05> : tensor<128x32xf16>
  %q = graph.matmul %x, %wq : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  %k = graph.matmul %x, %wk : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %v = graph.matmul %x, %wv : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %qh = graph.split_heads %q {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x64x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "streamed", causal} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  %m = graph.merge_heads %a : tensor<8x64x16xf16> -> tensor<64x128xf16>
  func.return %m : tensor<64x128xf16>
}

// --- plan-ops on the transformer block, its attention pinned to a key split: layer norms on
// whole rows in place, heads split over a (kv heads 2, group 4, query blocks 4, key blocks 2) grid,
// materialized causal attention.
// PLAN-NOT:   = graph.
// The input's blocks are whole rows already (its columns over a grid dimension of 1): the norms
// run where their inputs lie, with no rearrange.
// PLAN-NOT:   reason = "graph.layer_norm"
// PLAN:       %n1 = plan.rowwise "layer_norm" %x, %g1, %b1 {value = "n1", epsilon = 1.000000e-05 : f64} : (!plan.tensor<64x128xf16, #plan.layout<grid = [64, 1], split = {{\[\[}}0], [1]], memory = standard>>, !plan.tensor<128xf16, #plan.layout<grid = [64, 1], split = {{\[\[}}1]], memory = standard>>, !plan.tensor<128xf16, #plan.layout<grid = [64, 1], split = {{\[\[}}1]], memory = standard>>) -> !plan.tensor<64x128xf16, #plan.layout<grid = [64, 1], split = {{\[\[}}0], [1]], memory = standard>>
// Each head's block is one head, so every split moves the projection as it lies (no rearrange).
// PLAN-NOT:   reason = "graph.split_heads"
// PLAN:       %qh = plan.split_heads %q {value = "qh"} : {{.*}} -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0, 1], [2], []]
// PLAN-NEXT:  %kh = plan.split_heads %k {value = "kh"} : {{.*}} -> !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0], [3], []]
// PLAN-NEXT:  %vh = plan.split_heads %v {value = "vh"} : {{.*}} -> !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0], [3], []]
// PLAN-NEXT:  %a_state = plan.attention %qh, %kh, %vh {form = "materialized", scale = 2.500000e-01 : f64, key_block = 32 : i64, causal, value = "a"} : ({{.*}}) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0, 1], [2], []], partial = 3,
// PLAN-NEXT:  %a = plan.attention_combine %a_state {value = "a"} : {{.*}} -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0, 1], [2, 3], []], memory = standard>>
// PLAN-NEXT:  %m = plan.merge_heads %a {value = "m"} : {{.*}} -> !plan.tensor<64x128xf16, #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}2, 3], [0, 1]]
// PLAN:       %n2 = plan.rowwise "layer_norm" %r1, %g2, %b2 {value = "n2", epsilon = 1.000000e-05 : f64}
// PLAN:       %ge = plan.unary "gelu" %hb {value = "ge"}
// PLAN:       %y = plan.binary "add" %r1, %fb_r {value = "y"}
// PLAN-NOT:   plan.rowwise "softmax"

// --- map-tiles on attention_small pinned to a key split: the materialized attention keeps
// each tile's [16 x 32] score block in a tilemap.alloc buffer that attention_update writes (and
// checkpoints) in place.
// MAP:        %qh = tilemap.move %q transfers
// MAP:        tilemap.checkpoint "qh" value "qh" %qh : !tilemap.buffer<1x16x16xf16, tiles = [0, 64], memory = interleaved> as tensor<8x64x16xf16>
// MAP:        %a_state_offsets = tilemap.weight "a_state_offsets" #table.offsets<[query_row, key_begin, key_end, pad]
// MAP-NEXT:     [0, 0, 32, 0],
// MAP:          [48, 32, 64, 0]> : tensor<64x4xf32> layout #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0, 1, 2, 3], []], memory = standard> -> !tilemap.buffer<1x4xf32, tiles = [0, 64], memory = standard>
// The tile's one key block starts the state (attention_start: no attention_init before it).
// The query block is scaled once by the attention's scale (0.25 = 1/sqrt(16)), a one-element
// weight, so the update scales nothing (scale_bits = 1.0).
// MAP-NEXT:   %a_state_scale = tilemap.weight "a_state_scale" dense<2.500000e-01> : tensor<1x1xf16> : tensor<1x1xf16> layout #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}], []], memory = standard> -> !tilemap.buffer<1x2xf16, tiles = [0, 64], memory = standard>
// MAP-NEXT:   %a_state_q_scaled = tilemap.run "mul"(%qh, %a_state_scale) {m = 16 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 1 : i64}
// MAP-NEXT:   %a_state_scores = tilemap.alloc : !tilemap.buffer<1x16x32xf16, tiles = [0, 64], memory = standard>
// MAP-NEXT:   %a_state = tilemap.run "attention_start"(%a_state_q_scaled, %kh, %vh, %a_state_offsets, %a_state_scores) {kr = 32 : i64, k_base = 0 : i64, qr = 16 : i64, d = 16 : i64, causal = 0 : i64, scale_bits = 1065353216 : i64, k_step = 1 : i64} : ({{.*}}) -> !tilemap.buffer<1x16x18xf32, tiles = [0, 64], memory = standard>
// MAP-NEXT:   tilemap.checkpoint "a_state_scores" value "a" %a_state_scores : !tilemap.buffer<1x16x32xf16, tiles = [0, 64], memory = standard> as tensor<8x64x64xf16> layout #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0, 1], [2], [3]], align = [1, 16, 32], memory = standard> {aspect = "scores"}
// MAP-NEXT:   %a_stage = tilemap.move %a_state transfers = #table.transfers<[src_tile, {{.*}}]
// MAP:        ]> {reason = "attention_combine"} : !tilemap.buffer<1x16x18xf32, {{.*}}> -> !tilemap.buffer<2x1x8x18xf32, tiles = [0, 64], memory = standard>
// MAP-NEXT:   %a = tilemap.run "attention_combine"(%a_stage) {parts = 2 : i64, qr = 8 : i64, d = 16 : i64} : (!tilemap.buffer<2x1x8x18xf32, tiles = [0, 64], memory = standard>) -> !tilemap.buffer<1x8x16xf16, tiles = [0, 64], memory = standard>
// MAP-NEXT:   tilemap.checkpoint "a" value "a" %a
// MAP-NEXT:   %m = tilemap.view %a
// MAP-NOT:    attention_update

// --- ipu-compile on the pinned transformer block: row kernels for the norms, one materialized
// causal attention_update per tile, no softmax_rows (attention keeps its own online softmax).
// TB-NOT:     {{graph|plan|tilemap|exchange}}.
// TB:         tasm.program @p0 tiles(0, {{[0-9]+}}) {
// TB:         tasm.call "layer_norm_rows" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>) {rows = 1 : i64, cols = 128 : i64, valid = 128 : i64, eps_bits = {{[0-9]+}} : i64} : f16 -> f16
// The scale (1/4, heads of 16) is folded into the q projection's weights (fold-attention-scale):
// no query block is scaled before the attention.
// TB-NOT:     tasm.call "mul" {{.*}} {m = 16 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 1 : i64} : f16 -> f16
// TB:         tasm.call "attention_start" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, [[SCORES:[0-9]+]]>) {qr = 16 : i64, kr = 32 : i64, d = 16 : i64, causal = 1 : i64, scale_bits = 1065353216 : i64, k_base = 0 : i64, k_step = 1 : i64} : f16 -> f32
// TB-NEXT:    tasm.checkpoint @{{[a-z_0-9]+}}
// TB:         tasm.call "attention_combine" {{.*}} {parts = 2 : i64, qr = 8 : i64, d = 16 : i64} : f32 -> f16
// TB:         tasm.call "layer_norm_rows" {{.*}} {rows = 1 : i64, cols = 128 : i64, valid = 128 : i64, eps_bits = {{[0-9]+}} : i64} : f16 -> f16
// TB:         tasm.call "gelu"
// TB:         tasm.host_out @output0
// TB-NEXT:    }
// TB:         tasm.checkpoint_def @a_state_scores value "a" aspect "scores" : tensor<8x64x64xf16> layout #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0, 1], [2], [3]], align = [1, 16, 32], memory = standard> at [[SCORES]]
// TB:         tasm.stream_out @output0 : tensor<64x128xf16>
// TB-NOT:     softmax_rows

// --- ipu-compile on the pinned attention_small: the same attention kernels, non-causal.
// ATT-NOT:    tasm.call "attention_init"
// ATT-NOT:    tasm.call "mul" {{.*}} {m = 16 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 1 : i64} : f16 -> f16
// ATT:        tasm.call "attention_start" out({{[0-9]+}}) in(array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, [[OFFS:[0-9]+]], [[ASCORES:[0-9]+]]>) {qr = 16 : i64, kr = 32 : i64, d = 16 : i64, causal = 0 : i64, scale_bits = 1065353216 : i64, k_base = 0 : i64, k_step = 1 : i64} : f16 -> f32
// ATT-NEXT:   tasm.checkpoint @a_state_scores
// The partial attention states' staging buffer (2 x 8 x 18 f32 per tile) has no padding: the phase
// writes it whole, with no zero fill first.
// ATT-NEXT:   tasm.sync
// ATT-NEXT:   tasm.exchange @phase{{[0-9]+}}
// ATT-NEXT:   tasm.call "attention_combine" {{.*}} {parts = 2 : i64, qr = 8 : i64, d = 16 : i64} : f32 -> f16
// ATT-NOT:    tasm.call "attention_{{update|start}}"
// ATT:        tasm.host_out @output0
// ATT:        tasm.weight @a_state_offsets #table.offsets<[query_row, key_begin, key_end, pad]
// ATT:        ]> : tensor<64x4xf32> layout #plan.layout<grid = [2, 4, 4, 2], split = {{\[\[}}0, 1, 2, 3], []], memory = standard> at [[OFFS]]
// ATT-NEXT:   tasm.checkpoint_def @a_state_scores value "a" aspect "scores" : tensor<8x64x64xf16> {{.*}} at [[ASCORES]]
// ATT-NOT:    softmax_rows

// --- ipu-compile on attention_small as the planner chooses: all 64 keys over 8-row query blocks,
// so each tile's state is a whole softmax and the combine normalises its one part (ipu-compile
// fuses the q, k and v projections: each one's slice of the fused result lands in its head
// split's layout and memory, and the split is a view of it: no copy runs; with the splits copied,
// two key blocks of 32 over 16-row query blocks were cheaper).
// ATT1-NOT:   tasm.call "copy"
// ATT1:       tasm.call "attention_start" {{.*}} {qr = 8 : i64, kr = 64 : i64, d = 16 : i64, causal = 0 : i64
// ATT1:       tasm.call "attention_combine" {{.*}} {parts = 1 : i64, qr = 8 : i64, d = 16 : i64} : f32 -> f16
// ATT1:       tasm.checkpoint_def @a_state_scores value "a" aspect "scores" : tensor<8x64x64xf16> layout #plan.layout<grid = [2, 4, 8, 1]

// --- plan-ops on the streamed causal model: keys are not split over tiles (grid dimension 3
// is 1); at seq 64 the planner takes one 64-key window.
// SPLAN:      %qh = plan.split_heads %q {value = "qh"} : {{.*}} -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = {{\[\[}}0, 1], [2], []]
// SPLAN:      %kh = plan.split_heads %k {value = "kh"}
// SPLAN:      %vh = plan.split_heads %v {value = "vh"}
// SPLAN-NEXT: %a_state = plan.attention %qh, %kh, %vh {form = "streamed", scale = 2.500000e-01 : f64, key_block = 64 : i64, causal, value = "a"} : ({{.*}}) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = {{\[\[}}0, 1], [2], []], partial = 3,
// SPLAN-NEXT: %a = plan.attention_combine %a_state {value = "a"} : {{.*}} -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = {{\[\[}}0, 1], [2, 3], []], memory = standard>>
// SPLAN-NEXT: %m = plan.merge_heads %a {value = "m"}

// SMAP:       %a_state_scale = tilemap.weight "a_state_scale"
// SMAP-NEXT:  %a_state_q_scaled = tilemap.run "mul"(%qh, %a_state_scale)
// SMAP-NEXT:  %a_state_scores = tilemap.alloc : !tilemap.buffer<1x8x64xf16, tiles = [0, 64], memory = standard>
// SMAP-NEXT:  %a_state_k0 = tilemap.move %kh transfers = #table.transfers<[{{.*}}]
// SMAP:       ]> {reason = "attention window"} : {{.*}} -> !tilemap.buffer<1x64x16xf16, tiles = [0, 64], memory = interleaved>
// SMAP-NEXT:  %a_state_v0 = tilemap.move %vh transfers = #table.transfers<[{{.*}}]
// SMAP:       ]> {reason = "attention window"} : {{.*}} -> !tilemap.buffer<1x64x16xf16, tiles = [0, 64], memory = interleaved>
// SMAP-NEXT:  %a_state = tilemap.run "attention_start"(%a_state_q_scaled, %a_state_k0, %a_state_v0, %a_state_offsets, %a_state_scores) {kr = 64 : i64, k_base = 0 : i64, qr = 8 : i64, d = 16 : i64, causal = 1 : i64, scale_bits = 1065353216 : i64, k_step = 1 : i64} :
// SMAP-NEXT:  tilemap.checkpoint "a_state_scores" value "a" %a_state_scores : {{.*}} as tensor<8x64x64xf16> {{.*}} {aspect = "scores@0"}
// SMAP-NEXT:  %a_stage = tilemap.move %a_state transfers = #table.transfers<[{{.*}}]
// SMAP:       ]> {reason = "attention_combine"}
// SMAP-NEXT:  %a = tilemap.run "attention_combine"(%a_stage) {parts = 1 : i64, qr = 8 : i64, d = 16 : i64}
// SMAP-NOT:   attention_{{update|init}}

// --- key_block = 16 (Inputs/attention-streamed-windows.mlir): four windows of 16 keys, each
// moved to every tile of its KV group: the first starts the state, the others fold into it in place.
// WMAP-NOT:   attention_init
// WMAP:       %a_state_scale = tilemap.weight "a_state_scale"
// WMAP-NEXT:  %a_state_q_scaled = tilemap.run "mul"(%qh, %a_state_scale)
// WMAP-NEXT:  %a_state_scores = tilemap.alloc : !tilemap.buffer<1x8x16xf16, tiles = [0, 64], memory = standard>
// WMAP-NEXT:  %a_state_k0 = tilemap.move %kh transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention window"} : !tilemap.buffer<1x2x16xf16, tiles = [0, 64], memory = standard> -> !tilemap.buffer<1x16x16xf16, tiles = [0, 64], memory = interleaved>
// WMAP-NEXT:  %a_state_v0 = tilemap.move %vh transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention window"}
// WMAP-NEXT:  %a_state = tilemap.run "attention_start"(%a_state_q_scaled, %a_state_k0, %a_state_v0, %a_state_offsets, %a_state_scores) {kr = 16 : i64, k_base = 0 : i64, {{.*}}causal = 1 : i64{{.*}}} :
// WMAP-NEXT:  %a_state_k16 = tilemap.move %kh transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention window"}
// WMAP-NEXT:  %a_state_v16 = tilemap.move %vh transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention window"}
// WMAP-NEXT:  %a_state_1 = tilemap.run "attention_update"(%a_state_q_scaled, %a_state_k16, %a_state_v16, %a_state_offsets, %a_state_scores, %a_state) {kr = 16 : i64, k_base = 16 : i64, {{.*}}} {inplace = 5 : i64}
// WMAP-NEXT:  %a_state_k32 = tilemap.move %kh transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention window"}
// WMAP-NEXT:  %a_state_v32 = tilemap.move %vh transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention window"}
// WMAP-NEXT:  %a_state_2 = tilemap.run "attention_update"(%a_state_q_scaled, %a_state_k32, %a_state_v32, %a_state_offsets, %a_state_scores, %a_state_1) {kr = 16 : i64, k_base = 32 : i64, {{.*}}} {inplace = 5 : i64}
// WMAP-NEXT:  %a_state_k48 = tilemap.move %kh transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention window"}
// WMAP-NEXT:  %a_state_v48 = tilemap.move %vh transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention window"}
// WMAP-NEXT:  %a_state_3 = tilemap.run "attention_update"(%a_state_q_scaled, %a_state_k48, %a_state_v48, %a_state_offsets, %a_state_scores, %a_state_2) {kr = 16 : i64, k_base = 48 : i64, {{.*}}} {inplace = 5 : i64}
// WMAP-NEXT:  %a_stage = tilemap.move %a_state_3 transfers = #table.transfers<[{{.*}}]
// WMAP:       ]> {reason = "attention_combine"}
// WMAP-NEXT:  %a = tilemap.run "attention_combine"(%a_stage) {parts = 1 : i64, qr = 8 : i64, d = 16 : i64}

// WTASM-NOT:  tasm.call "attention_init"
// WTASM:      tasm.call "attention_start" out([[WSTATE:[0-9]+]]) {{.*}} {qr = 8 : i64, kr = 16 : i64, d = 16 : i64, causal = 1 : i64, scale_bits = 1065353216 : i64, k_base = 0 : i64, k_step = 1 : i64} : f16 -> f32
// WTASM:      tasm.call "attention_update" out([[WSTATE]]) {{.*}}k_base = 16 : i64, k_step = 1 : i64} : f16 -> f32
// WTASM:      tasm.call "attention_update" out([[WSTATE]]) {{.*}}k_base = 32 : i64, k_step = 1 : i64} : f16 -> f32
// WTASM:      tasm.call "attention_update" out([[WSTATE]]) {{.*}}k_base = 48 : i64, k_step = 1 : i64} : f16 -> f32
// WTASM-NOT:  tasm.call "attention_update"
// WTASM:      tasm.call "attention_combine" {{.*}} {parts = 1 : i64, qr = 8 : i64, d = 16 : i64} : f32 -> f16
