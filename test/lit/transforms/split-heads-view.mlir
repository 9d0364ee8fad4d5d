// RUN: ipu-opt %s -p 'fuse-sibling-matmuls,plan-ops{target=sim64 finalists=1},map-tiles' --target sim64 | filecheck %s
// RUN: ipu-opt %s -p 'fuse-sibling-matmuls,ipu-compile' --target sim64 | filecheck %s --check-prefix=TASM
// RUN: ipu-run %s --target sim64 --checked --poison | filecheck %s --check-prefix=EMU

// The fused projection's q, k and v columns are windows of one product, each landing in its
// head split's 2-D twin and in the memory the attention reads it from (interleaved), so the split
// would copy each tile's block onto the same bytes: it is a view of the window's buffer instead
// (`tilemap.view`: one allocation, no code), where it was a `copy` of 1,496 cycles in all. The
// head merge is the same read backwards: each attention block is one head, and the merged
// value's 2-D twin holds the same bytes on the same tile, so it is a view too, not an exchange
// phase of its own before the output projection's move. A checked run on poisoned memory reads
// nothing never written, and the numbers match.
func.func @main(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 11, std = 0.05> : tensor<128x128xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 12, std = 0.05> : tensor<128x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 13, std = 0.05> : tensor<128x32xf16>
  %wo = graph.parameter "wo" #graph.gaussian<seed = 14, std = 0.05> : tensor<128x128xf16>
  %q = graph.matmul %x, %wq : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  %k = graph.matmul %x, %wk : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %v = graph.matmul %x, %wv : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %qh = graph.split_heads %q {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x64x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  %m = graph.merge_heads %a : tensor<8x64x16xf16> -> tensor<64x128xf16>
  %o = graph.matmul %m, %wo : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  func.return %o : tensor<64x128xf16>
}

// CHECK:      %q = tilemap.move %q_fused transfers
// CHECK:      -> !tilemap.buffer<8x16xf16, tiles = [0, 64], memory = interleaved>
// CHECK:      %k = tilemap.move %q_fused transfers
// CHECK:      -> !tilemap.buffer<64x16xf16, tiles = [0, 64], memory = interleaved>
// CHECK:      %v = tilemap.move %q_fused transfers
// CHECK:      -> !tilemap.buffer<64x16xf16, tiles = [0, 64], memory = interleaved>
// CHECK:      %qh = tilemap.view %q : !tilemap.buffer<8x16xf16, tiles = [0, 64], memory = interleaved> -> !tilemap.buffer<1x8x16xf16, tiles = [0, 64], memory = interleaved>
// CHECK:      %kh = tilemap.view %k : !tilemap.buffer<64x16xf16, [[T:.*]]> -> !tilemap.buffer<1x64x16xf16, [[T]]>
// CHECK:      %vh = tilemap.view %v : !tilemap.buffer<64x16xf16, [[T]]> -> !tilemap.buffer<1x64x16xf16, [[T]]>
// CHECK:      tilemap.run "attention_start"(%{{.*}}, %kh, %vh,
// CHECK:      %a = tilemap.run "attention_combine"
// CHECK:      %m = tilemap.view %a : !tilemap.buffer<1x8x16xf16, [[A:.*]]> -> !tilemap.buffer<8x16xf16, [[A]]>
// CHECK-NEXT: tilemap.checkpoint "m"
// CHECK-NEXT: %m_r = tilemap.move %m

// TASM-NOT:   tasm.call "copy"

// EMU: numericalTest=PASS
