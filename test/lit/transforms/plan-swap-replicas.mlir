// RUN: ipu-opt %s -p 'plan-ops{target=sim16}' | filecheck %s --check-prefix=SEARCH
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s --check-prefix=GREEDY
// RUN: ipu-run %s --target sim16 --checked --poison | filecheck %s --check-prefix=EMU

// A 128-token MLP on sim16. Swapping the down-projection's operands (the weight's 256 output
// features as the AMP's rows, the tokens in 64-wide groups) saves AMP cycles, but each of the
// two token groups needs its own replica of the weight: a tile keeps a [256 x 256] block of it,
// twice what the best plain grid keeps. The cheapest plan never takes such a grid by default
// (in a rolled stack the replicas push later layers' weights out to fetches); the search's
// largest weight budget tries it as the matmul's second candidate and keeps it where the whole
// plan wins.
func.func @main(%x: tensor<128x256xf16>) -> tensor<128x256xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x2048xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<2048x256xf16>
  %h = graph.matmul %x, %w1 : (tensor<128x256xf16>, tensor<256x2048xf16>) -> tensor<128x2048xf16>
  %g = graph.gelu %h : tensor<128x2048xf16> -> tensor<128x2048xf16>
  %y = graph.matmul %g, %w2 : (tensor<128x2048xf16>, tensor<2048x256xf16>) -> tensor<128x256xf16>
  func.return %y : tensor<128x256xf16>
}

// The search's best plan swaps both projections, each keeping its weight replicated: the
// up-projection on grid 2 x 8 x 1 (the tokens in two 64-wide groups), the down-projection on
// 2 x 1 x 8 (the weight's blocks [256 x 256]). The share-by-share search does not reach it (the
// largest budget runs out at the first); the whole-function residency plan (`plan.residency`, a
// knapsack over both matmuls' plans) does, and joins the finalists beside them (emulated 390,960
// -> 383,235 cycles). Then the share-by-share plans: the up-projection swapped on 4 x 4 x 1
// (each of four 32-wide token groups with its replica of w1: [256 x 512] a tile), and the
// down-projection swapped alone (both kept from the largest budget's state, whose greedy plan
// is the default's).
// SEARCH:      func.func @main_finalist_0(
// SEARCH-SAME: estimated_cycles = 375063
// SEARCH:      %h = plan.gemm %x, %w1 {value = "h", swapped} : ({{.*}}, !plan.tensor<256x2048xf16, #plan.layout<grid = [2, 8, 1], split = {{\[\[}}2], [1]], align = [2, 1], memory = interleaved>>)
// SEARCH:      %y_partial = plan.gemm %g_r, %w2 {swapped} : ({{.*}}, !plan.tensor<2048x256xf16, #plan.layout<grid = [2, 1, 8], split = {{\[\[}}2], [1]], align = [2, 256], memory = interleaved>>)
// SEARCH:      func.func @main_finalist_1(
// SEARCH-SAME: estimated_cycles = 382776
// SEARCH:      %h = plan.gemm %x, %w1 {value = "h", swapped} : ({{.*}}, !plan.tensor<256x2048xf16, #plan.layout<grid = [4, 4, 1], split = {{\[\[}}2], [1]], align = [2, 1], memory = interleaved>>)
// SEARCH:      func.func @main_finalist_2(
// SEARCH-SAME: estimated_cycles = 391716
// SEARCH:      %y_partial = plan.gemm %g_r, %w2 {swapped} : ({{.*}}, !plan.tensor<2048x256xf16, #plan.layout<grid = [2, 1, 8], split = {{\[\[}}2], [1]], align = [2, 256], memory = interleaved>>)
// SEARCH:      func.func @main_finalist_3(
// SEARCH-SAME: estimated_cycles = 408257

// The greedy plan (the default weight budget) keeps w2 in the plain grid 1 x 2 x 8, [256 x 128]
// blocks a tile: beyond the residency share, but one row block holds the weight once, as a
// fetched home would, so it stays where the AMP reads it.
// GREEDY:     %y_partial = plan.gemm %g_r, %w2 : ({{.*}}, !plan.tensor<2048x256xf16, #plan.layout<grid = [1, 2, 8], split = {{\[\[}}2], [1]], align = [2, 128], memory = interleaved>>)
// GREEDY-NOT: {swapped}

// EMU: numericalTest=PASS
// EMU: totalCycles=383235
// EMU: estimatedOverEmulated=1.0000
