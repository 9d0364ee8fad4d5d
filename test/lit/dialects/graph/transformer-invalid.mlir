// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%x: tensor<64x100xf16>) {
  %h = graph.split_heads %x {heads = 8 : i64} : tensor<64x100xf16> -> tensor<8x64x12xf16>
  func.return
}
// CHECK: Operation does not verify: graph.split_heads: 8 heads do not divide the columns of (64, 100)

// -----

func.func @f(%x: tensor<64x128xf16>) {
  %h = graph.split_heads %x {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x16x64xf16>
  func.return
}
// CHECK: Operation does not verify: graph.split_heads: result shape (8, 16, 64), expected (8, 64, 16)

// -----

func.func @f(%q: tensor<6x64x16xf16>, %k: tensor<4x64x16xf16>, %v: tensor<4x64x16xf16>) {
  %a = graph.attention %q, %k, %v {form = "materialized"} : (tensor<6x64x16xf16>, tensor<4x64x16xf16>, tensor<4x64x16xf16>) -> tensor<6x64x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: 6 query heads are not a multiple of 4 KV heads

// -----

func.func @f(%q: tensor<8x64x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x32x16xf16>) {
  %a = graph.attention %q, %k, %v {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x32x16xf16>) -> tensor<8x64x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: k (2, 64, 16) and v (2, 32, 16) differ

// -----

func.func @f(%q: tensor<8x64x16xf16>, %k: tensor<2x64x32xf16>, %v: tensor<2x64x32xf16>) {
  %a = graph.attention %q, %k, %v {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x32xf16>, tensor<2x64x32xf16>) -> tensor<8x64x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: head_dim 16 vs 32

// -----

func.func @f(%q: tensor<8x32x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x64x16xf16>) {
  %a = graph.attention %q, %k, %v {form = "streamed", causal} : (tensor<8x32x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x32x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: causal attention needs equal query and key lengths

// -----

func.func @f(%q: tensor<8x64x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x64x16xf16>) {
  %a = graph.attention %q, %k, %v {form = "flash"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: form must be one of ('materialized', 'streamed')

// -----

func.func @f(%q: tensor<8x64x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x64x16xf16>) {
  %a = graph.attention %q, %k, %v {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<2x64x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: result shape (2, 64, 16), expected (8, 64, 16)

// -----

func.func @f(%q: tensor<64x128xf16>, %k: tensor<64x32xf16>, %v: tensor<64x32xf16>) {
  %a = graph.attention %q, %k, %v {form = "materialized"} : (tensor<64x128xf16>, tensor<64x32xf16>, tensor<64x32xf16>) -> tensor<64x128xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: q, k and v must be rank 3 [heads, seq, head_dim]

// -----

func.func @f(%q: tensor<8x64x16xf16>, %k: tensor<2x32x16xf16>, %v: tensor<2x32x16xf16>, %b: tensor<8x64x64xf16>) {
  %a = graph.attention %q, %k, %v bias %b {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x32x16xf16>, tensor<2x32x16xf16>, tensor<8x64x64xf16>) -> tensor<8x64x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: bias (8, 64, 64) is not [8 or 1, 64, 32] (per head or shared)

// -----

func.func @f(%q: tensor<8x64x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x64x16xf16>, %b: tensor<2x64x64xf16>) {
  %a = graph.attention %q, %k, %v bias %b {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x64xf16>) -> tensor<8x64x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: bias (2, 64, 64) is not [8 or 1, 64, 64] (per head or shared)

// -----

func.func @f(%q: tensor<8x64x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x64x16xf16>, %b: tensor<8x64x64xf32>) {
  %a = graph.attention %q, %k, %v bias %b {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<8x64x64xf32>) -> tensor<8x64x16xf16>
  func.return
}
// CHECK: Operation does not verify: graph.attention: bias element type f32 differs from q's f16

// -----

func.func @f(%x: tensor<4x8xf32>) {
  %s = graph.softmax %x {axis = 2 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}
// CHECK: Operation does not verify: graph.softmax: axis 2 out of range for rank 2

// -----

func.func @f(%x: tensor<4x8xf32>) {
  %s = graph.softmax %x {axis = -3 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}
// CHECK: Operation does not verify: graph.softmax: axis -3 out of range for rank 2

// -----

func.func @f(%x: tensor<4x8xf32>) {
  %r = graph.reduce %x {kind = "median", axis = 1 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}
// CHECK: Operation does not verify: graph.reduce: kind must be one of ('sum', 'max', 'mean', 'prod')

// -----

func.func @f(%x: tensor<4x8xf32>) {
  %r = graph.reduce %x {kind = "sum", axis = 2 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}
// CHECK: Operation does not verify: graph.reduce: axis 2 out of range for rank 2

// -----

func.func @f(%x: tensor<4x8xf32>) {
  %r = graph.reduce %x {kind = "max", axis = 1 : i64} : tensor<4x8xf32> -> tensor<8xf32>
  func.return
}
// CHECK: Operation does not verify: graph.reduce: result shape (8,), expected (4,)

// -----

func.func @f(%x: tensor<4x8xf32>) {
  %r = graph.reduce %x {kind = "mean", axis = 1 : i64} : tensor<4x8xf32> -> tensor<4xf16>
  func.return
}
// CHECK: Operation does not verify: graph.reduce: element types differ

// -----

func.func @f(%x: tensor<4x8xf16>, %g: tensor<4xf16>, %b: tensor<8xf16>) {
  %n = graph.layer_norm %x, %g, %b : (tensor<4x8xf16>, tensor<4xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  func.return
}
// CHECK: Operation does not verify: graph.layer_norm: scale/shift must have shape (8,), got (4,)

// -----

func.func @f(%x: tensor<4x8xf16>, %g: tensor<8xf16>, %b: tensor<1x8xf16>) {
  %n = graph.layer_norm %x, %g, %b : (tensor<4x8xf16>, tensor<8xf16>, tensor<1x8xf16>) -> tensor<4x8xf16>
  func.return
}
// CHECK: Operation does not verify: graph.layer_norm: scale/shift must have shape (8,), got (1, 8)

// -----

func.func @f(%x: tensor<4x8xf16>, %g: tensor<8xf16>) {
  %n = graph.rms_norm %x, %g : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf32>
  func.return
}
// CHECK: Operation does not verify: graph.rms_norm: result type must equal input type

// -----

func.func @f(%x: tensor<8x64x16xf16>) {
  %m = graph.merge_heads %x : tensor<8x64x16xf16> -> tensor<64x64xf16>
  func.return
}
// CHECK: Operation does not verify: graph.merge_heads: (8, 64, 16) does not merge to (64, 64)

// -----

func.func @f(%x: tensor<4x8xf16>) {
  %y = graph.repeat 2 iter(%h = %x) : (tensor<4x8xf16>) {
    %c = graph.cast %h : tensor<4x8xf16> -> tensor<4x8xf32>
    graph.yield %c : tensor<4x8xf32>
  }
  func.return
}
// CHECK: Operation does not verify: graph.repeat: the body must end in graph.yield of the carried types

// -----

func.func @f(%x: tensor<4x8xf16>) {
  %y = graph.repeat 0 iter(%h = %x) : (tensor<4x8xf16>) {
    graph.yield %h : tensor<4x8xf16>
  }
  func.return
}
// CHECK: Operation does not verify: graph.repeat: count 0 is not between 1 and 2147483647

// -----

func.func @f(%x: tensor<4x8xf16>) {
  %c = graph.cast %x : tensor<4x8xf16> -> tensor<8x4xf32>
  func.return
}
// CHECK: Operation does not verify: graph.cast: shapes differ
