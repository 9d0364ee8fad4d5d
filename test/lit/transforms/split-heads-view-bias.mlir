// RUN: ipu-opt %s -p 'fuse-sibling-matmuls,plan-ops{target=sim64 finalists=1},map-tiles' --target sim64 | filecheck %s
// RUN: ipu-run %s --target sim64 --checked --poison | filecheck %s --check-prefix=EMU

// As split-heads-view.mlir, with each projection's bias added before its head split (BERT's
// attention): fuse-sibling-matmuls joins the biases as it joins the weights and adds them once to
// the fused product, the window of the biased product lands each head in the split's 2-D twin
// and memory, and the split is a view of the window (before the biases were joined, each was
// added after its window, and the split a view of that sum; before that, a move of the sum).
func.func @main(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %wq = graph.parameter "wq" #graph.gaussian<seed = 11, std = 0.05> : tensor<128x128xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 12, std = 0.05> : tensor<128x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 13, std = 0.05> : tensor<128x32xf16>
  %bq = graph.parameter "bq" #graph.gaussian<seed = 15, std = 0.05> : tensor<128xf16>
  %bk = graph.parameter "bk" #graph.gaussian<seed = 16, std = 0.05> : tensor<32xf16>
  %bv = graph.parameter "bv" #graph.gaussian<seed = 17, std = 0.05> : tensor<32xf16>
  %wo = graph.parameter "wo" #graph.gaussian<seed = 14, std = 0.05> : tensor<128x128xf16>
  %q0 = graph.matmul %x, %wq : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  %k0 = graph.matmul %x, %wk : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %v0 = graph.matmul %x, %wv : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  %q = graph.add %q0, %bq : (tensor<64x128xf16>, tensor<128xf16>) -> tensor<64x128xf16>
  %k = graph.add %k0, %bk : (tensor<64x32xf16>, tensor<32xf16>) -> tensor<64x32xf16>
  %v = graph.add %v0, %bv : (tensor<64x32xf16>, tensor<32xf16>) -> tensor<64x32xf16>
  %qh = graph.split_heads %q {heads = 8 : i64} : tensor<64x128xf16> -> tensor<8x64x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<64x32xf16> -> tensor<2x64x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "materialized"} : (tensor<8x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>) -> tensor<8x64x16xf16>
  %m = graph.merge_heads %a : tensor<8x64x16xf16> -> tensor<64x128xf16>
  %o = graph.matmul %m, %wo : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  func.return %o : tensor<64x128xf16>
}

// CHECK:      %bq_fused = tilemap.weight "wq+wk+wv.bias"
// CHECK-NEXT: %q0_fused_biased = tilemap.run "add"(%q0_fused, %bq_fused) {m = 16 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 16 : i64}
// CHECK-NOT:  tilemap.run "add"
// CHECK:      %q = tilemap.move %q0_fused_biased transfers
// CHECK:      -> !tilemap.buffer<8x16xf16, tiles = [0, 64], memory = interleaved>
// CHECK:      %qh = tilemap.view %q : !tilemap.buffer<8x16xf16, tiles = [0, 64], memory = interleaved> -> !tilemap.buffer<1x8x16xf16, tiles = [0, 64], memory = interleaved>
// CHECK:      %kh = tilemap.view %k
// CHECK:      %vh = tilemap.view %v

// EMU: numericalTest=PASS
