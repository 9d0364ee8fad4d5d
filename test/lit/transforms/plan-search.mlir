// RUN: ipu-opt %s --split-input-file -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=GREEDY
// RUN: ipu-opt %s --split-input-file -p plan-ops --target sim16 | filecheck %s --check-prefix=SEARCH
// RUN: ipu-opt %s --split-input-file -p 'plan-ops,map-tiles,screen-tiles{target=sim16},select-finalist' --target sim16 | filecheck %s --check-prefix=SELECT
// RUN: ipu-opt %s --split-input-file -p 'plan-ops,map-tiles,screen-tiles{target=sim16},select-finalist' --target sim16 --log-level info -o %t 2>&1 | filecheck %s --check-prefix=LOG
// RUN: not ipu-opt %s --split-input-file -p plan-ops,select-finalist --target sim16 2>&1 | filecheck %s --check-prefix=UNMAPPED
// RUN: not ipu-opt %S/Inputs/plan-search-too-large.mlir -p plan-ops --target sim16 2>&1 | filecheck %s --check-prefix=LARGE
// RUN: not ipu-opt %S/Inputs/plan-search-too-large.mlir -p 'plan-ops{target=sim16 finalists=1}' --target sim16 2>&1 | filecheck %s --check-prefix=LARGE

// Whole-graph operator-plan search on sim16: the shape of an op decides its grid, the search keeps
// several finalists (one function each, with plan.metrics); map-tiles and screen-tiles lower every
// finalist, and select-finalist keeps one, named as the entry function again.

// Tall-skinny matmul: [4096x64] x [64x64] splits the rows over more tiles than the columns.
func.func @tall(%x: tensor<4096x64xf16>) -> tensor<4096x64xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x64xf16>
  %y = graph.matmul %x, %w : (tensor<4096x64xf16>, tensor<64x64xf16>) -> tensor<4096x64xf16>
  func.return %y : tensor<4096x64xf16>
}

// GREEDY-LABEL: func.func @tall(
// GREEDY-SAME:  attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]}
// GREEDY:       %y = plan.gemm %x, %w {value = "y"} : ({{.*}}) -> !plan.tensor<4096x64xf16, #plan.layout<grid = [4, 4, 1], split = {{\[\[}}0], [1]], memory = interleaved>>

// Three fitting grids, four distinct finalists, the cheapest first: the search also starts from
// the plan that stores every weight once and fetches it (finalist 1, the [4, 4, 1] grid again:
// its fetch priced at the move's endpoint bound, 1,232 cycles with the phase's sync and route).
// SEARCH:      func.func @tall_finalist_0(
// SEARCH-SAME: plan.metrics = {values = 3 : i64, operations = 2 : i64, estimated_cycles = {{[1-9][0-9]*}} : i64, estimated_exchange_cycles = 0 : i64, exchange_row_bytes = 0 : i64, code_bytes = 4096 : i64, peak_standard_bytes = {{[1-9][0-9]*}} : i64, peak_interleaved_bytes = {{[1-9][0-9]*}} : i64, peak_total_bytes = {{[1-9][0-9]*}} : i64, maximum_standard_allocation_bytes = 0 : i64}, plan.finalist = 0 : i64, plan.entry = "tall"}
// SEARCH:      plan.gemm {{.*}} -> !plan.tensor<4096x64xf16, #plan.layout<grid = [4, 4, 1],
// SEARCH:      func.func @tall_finalist_1(
// SEARCH-SAME: plan.metrics = {values = 4 : i64, operations = 3 : i64, estimated_cycles = {{[0-9]+}} : i64, estimated_exchange_cycles = 1232 : i64
// SEARCH:      %w_r = plan.rearrange %w {reason = "weight fetch"}
// SEARCH:      plan.gemm %x, %w_r {{.*}} -> !plan.tensor<4096x64xf16, #plan.layout<grid = [4, 4, 1],
// SEARCH:      func.func @tall_finalist_2(
// SEARCH-SAME: plan.metrics = {values = 3 : i64, operations = 2 : i64, estimated_cycles = {{[0-9]+}}
// SEARCH-SAME: plan.finalist = 2 : i64, plan.entry = "tall"}
// SEARCH:      plan.gemm {{.*}} -> !plan.tensor<4096x64xf16, #plan.layout<grid = [8, 2, 1],
// SEARCH:      func.func @tall_finalist_3(
// SEARCH-SAME: plan.finalist = 3 : i64, plan.entry = "tall"}
// SEARCH:      plan.gemm {{.*}} -> !plan.tensor<4096x64xf16, #plan.layout<grid = [16, 1, 1],
// SEARCH-NOT:  @tall_finalist_4
// SEARCH-NOT:  func.func @tall(

// The [4, 4, 1] grid's tile block: 1024 rows by 16 columns.
// SELECT-LABEL: func.func @tall(
// SELECT-SAME:  plan.finalist = 0 : i64, plan.entry = "tall", tilemap.mapping = #tilemap.mapping<identity>}
// SELECT:       tilemap.run "amp_matmul"(%x, %w) {m = 1024 : i64, k = 64 : i64, n = 16 : i64}
// SELECT-NOT:   finalist_

// -----

// Square matmul: [512x512] x [512x512] splits the columns over more tiles than the rows.
func.func @square(%x: tensor<512x512xf16>) -> tensor<512x512xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<512x512xf16>
  %y = graph.matmul %x, %w : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf16>
  func.return %y : tensor<512x512xf16>
}

// GREEDY-LABEL: func.func @square(
// GREEDY:       %y = plan.gemm %x, %w {value = "y"} : ({{.*}}) -> !plan.tensor<512x512xf16, #plan.layout<grid = [2, 8, 1], split = {{\[\[}}0], [1]], memory = interleaved>>

// The second finalist fetches the weights (a "weight fetch" conversion); the third splits K two
// ways (fp32 partials, reduced at the PopLibs ReduceAdd rate); the fourth takes the next grid,
// fetching its weight (the larger weight budgets' greedy plans are the first's and offer no
// replicated swap, so their states are not kept).
// SEARCH:      func.func @square_finalist_0(
// SEARCH:      plan.gemm {{.*}} -> !plan.tensor<512x512xf16, #plan.layout<grid = [2, 8, 1],
// SEARCH:      func.func @square_finalist_1(
// SEARCH-SAME: plan.metrics = {values = 4 : i64, operations = 3 : i64, estimated_cycles = {{[0-9]+}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64, exchange_row_bytes = {{[1-9][0-9]*}} : i64
// SEARCH:      %w_r = plan.rearrange %w {reason = "weight fetch"} : {{.*}} -> !plan.tensor<512x512xf16, #plan.layout<grid = [2, 8, 1], split = {{\[\[}}2], [1]], align = [512, 1], memory = interleaved>>
// SEARCH:      plan.gemm %x, %w_r {{.*}} -> !plan.tensor<512x512xf16, #plan.layout<grid = [2, 8, 1],
// SEARCH:      func.func @square_finalist_2(
// SEARCH-SAME: plan.metrics = {values = 4 : i64, operations = 3 : i64, estimated_cycles = {{[0-9]+}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64, exchange_row_bytes = {{[1-9][0-9]*}} : i64
// SEARCH:      plan.gemm %x, %w {{.*}} -> !plan.tensor<512x512xf32, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [1]], partial = 2,
// SEARCH:      func.func @square_finalist_3(
// SEARCH:      %w_r = plan.rearrange %w {reason = "weight fetch"}
// SEARCH:      plan.gemm %x, %w_r {{.*}} -> !plan.tensor<512x512xf16, #plan.layout<grid = [4, 4, 1],

// SELECT-LABEL: func.func @square(
// SELECT:       tilemap.run "amp_matmul"(%x, %w) {m = 256 : i64, k = 512 : i64, n = 64 : i64}
// SELECT-NOT:   finalist_

// -----

// One head of 256 queries: the grid splits queries and keys, grid [1, 1, 4, 4] (four key blocks:
// each tile's block starts its state, and the combine reduces the parts at the reduce rate).
func.func @few_heads(%q: tensor<1x256x64xf16>, %k: tensor<1x256x64xf16>, %v: tensor<1x256x64xf16>) -> tensor<1x256x64xf16> {
  %a = graph.attention %q, %k, %v {form = "materialized"} : (tensor<1x256x64xf16>, tensor<1x256x64xf16>, tensor<1x256x64xf16>) -> tensor<1x256x64xf16>
  func.return %a : tensor<1x256x64xf16>
}

// GREEDY-LABEL: func.func @few_heads(
// GREEDY-NEXT:  %a_state = plan.attention %q, %k, %v {form = "materialized", scale = 1.250000e-01 : f64, key_block = 64 : i64, value = "a"} : ({{.*}}) -> !plan.tensor<1x256x66xf32, #plan.layout<grid = [1, 1, 4, 4], split = {{\[\[}}0, 1], [2], []], partial = 3,
// GREEDY-NEXT:  %a = plan.attention_combine %a_state {value = "a"} : {{.*}} -> !plan.tensor<1x256x64xf16, #plan.layout<grid = [1, 1, 4, 4], split = {{\[\[}}0, 1], [2, 3], []], memory = standard>>

// SEARCH:      func.func @few_heads_finalist_0(
// SEARCH:      plan.attention {{.*}} -> !plan.tensor<1x256x66xf32, #plan.layout<grid = [1, 1, 4, 4],
// SEARCH:      func.func @few_heads_finalist_1(
// SEARCH:      plan.attention {{.*}} -> !plan.tensor<1x256x66xf32, #plan.layout<grid = [1, 1, 8, 2],
// SEARCH:      func.func @few_heads_finalist_2(
// SEARCH:      plan.attention {{.*}} -> !plan.tensor<1x256x66xf32, #plan.layout<grid = [1, 1, 5, 3],

// SELECT-LABEL: func.func @few_heads(
// SELECT-NOT:   finalist_

// -----

// Sixteen heads: one head per tile, queries and keys unsplit (grid [16, 1, 1, 1]).
func.func @many_heads(%q: tensor<16x256x64xf16>, %k: tensor<16x256x64xf16>, %v: tensor<16x256x64xf16>) -> tensor<16x256x64xf16> {
  %a = graph.attention %q, %k, %v {form = "materialized"} : (tensor<16x256x64xf16>, tensor<16x256x64xf16>, tensor<16x256x64xf16>) -> tensor<16x256x64xf16>
  func.return %a : tensor<16x256x64xf16>
}

// GREEDY-LABEL: func.func @many_heads(
// GREEDY-NEXT:  %a_state = plan.attention %q, %k, %v {form = "materialized", scale = 1.250000e-01 : f64, key_block = 256 : i64, value = "a"} : ({{.*}}) -> !plan.tensor<16x256x66xf32, #plan.layout<grid = [16, 1, 1, 1], split = {{\[\[}}0, 1], [2], []], partial = 3,
// GREEDY-NEXT:  %a = plan.attention_combine %a_state {value = "a"} : {{.*}} -> !plan.tensor<16x256x64xf16, #plan.layout<grid = [16, 1, 1, 1], split = {{\[\[}}0, 1], [2, 3], []], memory = standard>>

// Only one grid fits, so the single finalist keeps the name.
// SEARCH:      func.func @many_heads(
// SEARCH-SAME: plan.metrics = {values = 5 : i64, operations = 2 : i64,
// SEARCH-SAME: plan.finalist = 0 : i64, plan.entry = "many_heads"}
// SEARCH:      plan.attention {{.*}} -> !plan.tensor<16x256x66xf32, #plan.layout<grid = [16, 1, 1, 1],
// SEARCH-NOT:  many_heads_finalist

// SELECT-LABEL: func.func @many_heads(
// SELECT-NOT:   finalist_

// -----

// relu's row layout is rearranged into the layout the matmul's lhs needs, in every finalist (the
// first the swapped AMP's, its lhs in interleaved memory: the largest weight budget's replica).
func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %g = graph.relu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// GREEDY-LABEL: func.func @main(
// GREEDY-SAME:  attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]}
// GREEDY-NEXT:  %g = plan.unary "relu" %x {value = "g"}
// GREEDY-NEXT:  %g_r = plan.rearrange %g {reason = "graph.matmul"} : !plan.tensor<64x1024xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>> -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard>>
// GREEDY-NEXT:  %w = plan.parameter "w"
// GREEDY-NEXT:  %y_partial = plan.gemm %g_r, %w
// GREEDY-NOT:   finalist

// SEARCH:      func.func @main_finalist_0(
// SEARCH-SAME: attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"], plan.metrics = {values = 6 : i64, operations = 5 : i64, estimated_cycles = {{[1-9][0-9]*}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64, exchange_row_bytes = {{[1-9][0-9]*}} : i64, code_bytes = 4096 : i64, peak_standard_bytes = {{[1-9][0-9]*}} : i64, peak_interleaved_bytes = {{[1-9][0-9]*}} : i64, peak_total_bytes = {{[1-9][0-9]*}} : i64, maximum_standard_allocation_bytes = {{[1-9][0-9]*}} : i64}, plan.finalist = 0 : i64, plan.entry = "main"}
// SEARCH-NEXT: %g = plan.unary "relu" %x
// SEARCH-NEXT: %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [4, 1, 4], split = {{\[\[}}0], [2]], align = [1, 2], memory = interleaved>>
// SEARCH:      func.func @main_finalist_1(
// SEARCH-SAME: plan.metrics = {values = 6 : i64, operations = 5 : i64, estimated_cycles = {{[1-9][0-9]*}} : i64, estimated_exchange_cycles = {{[1-9][0-9]*}} : i64, exchange_row_bytes = {{[1-9][0-9]*}} : i64, code_bytes = 4096 : i64, peak_standard_bytes = {{[1-9][0-9]*}} : i64, peak_interleaved_bytes = {{[1-9][0-9]*}} : i64, peak_total_bytes = {{[1-9][0-9]*}} : i64, maximum_standard_allocation_bytes = {{[1-9][0-9]*}} : i64}, plan.finalist = 1 : i64, plan.entry = "main"}
// SEARCH-NEXT: %g = plan.unary "relu" %x
// SEARCH-NEXT: %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 4, 4], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard>>
// SEARCH:      func.func @main_finalist_2(
// SEARCH-SAME: plan.finalist = 2 : i64, plan.entry = "main"}
// SEARCH-NEXT: %g = plan.unary "relu" %x
// SEARCH-NEXT: %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 2, 8], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard>>
// SEARCH:      func.func @main_finalist_3(
// SEARCH:      %g_r = plan.rearrange %g {reason = "graph.matmul"} : {{.*}} -> !plan.tensor<64x1024xf16, #plan.layout<grid = [1, 8, 2], split = {{\[\[}}0], [2]], align = [1, 2], memory = standard>>
// SEARCH-NOT:  func.func @main(
// SEARCH-NOT:  @main_finalist_4

// select-finalist keeps exactly one mapped finalist, as @main: the [4, 1, 4] grid's swapped gemm.
// SELECT-LABEL: func.func @main(
// SELECT-SAME:  plan.finalist = 0 : i64, plan.entry = "main"
// SELECT:       %g_r = tilemap.move %g
// SELECT:       tilemap.run "amp_matmul_swapped"(%g_r, %w, %y_partial_transposed) {m = 16 : i64, k = 256 : i64, n = 256 : i64}
// SELECT-NOT:   main_finalist
// SELECT-NOT:   func.func

// LOG:      planned operation op=1 name=graph.matmul grid=4x4x1 weight=resident
// LOG:      searched operator plans decision_points=1 decision_groups=1 evaluated=8 finalists=4
// LOG-NEXT: retained operator-plan finalist finalist=0 values=3 operations=2 estimated_cycles={{[1-9][0-9]*}} estimated_exchange_cycles=0 exchange_row_bytes=0 code_bytes=4096 peak_standard_bytes={{[1-9][0-9]*}} peak_interleaved_bytes={{[1-9][0-9]*}} peak_total_bytes={{[1-9][0-9]*}} maximum_standard_allocation_bytes=0 active_tile_counts={16} padding_group_counts={} conversion_sources=[]
// LOG-NEXT: retained operator-plan finalist finalist=1
// LOG-NEXT: retained operator-plan finalist finalist=2
// LOG-NEXT: retained operator-plan finalist finalist=3
// LOG:      scheduled operator-plan finalist finalist=0 mapped=identity analytical_cycles=[[T0:[0-9]+]] analytical_exchange_cycles=0 scheduled_exchange_cycles=0 refined_cycles=[[T0]]
// LOG:      scheduled operator-plan finalist finalist=1 mapped=block=16,width=4 analytical_cycles={{[0-9]+}} analytical_exchange_cycles=1232 scheduled_exchange_cycles=1220
// LOG:      scheduled operator-plan finalist finalist=2 mapped=identity
// LOG:      scheduled operator-plan finalist finalist=3 mapped=identity
// LOG-NEXT: selected physically scheduled operator-plan finalist selected=0 refined_cycles=[[T0]]
// Square: the K-split and weight-fetching finalists' exchange is scheduled for real.
// LOG:      retained operator-plan finalist finalist=1 values=4 operations=3 {{.*}} conversion_sources="[weight fetch]"
// LOG:      screened tile mappings by exchange resource load finalist=1 candidates=4 baseline_cycles=16500 candidate_cycles=16492 {{.*}} mapping=block=16,width=4
// LOG:      scheduled operator-plan finalist finalist=1 mapped=block=16,width=4 analytical_cycles={{[0-9]+}} analytical_exchange_cycles={{[1-9][0-9]*}} scheduled_exchange_cycles={{[1-9][0-9]*}} refined_cycles={{[0-9]+}}
// LOG:      selected physically scheduled operator-plan finalist selected=0
// Few heads: three attention grids; many heads: one.
// LOG:      planned operation op=0 name=graph.attention form=materialized grid=1x1x8x2
// LOG:      searched operator plans decision_points=1 decision_groups=1 evaluated=3 finalists=3
// LOG:      planned operation op=0 name=graph.attention form=materialized grid=16x1x1x1
// LOG:      searched operator plans decision_points=1 decision_groups=1 evaluated=1 finalists=1
// @main: the conversion is named in every finalist's metrics.
// LOG:      retained operator-plan finalist finalist=0 values=6 operations=5 {{.*}} conversion_sources=[graph.matmul]
// LOG-NEXT: retained operator-plan finalist finalist=1 values=6 operations=5 {{.*}} conversion_sources=[graph.matmul]
// LOG-NEXT: retained operator-plan finalist finalist=2 values=6 operations=5 {{.*}} conversion_sources=[graph.matmul]
// LOG:      scheduled operator-plan finalist finalist=0 mapped=identity analytical_cycles={{[0-9]+}} analytical_exchange_cycles={{[1-9][0-9]*}} scheduled_exchange_cycles={{[1-9][0-9]*}} refined_cycles=[[M0:[0-9]+]]
// LOG:      scheduled operator-plan finalist finalist=1 mapped=identity
// LOG:      scheduled operator-plan finalist finalist=2 mapped=identity
// LOG:      selected physically scheduled operator-plan finalist selected=0 refined_cycles=[[M0]]
// LOG-NOT:  Traceback

// select-finalist ranks lowered finalists; it does not lower them itself.
// UNMAPPED: error: select-finalist: works on tilemap-level (mapped by map-tiles) or exchange-level (phases scheduled by schedule-exchange) IR; this module is plan-level

// LARGE-NOT: Traceback
// LARGE:     error: model does not fit target sim16: matmul [8192x4096] x [4096x4096] needs at least {{[0-9]+}} bytes per tile (grid {{[0-9]+}}x{{[0-9]+}}x{{[0-9]+}}); per-op budget is {{[0-9]+}} of 638976 bytes (0 held by live values)
// LARGE-NOT: Traceback
