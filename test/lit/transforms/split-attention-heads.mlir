// RUN: ipu-opt %s --split-input-file -p 'split-attention-heads{target=sim16}' | filecheck %s
// RUN: ipu-run %S/Inputs/attention-18-heads.mlir --target sim16 | filecheck %s --check-prefix=EMU

// split-attention-heads: sim16 has 16 tiles and the attention plan gives each query head tiles
// of its own, so 18 query heads become parts that fit. Over 3 KV heads (groups of 6): two
// groups (12 heads, KV heads 0-1) then one (6 heads, KV head 2), joined along the heads; the
// per-head bias is sliced with its heads. Such a program runs on sim16 and matches (Inputs/).

// CHECK-LABEL: func.func @gqa
// CHECK:      %[[Q0:.*]] = graph.slice %q {starts = array<i64: 0, 0, 0>, ipu.derived} : tensor<18x8x4xf32> -> tensor<12x8x4xf32>
// CHECK-NEXT: %[[K0:.*]] = graph.slice %k {starts = array<i64: 0, 0, 0>, ipu.derived} : tensor<3x8x4xf32> -> tensor<2x8x4xf32>
// CHECK-NEXT: %[[V0:.*]] = graph.slice %v {starts = array<i64: 0, 0, 0>, ipu.derived} : tensor<3x8x4xf32> -> tensor<2x8x4xf32>
// CHECK-NEXT: %[[B0:.*]] = graph.slice %b {starts = array<i64: 0, 0, 0>, ipu.derived} : tensor<18x8x8xf32> -> tensor<12x8x8xf32>
// CHECK-NEXT: %[[A0:.*]] = graph.attention %[[Q0]], %[[K0]], %[[V0]] bias %[[B0]] {form = "materialized", causal, ipu.derived}
// CHECK:      graph.slice %q {starts = array<i64: 12, 0, 0>, ipu.derived} : tensor<18x8x4xf32> -> tensor<6x8x4xf32>
// CHECK:      graph.slice %k {starts = array<i64: 2, 0, 0>, ipu.derived} : tensor<3x8x4xf32> -> tensor<1x8x4xf32>
// CHECK:      %y = graph.concat %[[A0]], %{{.*}} {axis = 0 : i64} : (tensor<12x8x4xf32>, tensor<6x8x4xf32>) -> tensor<18x8x4xf32>
// CHECK-NOT:  tensor<18x8x4xf32>) -> tensor<18x8x4xf32>

// EMU: numericalTest=PASS
func.func @gqa(%q: tensor<18x8x4xf32>, %k: tensor<3x8x4xf32>, %v: tensor<3x8x4xf32>, %b: tensor<18x8x8xf32>) -> tensor<18x8x4xf32> {
  %y = graph.attention %q, %k, %v bias %b {form = "materialized", causal} : (tensor<18x8x4xf32>, tensor<3x8x4xf32>, tensor<3x8x4xf32>, tensor<18x8x8xf32>) -> tensor<18x8x4xf32>
  func.return %y : tensor<18x8x4xf32>
}

// -----

// Multi-query: one group of 18 query heads is larger than the target, so it is cut into
// pieces of 9 (the largest divisor of 18 that fits), each reading the one KV head whole.
// CHECK-LABEL: func.func @multi_query
// CHECK:      graph.slice %q {starts = array<i64: 0, 0, 0>, ipu.derived} : tensor<18x8x4xf32> -> tensor<9x8x4xf32>
// CHECK-NEXT: graph.attention %{{.*}}, %k, %v {form = "materialized", ipu.derived} : (tensor<9x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<9x8x4xf32>
// CHECK:      graph.slice %q {starts = array<i64: 9, 0, 0>, ipu.derived} : tensor<18x8x4xf32> -> tensor<9x8x4xf32>
// CHECK:      %y = graph.concat
func.func @multi_query(%q: tensor<18x8x4xf32>, %k: tensor<1x8x4xf32>, %v: tensor<1x8x4xf32>) -> tensor<18x8x4xf32> {
  %y = graph.attention %q, %k, %v {form = "materialized"} : (tensor<18x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<18x8x4xf32>
  func.return %y : tensor<18x8x4xf32>
}

// -----

// 16 heads fit 16 tiles: unchanged.
// CHECK-LABEL: func.func @fits
// CHECK-NEXT: %y = graph.attention %q, %k, %v
func.func @fits(%q: tensor<16x8x4xf32>, %k: tensor<4x8x4xf32>, %v: tensor<4x8x4xf32>) -> tensor<16x8x4xf32> {
  %y = graph.attention %q, %k, %v {form = "materialized"} : (tensor<16x8x4xf32>, tensor<4x8x4xf32>, tensor<4x8x4xf32>) -> tensor<16x8x4xf32>
  func.return %y : tensor<16x8x4xf32>
}
