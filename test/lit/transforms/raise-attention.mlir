// RUN: ipu-opt %s --split-input-file -p raise-graph-ops | filecheck %s
// RUN: ipu-opt %s --split-input-file -p raise-graph-ops | ipu-opt --split-input-file | filecheck %s

// The attention chain as the importer writes it op by op (batch_matmul, scale, masks, softmax,
// batch_matmul), raised into one graph.attention; chains it cannot express stay op by op.

// GPT-2 / BERT: q and v split into heads, k^T a transpose of k's rows, a scale on the scores.
// CHECK-LABEL: func.func @scaled
// CHECK-NEXT:    %[[K:.*]] = graph.split_heads %k {heads = 2 : i64} : tensor<8x32xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:    %y = graph.attention %qh, %[[K]], %vh {form = "materialized", scale = 2.500000e-01 : f64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    func.return %y
func.func @scaled(%qh: tensor<2x8x16xf32>, %k: tensor<8x32xf32>, %vh: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %kt = graph.transpose %k {perm = array<i64: 1, 0>} : tensor<8x32xf32> -> tensor<32x8xf32>
  %kt3 = graph.reshape %kt : tensor<32x8xf32> -> tensor<2x16x8xf32>
  %s = graph.batch_matmul %qh, %kt3 : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %s2 = graph.reshape %s : tensor<2x8x8xf32> -> tensor<16x8xf32>
  %c = graph.parameter "c" dense<0.25> : tensor<16x8xf32> : tensor<16x8xf32>
  %m = graph.mul %s2, %c : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %p = graph.softmax %m : tensor<16x8xf32> -> tensor<16x8xf32>
  %p3 = graph.reshape %p : tensor<16x8xf32> -> tensor<2x8x8xf32>
  %y = graph.batch_matmul %p3, %vh : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  func.return %y : tensor<2x8x16xf32>
}

// -----

// A causal mask (0 visible, -inf hidden) becomes `causal`; the scale split over q and k (SDPA's
// sqrt of the scale on each) is the attention's; NaN-guarded softmax.
// CHECK-LABEL: func.func @causal_guarded
// CHECK:         graph.attention {{.*}} {form = "materialized", causal, scale = 2.500000e-01 : f64}
// CHECK-NOT:     graph.softmax
func.func @causal_guarded(%q: tensor<16x16xf32>, %kh: tensor<2x8x16xf32>, %vh: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %half = graph.parameter "half" dense<0.5> : tensor<16x16xf32> : tensor<16x16xf32>
  %qs = graph.mul %q, %half : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %q3 = graph.reshape %qs : tensor<16x16xf32> -> tensor<2x8x16xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 1>} : tensor<2x8x16xf32> -> tensor<2x16x8xf32>
  %half2 = graph.parameter "half2" dense<0.5> : tensor<2x16x8xf32> : tensor<2x16x8xf32>
  %kts = graph.mul %kt, %half2 : (tensor<2x16x8xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %s = graph.batch_matmul %q3, %kts : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %s2 = graph.reshape %s : tensor<2x8x8xf32> -> tensor<16x8xf32>
  %mask = graph.parameter "mask" dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<16x8xf32> : tensor<16x8xf32>
  %sm = graph.add %s2, %mask : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %p = graph.softmax %sm : tensor<16x8xf32> -> tensor<16x8xf32>
  %eq = graph.equal %p, %p : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xi1>
  %nan = graph.not %eq : tensor<16x8xi1> -> tensor<16x8xi1>
  %zero = graph.parameter "zero" dense<0.0> : tensor<16x8xf32> : tensor<16x8xf32>
  %pg = graph.where %nan, %zero, %p : (tensor<16x8xi1>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %p3 = graph.reshape %pg : tensor<16x8xf32> -> tensor<2x8x8xf32>
  %y = graph.batch_matmul %p3, %vh : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  func.return %y : tensor<2x8x16xf32>
}

// -----

// A constant bias per head (T5's position bias) is the attention's bias: the model's constant,
// viewed per head (every layer that adds it reads the one constant).
// CHECK-LABEL: func.func @position_bias
// CHECK:         %[[POS:.*]] = graph.reshape %pos : tensor<4x2xf32> -> tensor<2x2x2xf32>
// CHECK:         graph.attention %qh, %kh, %vh bias %[[POS]] {form = "materialized", scale = 1.000000e+00 : f64}
// CHECK-NOT:     graph.softmax
func.func @position_bias(%qh: tensor<2x2x4xf32>, %kh: tensor<2x2x4xf32>, %vh: tensor<2x2x4xf32>) -> tensor<2x2x4xf32> {
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 1>} : tensor<2x2x4xf32> -> tensor<2x4x2xf32>
  %s = graph.batch_matmul %qh, %kt : (tensor<2x2x4xf32>, tensor<2x4x2xf32>) -> tensor<2x2x2xf32>
  %s2 = graph.reshape %s : tensor<2x2x2xf32> -> tensor<4x2xf32>
  %pos = graph.parameter "pos" dense<[[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5], [3.0, -2.0]]> : tensor<4x2xf32> : tensor<4x2xf32>
  %b = graph.add %s2, %pos : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %p = graph.softmax %b : tensor<4x2xf32> -> tensor<4x2xf32>
  %p3 = graph.reshape %p : tensor<4x2xf32> -> tensor<2x2x2xf32>
  %y = graph.batch_matmul %p3, %vh : (tensor<2x2x2xf32>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  func.return %y : tensor<2x2x4xf32>
}

// -----

// A bias computed at run time, broadcast over the heads by the importer (ones times its values),
// is the bias operand once, shared by the heads; the scale after it scales it.
// CHECK-LABEL: func.func @runtime_bias
// CHECK:         %[[K:.*]] = graph.parameter "attention_bias_scale_0.25" dense<2.500000e-01> : tensor<1xf32> : tensor<1x8x8xf32>
// CHECK:         %[[RB:.*]] = graph.reshape %rb : tensor<8x8xf32> -> tensor<1x8x8xf32>
// CHECK:         %[[SB:.*]] = graph.mul %[[RB]], %[[K]]
// CHECK:         graph.attention %qh, %kh, %vh bias %[[SB]] {form = "materialized", scale = 2.500000e-01 : f64}
func.func @runtime_bias(%qh: tensor<2x8x16xf32>, %kh: tensor<2x8x16xf32>, %vh: tensor<2x8x16xf32>, %rb: tensor<8x8xf32>) -> tensor<2x8x16xf32> {
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 1>} : tensor<2x8x16xf32> -> tensor<2x16x8xf32>
  %s = graph.batch_matmul %qh, %kt : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %s2 = graph.reshape %s : tensor<2x8x8xf32> -> tensor<16x8xf32>
  %rbf = graph.reshape %rb : tensor<8x8xf32> -> tensor<64xf32>
  %ones = graph.parameter "ones" dense<1.0> : tensor<2x64xf32> : tensor<2x64xf32>
  %rb2 = graph.mul %ones, %rbf : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  %rb3 = graph.reshape %rb2 : tensor<2x64xf32> -> tensor<16x8xf32>
  %sb = graph.add %s2, %rb3 : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %c = graph.parameter "c" dense<0.25> : tensor<16x8xf32> : tensor<16x8xf32>
  %m = graph.mul %sb, %c : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %p = graph.softmax %m : tensor<16x8xf32> -> tensor<16x8xf32>
  %p3 = graph.reshape %p : tensor<16x8xf32> -> tensor<2x8x8xf32>
  %y = graph.batch_matmul %p3, %vh : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  func.return %y : tensor<2x8x16xf32>
}

// -----

// Near misses stay op by op: the probabilities have another reader (an output), and a mask on a
// condition computed at run time.
// CHECK-LABEL: func.func @probs_read
// CHECK-NOT:     graph.attention
// CHECK:         graph.softmax
// CHECK:         graph.batch_matmul
func.func @probs_read(%qh: tensor<2x8x16xf32>, %kt: tensor<2x16x8xf32>, %vh: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x8xf32>) {
  %s = graph.batch_matmul %qh, %kt : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %p = graph.softmax %s : tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  %y = graph.batch_matmul %p, %vh : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  func.return %y, %p : tensor<2x8x16xf32>, tensor<2x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @runtime_condition
// CHECK-NOT:     graph.attention
// CHECK:         graph.where
func.func @runtime_condition(%qh: tensor<2x8x16xf32>, %kt: tensor<2x16x8xf32>, %vh: tensor<2x8x16xf32>, %c: tensor<2x8x8xi1>) -> tensor<2x8x16xf32> {
  %s = graph.batch_matmul %qh, %kt : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %ninf = graph.parameter "ninf" dense<0xFF800000> : tensor<2x8x8xf32> : tensor<2x8x8xf32>
  %w = graph.where %c, %s, %ninf : (tensor<2x8x8xi1>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %p = graph.softmax %w : tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  %y = graph.batch_matmul %p, %vh : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  func.return %y : tensor<2x8x16xf32>
}
