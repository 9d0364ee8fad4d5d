// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s

// An odd contraction of halves (K = 501). The gelu reads nothing across rows, and the lhs
// arrives in the AMP's layout by a move, which takes real elements only, except that the
// exchange moves whole 32-bit words: each row's last word carries the gelu output's first padding
// element into the AMP's padding, which it contracts. So the input's padding is read as data, and
// the host writes x's blocks whole (501 -> 502, host pads on the high side): gelu(0) = 0 there.
func.func @main(%x: tensor<64x501xf16>) -> tensor<64x256xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<501x256xf16>
  %g = graph.gelu %x : tensor<64x501xf16> -> tensor<64x501xf16>
  %y = graph.matmul %g, %w {plan.choice = #plan.choice<gemm, grid = [2, 2, 4]>} : (tensor<64x501xf16>, tensor<501x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// CHECK:      %x = tilemap.host_write "x" : tensor<64x502xf16> layout #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard> {host_pads = array<i64: 0, 0, 0, 1>} -> !tilemap.buffer<4x502xf16, tiles = [0, 16], memory = standard>
// CHECK-NOT:  "zero padding"
// CHECK:      %g = tilemap.run "gelu"(%x)
// CHECK:      %g_r = tilemap.move %g transfers
// CHECK:      {reason = "graph.matmul", zero_fill{{.*}}} : !tilemap.buffer<4x502xf16, tiles = [0, 16], memory = standard> -> !tilemap.buffer<32x126xf16, tiles = [0, 16], memory = standard>
// CHECK:      tilemap.run "amp_matmul"(%g_r, %w) {m = 32 : i64, k = 126 : i64, n = 128 : i64}
