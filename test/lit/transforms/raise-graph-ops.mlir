// RUN: ipu-opt %s --split-input-file -p raise-graph-ops | filecheck %s
// RUN: ipu-opt %s --split-input-file -p raise-graph-ops | ipu-opt --split-input-file | filecheck %s

// Chains of primitive graph ops the fused op computes, raised into it (the root's name kept,
// the interior ops and constants gone); chains that do not match, or whose interior values
// have other readers, stay as they are.

// GeLU, exact: 0.5 * x * (1 + erf(x / sqrt 2)), factors in any order.
// CHECK-LABEL: func.func @gelu_erf
// CHECK-NEXT:    %y = graph.gelu %x {approximate = "none"} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y
func.func @gelu_erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s2 = graph.parameter "s2" dense<1.41421354> : tensor<4x8xf32> : tensor<4x8xf32>
  %d = graph.div %x, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = graph.erf %d : tensor<4x8xf32> -> tensor<4x8xf32>
  %one = graph.parameter "one" dense<1.0> : tensor<4x8xf32> : tensor<4x8xf32>
  %a = graph.add %one, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = graph.parameter "half" dense<0.5> : tensor<4x8xf32> : tensor<4x8xf32>
  %h = graph.mul %half, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.mul %h, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// GeLU, tanh form (GPT-2's): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT:    %y = graph.gelu %x : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    func.return %y
func.func @gelu_tanh(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %three = graph.parameter "three" dense<3.0> : tensor<4x8xf16> : tensor<4x8xf16>
  %c = graph.pow %x, %three : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %k = graph.parameter "k" dense<0.044715> : tensor<4x8xf16> : tensor<4x8xf16>
  %kc = graph.mul %c, %k : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %s = graph.add %x, %kc : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %r = graph.parameter "r" dense<0.797884583> : tensor<4x8xf16> : tensor<4x8xf16>
  %u = graph.mul %s, %r : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %t = graph.tanh %u : tensor<4x8xf16> -> tensor<4x8xf16>
  %one = graph.parameter "one" dense<1.0> : tensor<4x8xf16> : tensor<4x8xf16>
  %a = graph.add %t, %one : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %m = graph.mul %x, %a : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %half = graph.parameter "half" dense<0.5> : tensor<4x8xf16> : tensor<4x8xf16>
  %y = graph.mul %m, %half : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}

// -----

// SiLU: x * sigmoid(x), either order.
// CHECK-LABEL: func.func @silu
// CHECK-NEXT:    %y = graph.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y
func.func @silu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = graph.sigmoid %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = graph.mul %s, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// rsqrt: reciprocal(sqrt(x)) and 1 / sqrt(x).
// CHECK-LABEL: func.func @rsqrt
// CHECK-NEXT:    %r = graph.rsqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %q = graph.rsqrt %r : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %q
func.func @rsqrt(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = graph.sqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %r = graph.reciprocal %s : tensor<4x8xf32> -> tensor<4x8xf32>
  %s2 = graph.sqrt %r : tensor<4x8xf32> -> tensor<4x8xf32>
  %one = graph.parameter "one" dense<1.0> : tensor<4x8xf32> : tensor<4x8xf32>
  %q = graph.div %one, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %q : tensor<4x8xf32>
}

// -----

// Not raised: the sigmoid is read again (its value is an output), and the GeLU's constant is
// not 0.5.
// CHECK-LABEL: func.func @kept
// CHECK:         graph.sigmoid
// CHECK:         graph.mul
// CHECK:         graph.erf
// CHECK-NOT:     graph.silu
// CHECK-NOT:     graph.gelu
func.func @kept(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = graph.sigmoid %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = graph.mul %x, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = graph.parameter "s2" dense<1.41421354> : tensor<4x8xf32> : tensor<4x8xf32>
  %d = graph.div %x, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = graph.erf %d : tensor<4x8xf32> -> tensor<4x8xf32>
  %one = graph.parameter "one" dense<1.0> : tensor<4x8xf32> : tensor<4x8xf32>
  %a = graph.add %one, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = graph.parameter "c" dense<0.6> : tensor<4x8xf32> : tensor<4x8xf32>
  %h = graph.mul %c, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = graph.mul %h, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y, %s, %g : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// SDPA without native grouping (torch's dynamo export at opset 23): each of 2 KV heads repeated
// for 2 query heads (flattened, times ones [2, N], split into [Hkv, r, N / Hkv], reshaped). The
// attention reads the 2 KV heads themselves; the copies are gone.
// CHECK-LABEL: func.func @grouped_kv
// CHECK-NEXT:    %{{.*}} = graph.reshape %k : tensor<8x2xf32> -> tensor<2x4x2xf32>
// CHECK-NEXT:    %{{.*}} = graph.reshape %v : tensor<8x2xf32> -> tensor<2x4x2xf32>
// CHECK-NEXT:    %y = graph.attention %q, %{{.*}}, %{{.*}} {form = "materialized", causal} : (tensor<4x4x2xf32>, tensor<2x4x2xf32>, tensor<2x4x2xf32>) -> tensor<4x4x2xf32>
// CHECK-NEXT:    func.return %y
func.func @grouped_kv(%q: tensor<4x4x2xf32>, %k: tensor<8x2xf32>, %v: tensor<8x2xf32>) -> tensor<4x4x2xf32> {
  %ones = graph.parameter "ones" dense<1.0> : tensor<2x16xf32> : tensor<2x16xf32>
  %kf = graph.reshape %k : tensor<8x2xf32> -> tensor<16xf32>
  %kr = graph.mul %ones, %kf : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %ks = graph.split_heads %kr {heads = 2 : i64} : tensor<2x16xf32> -> tensor<2x2x8xf32>
  %kh = graph.reshape %ks : tensor<2x2x8xf32> -> tensor<4x4x2xf32>
  %vf = graph.reshape %v : tensor<8x2xf32> -> tensor<16xf32>
  %vr = graph.mul %vf, %ones : (tensor<16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %vs = graph.split_heads %vr {heads = 2 : i64} : tensor<2x16xf32> -> tensor<2x2x8xf32>
  %vh = graph.reshape %vs : tensor<2x2x8xf32> -> tensor<4x4x2xf32>
  %y = graph.attention %q, %kh, %vh {form = "materialized", causal} : (tensor<4x4x2xf32>, tensor<4x4x2xf32>, tensor<4x4x2xf32>) -> tensor<4x4x2xf32>
  func.return %y : tensor<4x4x2xf32>
}

// -----

// Multi-query: one KV head repeated for 4 query heads (no split_heads for one head).
// CHECK-LABEL: func.func @multi_query
// CHECK-NEXT:    %{{.*}} = graph.reshape %k : tensor<4x2xf32> -> tensor<1x4x2xf32>
// CHECK-NEXT:    %{{.*}} = graph.reshape %v : tensor<4x2xf32> -> tensor<1x4x2xf32>
// CHECK-NEXT:    %y = graph.attention %q, %{{.*}}, %{{.*}} {form = "materialized"} : (tensor<4x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<4x4x2xf32>
func.func @multi_query(%q: tensor<4x4x2xf32>, %k: tensor<4x2xf32>, %v: tensor<4x2xf32>) -> tensor<4x4x2xf32> {
  %ones = graph.parameter "ones" dense<1.0> : tensor<4x8xf32> : tensor<4x8xf32>
  %kf = graph.reshape %k : tensor<4x2xf32> -> tensor<8xf32>
  %kr = graph.mul %ones, %kf : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %kh = graph.reshape %kr : tensor<4x8xf32> -> tensor<4x4x2xf32>
  %vf = graph.reshape %v : tensor<4x2xf32> -> tensor<8xf32>
  %vr = graph.mul %ones, %vf : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %vh = graph.reshape %vr : tensor<4x8xf32> -> tensor<4x4x2xf32>
  %y = graph.attention %q, %kh, %vh {form = "materialized"} : (tensor<4x4x2xf32>, tensor<4x4x2xf32>, tensor<4x4x2xf32>) -> tensor<4x4x2xf32>
  func.return %y : tensor<4x4x2xf32>
}

// -----

// Only the keys are repeated (the values are 4 distinct heads): nothing to group, unchanged.
// A factor that is not all ones is not a repeat either.
// CHECK-LABEL: func.func @values_not_repeated
// CHECK:         graph.split_heads
// CHECK:         %y = graph.attention %q, %kh, %v
func.func @values_not_repeated(%q: tensor<4x4x2xf32>, %k: tensor<8x2xf32>, %v: tensor<4x4x2xf32>) -> tensor<4x4x2xf32> {
  %ones = graph.parameter "ones" dense<1.0> : tensor<2x16xf32> : tensor<2x16xf32>
  %kf = graph.reshape %k : tensor<8x2xf32> -> tensor<16xf32>
  %kr = graph.mul %ones, %kf : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %ks = graph.split_heads %kr {heads = 2 : i64} : tensor<2x16xf32> -> tensor<2x2x8xf32>
  %kh = graph.reshape %ks : tensor<2x2x8xf32> -> tensor<4x4x2xf32>
  %y = graph.attention %q, %kh, %v {form = "materialized"} : (tensor<4x4x2xf32>, tensor<4x4x2xf32>, tensor<4x4x2xf32>) -> tensor<4x4x2xf32>
  func.return %y : tensor<4x4x2xf32>
}

// CHECK-LABEL: func.func @not_ones
// CHECK:         graph.split_heads
// CHECK:         %y = graph.attention %q, %kh, %vh
func.func @not_ones(%q: tensor<4x4x2xf32>, %k: tensor<8x2xf32>, %v: tensor<8x2xf32>) -> tensor<4x4x2xf32> {
  %twos = graph.parameter "twos" dense<2.0> : tensor<2x16xf32> : tensor<2x16xf32>
  %kf = graph.reshape %k : tensor<8x2xf32> -> tensor<16xf32>
  %kr = graph.mul %twos, %kf : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %ks = graph.split_heads %kr {heads = 2 : i64} : tensor<2x16xf32> -> tensor<2x2x8xf32>
  %kh = graph.reshape %ks : tensor<2x2x8xf32> -> tensor<4x4x2xf32>
  %vf = graph.reshape %v : tensor<8x2xf32> -> tensor<16xf32>
  %vr = graph.mul %twos, %vf : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %vs = graph.split_heads %vr {heads = 2 : i64} : tensor<2x16xf32> -> tensor<2x2x8xf32>
  %vh = graph.reshape %vs : tensor<2x2x8xf32> -> tensor<4x4x2xf32>
  %y = graph.attention %q, %kh, %vh {form = "materialized"} : (tensor<4x4x2xf32>, tensor<4x4x2xf32>, tensor<4x4x2xf32>) -> tensor<4x4x2xf32>
  func.return %y : tensor<4x4x2xf32>
}

// -----

// A layout change and its inverse (NHWC -> NCHW for an imported conv, and back), spelled as the
// importer decomposes 4-D permutes (leading-axis swaps, 2-D transposes between reshapes): every
// element ends where it started, so the chain is its source.
// CHECK-LABEL: func.func @view_round_trip
// CHECK-NEXT:    %y = graph.relu %x
// CHECK-NEXT:    func.return %y
func.func @view_round_trip(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %a = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<2x3x4x5xf32> -> tensor<2x5x3x4xf32>
  %b = graph.reshape %a : tensor<2x5x3x4xf32> -> tensor<10x12xf32>
  %c = graph.reshape %b : tensor<10x12xf32> -> tensor<2x5x12xf32>
  %d = graph.transpose %c {perm = array<i64: 0, 2, 1>} : tensor<2x5x12xf32> -> tensor<2x12x5xf32>
  %e = graph.reshape %d : tensor<2x12x5xf32> -> tensor<2x3x4x5xf32>
  %y = graph.relu %e : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  func.return %y : tensor<2x3x4x5xf32>
}

// -----

// The round trip ends in a collapse ([N*H*W, C] rows, as the importer's elementwise ops read
// NHWC values): one reshape of the source. The interior transpose has a second reader, so it
// stays for it.
// CHECK-LABEL: func.func @view_round_trip_to_rows
// CHECK-NEXT:    %a = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %{{.*}} = graph.reshape %x : tensor<2x3x4x5xf32> -> tensor<24x5xf32>
// CHECK-NOT:     graph.transpose
// CHECK:         func.return
func.func @view_round_trip_to_rows(%x: tensor<2x3x4x5xf32>) -> (tensor<24x5xf32>, tensor<2x5x3x4xf32>) {
  %a = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<2x3x4x5xf32> -> tensor<2x5x3x4xf32>
  %b = graph.transpose %a {perm = array<i64: 0, 2, 3, 1>} : tensor<2x5x3x4xf32> -> tensor<2x3x4x5xf32>
  %r = graph.reshape %b : tensor<2x3x4x5xf32> -> tensor<24x5xf32>
  func.return %r, %a : tensor<24x5xf32>, tensor<2x5x3x4xf32>
}

// -----

// A chain that moves elements (NHWC -> NCHW, not back) is kept as it is.
// CHECK-LABEL: func.func @view_permutes
// CHECK:         graph.transpose %x {perm = array<i64: 0, 3, 1, 2>}
// CHECK:         graph.reshape
func.func @view_permutes(%x: tensor<2x3x4x5xf32>) -> tensor<10x12xf32> {
  %a = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<2x3x4x5xf32> -> tensor<2x5x3x4xf32>
  %b = graph.reshape %a : tensor<2x5x3x4xf32> -> tensor<10x12xf32>
  func.return %b : tensor<10x12xf32>
}

// -----

// RMSNorm as exporters spell it: x * rsqrt(mean(x * x) + eps) over the last axis (the mean of a
// [rows, 1, C] view, one value per row) -> graph.rms_norm with a unit scale; the weight multiply
// after it stays as the model wrote it.
// CHECK-LABEL: func.func @rms_norm
// CHECK-NEXT:    %norm_ones_8_f32 = graph.parameter "norm_ones_8_f32" dense<1.000000e+00> : tensor<1xf32> : tensor<8xf32>
// CHECK-NEXT:    %n = graph.rms_norm %x, %norm_ones_8_f32 {epsilon = 9.99999997{{.*}}e-07 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %n
func.func @rms_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sq = graph.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = graph.reshape %sq : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %m = graph.reduce %v {kind = "mean", axis = 2 : i64} : tensor<4x1x8xf32> -> tensor<4x1xf32>
  %eps = graph.parameter "eps" dense<1.0e-6> : tensor<4x1xf32> : tensor<4x1xf32>
  %a = graph.add %m, %eps : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %r = graph.rsqrt %a : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = graph.mul %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// -----

// LayerNorm: d = x - mean(x); d / sqrt(mean(d^2) + eps), the mean read through a reshape of x
// of its own -> graph.layer_norm of x (unit scale, zero shift), one parameter each per width.
// CHECK-LABEL: func.func @layer_norm
// CHECK:         %n = graph.layer_norm %x2, %norm_ones_8_f32, %norm_zeros_8_f32 {epsilon = 9.99999{{[0-9]*}}e-06 : f64}
// CHECK-NOT:     graph.reduce
func.func @layer_norm(%x: tensor<1x4x8xf32>) -> tensor<4x8xf32> {
  %x2 = graph.reshape %x : tensor<1x4x8xf32> -> tensor<4x8xf32>
  %xv = graph.reshape %x : tensor<1x4x8xf32> -> tensor<4x1x8xf32>
  %mu = graph.reduce %xv {kind = "mean", axis = 2 : i64} : tensor<4x1x8xf32> -> tensor<4x1xf32>
  %d = graph.sub %x2, %mu : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %two = graph.parameter "two" dense<2.0> : tensor<4x8xf32> : tensor<4x8xf32>
  %sq = graph.pow %d, %two : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = graph.reshape %sq : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %m = graph.reduce %v {kind = "mean", axis = 2 : i64} : tensor<4x1x8xf32> -> tensor<4x1xf32>
  %eps = graph.parameter "eps" dense<1.0e-5> : tensor<4x1xf32> : tensor<4x1xf32>
  %a = graph.add %eps, %m : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %s = graph.sqrt %a : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = graph.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// -----

// The numerator is not the squared value (x / sqrt(mean(y^2) + eps)): no norm, unchanged.
// CHECK-LABEL: func.func @not_a_norm
// CHECK-NOT:     graph.rms_norm
// CHECK:         graph.rsqrt
func.func @not_a_norm(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sq = graph.mul %y, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = graph.reshape %sq : tensor<4x8xf32> -> tensor<4x1x8xf32>
  %m = graph.reduce %v {kind = "mean", axis = 2 : i64} : tensor<4x1x8xf32> -> tensor<4x1xf32>
  %eps = graph.parameter "eps" dense<1.0e-6> : tensor<4x1xf32> : tensor<4x1xf32>
  %a = graph.add %m, %eps : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %r = graph.rsqrt %a : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = graph.mul %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// -----

// Rotary's rotate_half: concat(-x[:, D/2:], x[:, :D/2]) -> x times the signed permutation that
// computes it, one [D, D] constant per function; the reshape the importer made twice of one value
// is read once.
// CHECK-LABEL: func.func @rotate_half
// CHECK-NEXT:    %rotate_half_8_f32 = graph.parameter "rotate_half_8_f32" dense<{{.*}}> : tensor<8x8xf32> : tensor<8x8xf32>
// CHECK-NEXT:    %r = graph.reshape %x : tensor<2x4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:    %c = graph.matmul %r, %rotate_half_8_f32 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %y = graph.add %r, %c
func.func @rotate_half(%x: tensor<2x4x8xf32>) -> tensor<8x8xf32> {
  %r = graph.reshape %x : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %r2 = graph.reshape %x : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %lo = graph.slice %r2 {starts = array<i64: 0, 0>} : tensor<8x8xf32> -> tensor<8x4xf32>
  %hi = graph.slice %r2 {starts = array<i64: 0, 4>} : tensor<8x8xf32> -> tensor<8x4xf32>
  %n = graph.neg %hi : tensor<8x4xf32> -> tensor<8x4xf32>
  %c = graph.concat %n, %lo {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %y = graph.add %r, %c : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %y : tensor<8x8xf32>
}

// -----

// The halves swapped without the negation, or the negated half the first: not rotate_half.
// CHECK-LABEL: func.func @not_rotate_half
// CHECK:         graph.concat
func.func @not_rotate_half(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %lo = graph.slice %x {starts = array<i64: 0, 0>} : tensor<8x8xf32> -> tensor<8x4xf32>
  %hi = graph.slice %x {starts = array<i64: 0, 4>} : tensor<8x8xf32> -> tensor<8x4xf32>
  %n = graph.neg %lo : tensor<8x4xf32> -> tensor<8x4xf32>
  %c = graph.concat %n, %hi {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  func.return %c : tensor<8x8xf32>
}

// -----

// A convolution's bias, residual add and activation, imported on its [N H W, C] rows: each
// sinks below the collapse (SinkRowCollapse), the collapse meets the next convolution's
// [N, H, W, C] view and the pair folds away (FoldReshapePair), so the chain runs in the
// convolutions' own shape. The residual's other operand is the collapse of a value of the same
// shape; the bias a [C] row.
// CHECK-LABEL: func.func @conv_chain_channels_last
// CHECK:         %c = graph.conv %x, %w
// CHECK-NEXT:    %b = graph.add %c, %bias {{.*}} -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    %s = graph.add %b, %x {{.*}} -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    %r = graph.relu %s : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    %d = graph.conv %r, %w
// CHECK-NOT:     graph.reshape
// CHECK:         func.return %d
func.func @conv_chain_channels_last(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<3x3x8x8xf32>
  %bias = graph.parameter "bias" #graph.gaussian<seed = 2, std = 0.1> : tensor<8xf32>
  %c = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 1 : i64} : (tensor<1x4x4x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x4x4x8xf32>
  %c2 = graph.reshape %c : tensor<1x4x4x8xf32> -> tensor<16x8xf32>
  %b = graph.add %c2, %bias : (tensor<16x8xf32>, tensor<8xf32>) -> tensor<16x8xf32>
  %x2 = graph.reshape %x : tensor<1x4x4x8xf32> -> tensor<16x8xf32>
  %s = graph.add %b, %x2 : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %r = graph.relu %s : tensor<16x8xf32> -> tensor<16x8xf32>
  %r4 = graph.reshape %r : tensor<16x8xf32> -> tensor<1x4x4x8xf32>
  %d = graph.conv %r4, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, groups = 1 : i64} : (tensor<1x4x4x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %d : tensor<1x4x4x8xf32>
}

// -----

// Not a convolution's result: an elementwise op on the collapse of a 4-D input stays on the
// rows (attention's [B, H, S, D] values, say, are planned as the importer shaped them).
// CHECK-LABEL: func.func @collapse_of_an_input
// CHECK-NEXT:    %r = graph.reshape %x : tensor<1x4x4x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT:    %y = graph.relu %r : tensor<16x8xf32> -> tensor<16x8xf32>
func.func @collapse_of_an_input(%x: tensor<1x4x4x8xf32>) -> tensor<16x8xf32> {
  %r = graph.reshape %x : tensor<1x4x4x8xf32> -> tensor<16x8xf32>
  %y = graph.relu %r : tensor<16x8xf32> -> tensor<16x8xf32>
  func.return %y : tensor<16x8xf32>
}

// -----

// A reshape of a reshape is one reshape of the first's input (FoldReshapePair).
// CHECK-LABEL: func.func @reshape_pair
// CHECK-NEXT:    %b = graph.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT:    func.return %b
func.func @reshape_pair(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %a = graph.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = graph.reshape %a : tensor<6x4xf32> -> tensor<24xf32>
  func.return %b : tensor<24xf32>
}

// -----

// ReLU spelled as JAX lowers it, max(x, 0) with a zero constant of the result's shape (either
// order) -> graph.relu; a maximum with another constant stays.
// CHECK-LABEL: func.func @relu_as_max
// CHECK-NEXT:    %y = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %h = graph.parameter "h" dense<5.000000e-01>
// CHECK-NEXT:    %z = graph.max %h, %y
// CHECK-NEXT:    func.return %z
func.func @relu_as_max(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = graph.parameter "zero" dense<0.0> : tensor<4x8xf32> : tensor<4x8xf32>
  %y = graph.max %zero, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = graph.parameter "h" dense<0.5> : tensor<4x8xf32> : tensor<4x8xf32>
  %z = graph.max %h, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}

// -----

// An integer max(x, 0) stays (relu computes on floats).
// CHECK-LABEL: func.func @int_max_zero
// CHECK:         graph.max
func.func @int_max_zero(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %zero = graph.parameter "zero" dense<0> : tensor<4x8xi32> : tensor<4x8xi32>
  %y = graph.max %x, %zero : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  func.return %y : tensor<4x8xi32>
}
