// RUN: ipu-opt %s --split-input-file --target sim64 -p stripe-causal-attention | filecheck %s
// RUN: ipu-opt %s --split-input-file --target sim64 -p stripe-causal-attention | ipu-opt --split-input-file | filecheck %s
// RUN: ipu-opt %S/Inputs/causal-streamed.mlir --target sim64 -p stripe-causal-attention,plan-ops | filecheck %s --check-prefix=PLAN
// RUN: ipu-run %S/Inputs/causal-streamed.mlir --target sim64 --check all --poison | filecheck %s --check-prefix=EMU
// RUN: ipu-opt %S/Inputs/causal-streamed.mlir --target sim64 -p stripe-causal-attention | not ipu-opt --target sim16 -p plan-ops 2>&1 | filecheck %s --check-prefix=ERR
// RUN: ipu-opt %S/Inputs/causal-materialized.mlir --target sim64 -p stripe-causal-attention | filecheck %s --check-prefix=MOFF
// RUN: ipu-opt %S/Inputs/causal-materialized.mlir --target sim64 -p 'stripe-causal-attention{materialized=true}' -o %t.mlir
// RUN: filecheck %s --check-prefix=MAT < %t.mlir
// RUN: ipu-opt %t.mlir | filecheck %s --check-prefix=MAT
// RUN: ipu-opt %t.mlir --target sim64 -p plan-ops,ipu-compile | filecheck %s --check-prefix=MTASM
// RUN: ipu-run %t.mlir --target sim64 --check all --poison | filecheck %s --check-prefix=EMU

// stripe-causal-attention: on sim64 a 4-head causal streamed attention gets 16 query blocks a
// head. Its 500 query rows are padded to 512 and striped (row i * 32 + j is position j * 16 + i),
// the attention marked `stripes = 16`, its result un-striped and sliced back to 500 rows under
// the old name. Every new op is derived (no value of the reference).

// CHECK-LABEL: func.func @main
// CHECK:       %[[P:.*]] = graph.pad %q {low = array<i64: 0, 0, 0>, ipu.derived} : tensor<4x500x32xf16> -> tensor<4x512x32xf16>
// CHECK-NEXT:  %[[V:.*]] = graph.reshape %[[P]] {ipu.derived} : tensor<4x512x32xf16> -> tensor<4x32x16x32xf16>
// CHECK-NEXT:  %[[T:.*]] = graph.transpose %[[V]] {perm = array<i64: 0, 2, 1, 3>, ipu.derived} : tensor<4x32x16x32xf16> -> tensor<4x16x32x32xf16>
// CHECK-NEXT:  %a_q_striped = graph.reshape %[[T]] {ipu.derived} : tensor<4x16x32x32xf16> -> tensor<4x512x32xf16>
// CHECK-NEXT:  %a_striped = graph.attention %a_q_striped, %k, %v {form = "streamed", causal, stripes = 16 : i64, ipu.derived} : (tensor<4x512x32xf16>, tensor<2x500x32xf16>, tensor<2x500x32xf16>) -> tensor<4x512x32xf16>
// CHECK-NEXT:  %[[A:.*]] = graph.reshape %a_striped {ipu.derived} : tensor<4x512x32xf16> -> tensor<4x16x32x32xf16>
// CHECK-NEXT:  %[[B:.*]] = graph.transpose %[[A]] {perm = array<i64: 0, 2, 1, 3>, ipu.derived} : tensor<4x16x32x32xf16> -> tensor<4x32x16x32xf16>
// CHECK-NEXT:  %[[C:.*]] = graph.reshape %[[B]] {ipu.derived} : tensor<4x32x16x32xf16> -> tensor<4x512x32xf16>
// CHECK-NEXT:  %a = graph.slice %[[C]] {starts = array<i64: 0, 0, 0>} : tensor<4x512x32xf16> -> tensor<4x500x32xf16>
// CHECK-NEXT:  func.return %a
func.func @main(%q: tensor<4x500x32xf16>, %k: tensor<2x500x32xf16>, %v: tensor<2x500x32xf16>) -> tensor<4x500x32xf16> {
  %a = graph.attention %q, %k, %v {form = "streamed", causal} : (tensor<4x500x32xf16>, tensor<2x500x32xf16>, tensor<2x500x32xf16>) -> tensor<4x500x32xf16>
  func.return %a : tensor<4x500x32xf16>
}

// -----

// Not striped: materialized, not causal, too short for the moves to pay (128 keys on sim64), or
// with a pinned plan (its grid is the unstriped op's).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:   stripes
// CHECK-NOT:   graph.transpose
// CHECK:       func.return
func.func @kept(%q: tensor<4x512x32xf16>, %k: tensor<2x512x32xf16>, %v: tensor<2x512x32xf16>, %qs: tensor<4x128x32xf16>, %ks: tensor<2x128x32xf16>) -> (tensor<4x512x32xf16>, tensor<4x512x32xf16>, tensor<4x128x32xf16>, tensor<4x512x32xf16>) {
  %m = graph.attention %q, %k, %v {form = "materialized", causal} : (tensor<4x512x32xf16>, tensor<2x512x32xf16>, tensor<2x512x32xf16>) -> tensor<4x512x32xf16>
  %n = graph.attention %q, %k, %v {form = "streamed"} : (tensor<4x512x32xf16>, tensor<2x512x32xf16>, tensor<2x512x32xf16>) -> tensor<4x512x32xf16>
  %s = graph.attention %qs, %ks, %ks {form = "streamed", causal} : (tensor<4x128x32xf16>, tensor<2x128x32xf16>, tensor<2x128x32xf16>) -> tensor<4x128x32xf16>
  %p = graph.attention %q, %k, %v {form = "streamed", causal, plan.choice = #plan.choice<attention, grid = [2, 2, 16, 1], key_block = 64>} : (tensor<4x512x32xf16>, tensor<2x512x32xf16>, tensor<2x512x32xf16>) -> tensor<4x512x32xf16>
  func.return %m, %n, %s, %p : tensor<4x512x32xf16>, tensor<4x512x32xf16>, tensor<4x128x32xf16>, tensor<4x512x32xf16>
}

// PLAN: plan.attention {{.*}} {form = "streamed", {{.*}}causal, stripes = 16 : i64}
// PLAN-SAME: #plan.layout<grid = [2, 2, 16, 1], split = {{\[\[}}0, 1], [2], []]

// EMU: numericalTest=PASS
// EMU: estimatedOverEmulated=1.0000

// Striped for sim64, the attention cannot be planned on sim16 (4 tiles a head):
// ERR: plan-ops: attention with 16 stripes needs 16 tiles for each of its 4 query heads; sim16 has 16 tiles

// Materialized (opt-in: `materialized=true`): on sim64 the 4-head causal attention over 512
// keys takes 4 query stripes by 4 key stripes a head. q, k and v are striped (the same view,
// transpose, view), the attention marked with both, and each tile's attention_start skips, per
// 16-key group, the rows before its keys (causal = the query stride, k_step = the key stride).
// MOFF-NOT:   stripes
// MAT-LABEL:  func.func @main
// MAT:        %a_q_striped = graph.reshape %{{.*}} : tensor<4x4x128x32xf16> -> tensor<4x512x32xf16>
// MAT:        %a_k_striped = graph.reshape %{{.*}} : tensor<2x4x128x32xf16> -> tensor<2x512x32xf16>
// MAT:        %a_v_striped = graph.reshape %{{.*}} : tensor<2x4x128x32xf16> -> tensor<2x512x32xf16>
// MAT-NEXT:   %a_striped = graph.attention %a_q_striped, %a_k_striped, %a_v_striped {form = "materialized", causal, stripes = 4 : i64, key_stripes = 4 : i64, ipu.derived}
// MAT:        %a = graph.reshape
// MAT-NEXT:   func.return %a
// MTASM:      tasm.call "attention_start" {{.*}} {qr = 128 : i64, kr = 128 : i64, d = 32 : i64, causal = 4 : i64, {{.*}}k_base = 0 : i64, k_step = 4 : i64}
