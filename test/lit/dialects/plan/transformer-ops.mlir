// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// Row-wise ops on a [4]-grid of whole rows, with norm parameters replicated on every tile.
// CHECK-LABEL: func.func @rows
func.func @rows(%x: !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>, %g: !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[]], memory = standard>>, %b: !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[]], memory = standard>>) -> !plan.tensor<16xf32, #plan.layout<grid = [4], split = [[0]], memory = standard>> {
  // CHECK: %c = plan.cast %x {value = "c"} : !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = {{\[\[}}0], []], memory = standard>> -> !plan.tensor<16x32xf32, #plan.layout<grid = [4], split = {{\[\[}}0], []], memory = standard>>
  %c = plan.cast %x {value = "c"} : !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>> -> !plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  // CHECK-NEXT: %s = plan.rowwise "softmax" %c {value = "s"} : (!plan.tensor<16x32xf32, {{.*}}>) -> !plan.tensor<16x32xf32, #plan.layout<grid = [4], split = {{\[\[}}0], []], memory = standard>>
  %s = plan.rowwise "softmax" %c {value = "s"} : (!plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  // CHECK-NEXT: %n = plan.rowwise "layer_norm" %x, %g, %b {value = "n", epsilon = 1.000000e-05 : f64} : (!plan.tensor<16x32xf16, {{.*}}>, !plan.tensor<32xf16, #plan.layout<grid = [4], split = {{\[\[}}]], memory = standard>>, !plan.tensor<32xf16, {{.*}}>) -> !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = {{\[\[}}0], []], memory = standard>>
  %n = plan.rowwise "layer_norm" %x, %g, %b {value = "n", epsilon = 1.000000e-05 : f64} : (!plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>, !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[]], memory = standard>>, !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[]], memory = standard>>) -> !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  // CHECK-NEXT: %r = plan.rowwise "rms_norm" %n, %g {value = "r"} : (!plan.tensor<16x32xf16, {{.*}}>, !plan.tensor<32xf16, {{.*}}>) -> !plan.tensor<16x32xf16,
  %r = plan.rowwise "rms_norm" %n, %g {value = "r"} : (!plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>, !plan.tensor<32xf16, #plan.layout<grid = [4], split = [[]], memory = standard>>) -> !plan.tensor<16x32xf16, #plan.layout<grid = [4], split = [[0], []], memory = standard>>
  // CHECK-NEXT: %t = plan.rowwise "sum" %s : (!plan.tensor<16x32xf32, {{.*}}>) -> !plan.tensor<16xf32, #plan.layout<grid = [4], split = {{\[\[}}0]], memory = standard>>
  %t = plan.rowwise "sum" %s : (!plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<16xf32, #plan.layout<grid = [4], split = [[0]], memory = standard>>
  // CHECK-NEXT: %mx = plan.rowwise "max" %s : ({{.*}}) -> !plan.tensor<16xf32, #plan.layout<grid = [4], split = {{\[\[}}0]], memory = standard>>
  %mx = plan.rowwise "max" %s : (!plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<16xf32, #plan.layout<grid = [4], split = [[0]], memory = standard>>
  // CHECK-NEXT: %mn = plan.rowwise "mean" %s : ({{.*}}) -> !plan.tensor<16xf32, #plan.layout<grid = [4], split = {{\[\[}}0]], memory = standard>>
  %mn = plan.rowwise "mean" %s : (!plan.tensor<16x32xf32, #plan.layout<grid = [4], split = [[0], []], memory = standard>>) -> !plan.tensor<16xf32, #plan.layout<grid = [4], split = [[0]], memory = standard>>
  // CHECK-NEXT: func.return %mn
  func.return %mn : !plan.tensor<16xf32, #plan.layout<grid = [4], split = [[0]], memory = standard>>
}

// -----

// The attention chain of examples/attention_small.mlir at sim64 (8 query heads, 2 KV heads,
// head_dim 16, seq 64): grid (kv heads 2, group 4, query rows 2, key blocks 4).
// CHECK-LABEL: func.func @attention
func.func @attention(%q: !plan.tensor<64x128xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[2], [0, 1]], align = [32, 16], memory = standard>>, %k: !plan.tensor<64x32xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[3], [0]], align = [2, 16], memory = standard>>, %v: !plan.tensor<64x32xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[3], [0]], align = [2, 16], memory = standard>>) -> !plan.tensor<64x128xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[2, 3], [0, 1]], align = [1, 16], memory = standard>> {
  // CHECK: %qh = plan.split_heads %q {value = "qh"} : !plan.tensor<64x128xf16, #plan.layout<grid = [2, 4, 2, 4], split = {{\[\[}}2], [0, 1]], align = [32, 16], memory = standard>> -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = {{\[\[}}0, 1], [2], []], align = [1, 32, 1], memory = interleaved>>
  %qh = plan.split_heads %q {value = "qh"} : !plan.tensor<64x128xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[2], [0, 1]], align = [32, 16], memory = standard>> -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], align = [1, 32, 1], memory = interleaved>>
  // CHECK-NEXT: %kh = plan.split_heads %k {value = "kh"} : {{.*}} -> !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = {{\[\[}}0], [3], []], align = [1, 2, 1], memory = interleaved>>
  %kh = plan.split_heads %k {value = "kh"} : !plan.tensor<64x32xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[3], [0]], align = [2, 16], memory = standard>> -> !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], align = [1, 2, 1], memory = interleaved>>
  // CHECK-NEXT: %vh = plan.split_heads %v {value = "vh"}
  %vh = plan.split_heads %v {value = "vh"} : !plan.tensor<64x32xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[3], [0]], align = [2, 16], memory = standard>> -> !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], align = [1, 2, 1], memory = interleaved>>
  // CHECK-NEXT: %s = plan.attention %qh, %kh, %vh {form = "materialized", scale = 2.500000e-01 : f64, key_block = 16 : i64, causal, value = "a"} : ({{.*}}) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = {{\[\[}}0, 1], [2], []], partial = 3, align = [1, 32, 1], memory = standard>>
  %s = plan.attention %qh, %kh, %vh {form = "materialized", scale = 2.500000e-01 : f64, key_block = 16 : i64, causal, value = "a"} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], align = [1, 32, 1], memory = interleaved>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], align = [1, 2, 1], memory = interleaved>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0], [3], []], align = [1, 2, 1], memory = interleaved>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, align = [1, 32, 1], memory = standard>>
  // CHECK-NEXT: %a = plan.attention_combine %s {value = "a"} : !plan.tensor<8x64x18xf32, {{.*}}partial = 3{{.*}}> -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = {{\[\[}}0, 1], [2, 3], []], memory = standard>>
  %a = plan.attention_combine %s {value = "a"} : !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2], []], partial = 3, align = [1, 32, 1], memory = standard>> -> !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2, 3], []], memory = standard>>
  // CHECK-NEXT: %m = plan.merge_heads %a {value = "m"} : {{.*}} -> !plan.tensor<64x128xf16, #plan.layout<grid = [2, 4, 2, 4], split = {{\[\[}}2, 3], [0, 1]], align = [1, 16], memory = standard>>
  %m = plan.merge_heads %a {value = "m"} : !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[0, 1], [2, 3], []], memory = standard>> -> !plan.tensor<64x128xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[2, 3], [0, 1]], align = [1, 16], memory = standard>>
  // CHECK-NEXT: func.return %m
  func.return %m : !plan.tensor<64x128xf16, #plan.layout<grid = [2, 4, 2, 4], split = [[2, 3], [0, 1]], align = [1, 16], memory = standard>>
}

// -----

// Streamed form: the key-block grid dimension is 1; k and v are whole per KV head and
// fetched in windows of key_block keys.
// CHECK-LABEL: func.func @streamed
func.func @streamed(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, %vh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>> {
  // CHECK: %s = plan.attention %qh, %kh, %vh {form = "streamed", scale = 2.500000e-01 : f64, key_block = 16 : i64, causal} : ({{.*}}) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = {{\[\[}}0, 1], [2], []], partial = 3, memory = standard>>
  %s = plan.attention %qh, %kh, %vh {form = "streamed", scale = 2.500000e-01 : f64, key_block = 16 : i64, causal} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return %s : !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>
}

// -----

// A streamed attention with an additive bias: a shared one ([1, S, Sk], replicated over the
// head dimensions) and a per-head one, both with every key on each tile of its query rows.
// CHECK-LABEL: func.func @streamed_bias
func.func @streamed_bias(%qh: !plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, %kh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, %vh: !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, %b: !plan.tensor<1x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[], [2], []], memory = standard>>, %bh: !plan.tensor<8x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>) -> (!plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>, !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>) {
  // CHECK: %s = plan.attention %qh, %kh, %vh bias %b {form = "streamed", scale = 1.000000e+00 : f64, key_block = 16 : i64} : ({{.*}}, !plan.tensor<1x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = {{\[\[}}], [2], []], memory = standard>>) -> !plan.tensor<8x64x18xf32,
  %s = plan.attention %qh, %kh, %vh bias %b {form = "streamed", scale = 1.0 : f64, key_block = 16 : i64} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<1x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[], [2], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  // CHECK-NEXT: %t = plan.attention %qh, %kh, %vh bias %bh {form = "streamed", scale = 1.000000e+00 : f64, key_block = 16 : i64, causal}
  %t = plan.attention %qh, %kh, %vh bias %bh {form = "streamed", scale = 1.0 : f64, key_block = 16 : i64, causal} : (!plan.tensor<8x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0], [], []], memory = standard>>, !plan.tensor<8x64x64xf16, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], memory = standard>>) -> !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>
  func.return %s, %t : !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>, !plan.tensor<8x64x18xf32, #plan.layout<grid = [2, 4, 8, 1], split = [[0, 1], [2], []], partial = 3, memory = standard>>
}

// -----

// A head split from a layout whose column blocks cut heads (2 columns a tile, head_dim 16) is
// valid when each result block holds one head: the split is then one move into the result's
// [S, H*D] twin, whatever the input's layout.
// CHECK-LABEL: func.func @split_any_layout
func.func @split_any_layout(%k: !plan.tensor<64x32xf16, #plan.layout<grid = [16], split = [[], [0]], memory = standard>>) -> !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 8], split = [[0], [1], []], memory = interleaved>> {
  // CHECK-NEXT: %kh = plan.split_heads %k : !plan.tensor<64x32xf16, #plan.layout<grid = [16], split = {{\[\[}}], [0]], memory = standard>> -> !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 8], split = {{\[\[}}0], [1], []], memory = interleaved>>
  %kh = plan.split_heads %k : !plan.tensor<64x32xf16, #plan.layout<grid = [16], split = [[], [0]], memory = standard>> -> !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 8], split = [[0], [1], []], memory = interleaved>>
  func.return %kh : !plan.tensor<2x64x16xf16, #plan.layout<grid = [2, 8], split = [[0], [1], []], memory = interleaved>>
}
