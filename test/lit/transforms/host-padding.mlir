// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s
// RUN: ipu-opt %s -p ipu-compile --target sim16 | filecheck %s --check-prefix=TASM

// The host writes real elements only, and tile memory holds anything, so a host-written block
// whose padding a kernel reads as data gets zeros there. Here K = 1000 is cut in 8 blocks of 126
// (1008): the AMP contracts both operands' padded K.
// - the input x is written by the host over its whole blocks: the device tensor is the padded
//   extent (host pads on the high side), so the padding arrives as zeros, with no extra move;
// - the weight w is written by the initialize call over its whole blocks, padding as zeros.
func.func @main(%x: tensor<32x1000xf16>) -> tensor<32x90xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<1000x90xf16>
  %y = graph.matmul %x, %w : (tensor<32x1000xf16>, tensor<1000x90xf16>) -> tensor<32x90xf16>
  func.return %y : tensor<32x90xf16>
}

// The AMP runs swapped (x is its weights, in interleaved memory).
// CHECK:      %x = tilemap.host_write "x" : tensor<32x1008xf16> layout #plan.layout<grid = [1, 2, 8], split = {{\[\[}}0], [2]], align = [1, 2], memory = interleaved> {host_pads = array<i64: 0, 0, 0, 8>} -> !tilemap.buffer<32x126xf16, tiles = [0, 16], memory = interleaved>
// CHECK-NOT:  "zero padding"
// CHECK:      %w = tilemap.weight "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<1000x90xf16> layout #plan.layout<grid = [1, 2, 8], split = {{\[\[}}2], [1]], align = [2, 2], memory = interleaved> {zero_padding} -> !tilemap.buffer<126x46xf16, tiles = [0, 16], memory = interleaved>
// CHECK:      tilemap.run "amp_matmul_swapped"(%x, %w, %y_partial_transposed) {m = 32 : i64, k = 126 : i64, n = 46 : i64}

// The search's pick is the swapped AMP over the same 8 K blocks of 126, its 32 tokens in two
// 16-wide groups, each with its replica of the weight (the largest weight budget's second
// candidate); the package streams x in with its padding (plain, it was 4 exact blocks of 250,
// nothing to zero). Its K split reduces by rows (the swapped AMP takes the weight's columns one
// at a time), so the weight's 90 columns are not padded to column shares, and the host writes
// every padded weight's padding (its K rows 1000 -> 1008) as zeros, read as data or not.
// TASM:       tasm.call "amp_matmul_swapped" {{.*}} {m = 16 : i64, k = 126 : i64, n = 90 : i64} : f16 -> f32
// TASM:       tasm.stream_in @x : tensor<32x1008xf16> host_pads array<i64: 0, 0, 0, 8> layout
// TASM:       tasm.weight @w #graph.gaussian<seed = 1, std = 0.05> : tensor<1000x90xf16> layout #plan.layout<grid = [2, 1, 8], split = {{\[\[}}2], [1]], align = [2, 2], memory = interleaved> at {{[0-9]+}} zero_padding{{$}}
