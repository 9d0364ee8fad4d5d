// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// Round trip of the transformer ops: elementwise exp/tanh/cast, row-wise softmax and reduce,
// the norms, head split/merge and attention in both forms.

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<4x8xf16>) -> (tensor<4x8xf32>, tensor<4x8xf16>) {
  // CHECK: %e = graph.exp %x : tensor<4x8xf16> -> tensor<4x8xf16>
  %e = graph.exp %x : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %t = graph.tanh %e : tensor<4x8xf16> -> tensor<4x8xf16>
  %t = graph.tanh %e : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %c = graph.cast %t : tensor<4x8xf16> -> tensor<4x8xf32>
  %c = graph.cast %t : tensor<4x8xf16> -> tensor<4x8xf32>
  // CHECK-NEXT: %b = graph.cast %c : tensor<4x8xf32> -> tensor<4x8xf16>
  %b = graph.cast %c : tensor<4x8xf32> -> tensor<4x8xf16>
  // CHECK-NEXT: func.return %c, %b : tensor<4x8xf32>, tensor<4x8xf16>
  func.return %c, %b : tensor<4x8xf32>, tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @rows
func.func @rows(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) {
  // CHECK: %s = graph.softmax %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %s = graph.softmax %x : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %s0 = graph.softmax %x {axis = 0 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  %s0 = graph.softmax %x {axis = 0 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %r = graph.reduce %x {kind = "sum", axis = 1 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  %r = graph.reduce %x {kind = "sum", axis = 1 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK-NEXT: %m = graph.reduce %x {kind = "max", axis = 0 : i64} : tensor<4x8xf32> -> tensor<8xf32>
  %m = graph.reduce %x {kind = "max", axis = 0 : i64} : tensor<4x8xf32> -> tensor<8xf32>
  // CHECK-NEXT: %a = graph.reduce %x {kind = "mean", axis = -1 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  %a = graph.reduce %x {kind = "mean", axis = -1 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK-NEXT: func.return %s, %s0, %r, %m, %a
  func.return %s, %s0, %r, %m, %a : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<4x8xf16>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>) {
  // CHECK: %n = graph.layer_norm %x, %g, %b : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %n = graph.layer_norm %x, %g, %b : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  // CHECK-NEXT: %r = graph.rms_norm %n, %g {epsilon = 1.000000e-06 : f32} : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %r = graph.rms_norm %n, %g {epsilon = 1.0e-06 : f32} : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  // CHECK-NEXT: func.return %n, %r
  func.return %n, %r : tensor<4x8xf16>, tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<64x128xf16>, %k: tensor<64x32xf16>, %v: tensor<64x32xf16>) -> (tensor<64x128xf16>, tensor<64x128xf16>) {
  // CHECK: %qh = graph.split_heads %q {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x64x16xf16>
  %qh = graph.split_heads %q {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x64x16xf16>
  // CHECK-NEXT: %kh = graph.split_heads %k {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  // CHECK-NEXT: %vh = graph.split_heads %v {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  // CHECK-NEXT: %a = graph.attention %qh, %kh, %vh {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  // CHECK-NEXT: %c = graph.attention %qh, %kh, %vh {form = "streamed", causal, scale = 1.250000e-01 : f32} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  %c = graph.attention %qh, %kh, %vh {form = "streamed", causal, scale = 0.125 : f32} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  // CHECK-NEXT: %m = graph.merge_heads %a : tensor<8x64x16xf16> -> tensor<64x128xf16>
  %m = graph.merge_heads %a : tensor<8x64x16xf16> -> tensor<64x128xf16>
  // CHECK-NEXT: %mc = graph.merge_heads %c : tensor<8x64x16xf16> -> tensor<64x128xf16>
  %mc = graph.merge_heads %c : tensor<8x64x16xf16> -> tensor<64x128xf16>
  // CHECK-NEXT: func.return %m, %mc
  func.return %m, %mc : tensor<64x128xf16>, tensor<64x128xf16>
}

// -----

// An additive bias on the scaled scores: one per head (T5's relative positions) or shared by
// every head (a mask), with or without the causal mask.
// CHECK-LABEL: func.func @attention_bias
func.func @attention_bias(%q: tensor<8x64x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x64x16xf16>, %b: tensor<8x64x64xf16>, %m: tensor<1x64x64xf16>) -> (tensor<8x64x16xf16>, tensor<8x64x16xf16>) {
  // CHECK: %a = graph.attention %q, %k, %v bias %b {form = "materialized", scale = 1.000000e+00 : f32} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<8x64x64xf16>) -> tensor<8x64x16xf16>
  %a = graph.attention %q, %k, %v bias %b {form = "materialized", scale = 1.0 : f32} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<8x64x64xf16>) -> tensor<8x64x16xf16>
  // CHECK-NEXT: %c = graph.attention %q, %k, %v bias %m {form = "streamed", causal} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<1x64x64xf16>) -> tensor<8x64x16xf16>
  %c = graph.attention %q, %k, %v bias %m {form = "streamed", causal} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<1x64x64xf16>) -> tensor<8x64x16xf16>
  // CHECK-NEXT: func.return %a, %c
  func.return %a, %c : tensor<8x64x16xf16>, tensor<8x64x16xf16>
}

// -----

// A repeated block with two carried values and a weight shared by all iterations.
// CHECK-LABEL: func.func @repeat
func.func @repeat(%x: tensor<4x8xf16>, %s: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // CHECK: %y, %z = graph.repeat 4 iter(%h = %x, %acc = %s) : (tensor<4x8xf16>, tensor<4x8xf16>) {
  // CHECK-NEXT: %w = graph.parameter "w" #graph.gaussian<seed = 5, std = 0.1> : tensor<8x8xf16>
  // CHECK-NEXT: %p = graph.matmul %h, %w : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  // CHECK-NEXT: %t = graph.tanh %p : tensor<4x8xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %a = graph.add %acc, %t : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  // CHECK-NEXT: graph.yield %t, %a : tensor<4x8xf16>, tensor<4x8xf16>
  // CHECK-NEXT: }
  %y, %z = graph.repeat 4 iter(%h = %x, %acc = %s) : (tensor<4x8xf16>, tensor<4x8xf16>) {
    %w = graph.parameter "w" #graph.gaussian<seed = 5, std = 0.1> : tensor<8x8xf16>
    %p = graph.matmul %h, %w : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
    %t = graph.tanh %p : tensor<4x8xf16> -> tensor<4x8xf16>
    %a = graph.add %acc, %t : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
    graph.yield %t, %a : tensor<4x8xf16>, tensor<4x8xf16>
  }
  // CHECK-NEXT: %o = graph.add %y, %z
  %o = graph.add %y, %z : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %o : tensor<4x8xf16>
}

// -----

// A single carried value, with an extra attribute after the body.
// CHECK-LABEL: func.func @repeat_one
func.func @repeat_one(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: %y = graph.repeat 2 iter(%h = %x) : (tensor<8xf32>) {
  // CHECK-NEXT: %e = graph.exp %h : tensor<8xf32> -> tensor<8xf32>
  // CHECK-NEXT: graph.yield %e : tensor<8xf32>
  // CHECK-NEXT: } {note = "unrolled"}
  %y = graph.repeat 2 iter(%h = %x) : (tensor<8xf32>) {
    %e = graph.exp %h : tensor<8xf32> -> tensor<8xf32>
    graph.yield %e : tensor<8xf32>
  } {note = "unrolled"}
  func.return %y : tensor<8xf32>
}
