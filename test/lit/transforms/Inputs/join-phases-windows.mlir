// Three windows of one product sampled by checkpoints, run in one exchange (join-phases.mlir runs it).
func.func @main(%x: tensor<64x96xf16>, %w: tensor<96x96xf16>) -> (tensor<64x32xf16>, tensor<64x32xf16>, tensor<64x32xf16>) {
  %a = graph.matmul %x, %w : (tensor<64x96xf16>, tensor<96x96xf16>) -> tensor<64x96xf16>
  %q = graph.slice %a {starts = array<i64: 0, 0>} : tensor<64x96xf16> -> tensor<64x32xf16>
  %k = graph.slice %a {starts = array<i64: 0, 32>} : tensor<64x96xf16> -> tensor<64x32xf16>
  %v = graph.slice %a {starts = array<i64: 0, 64>} : tensor<64x96xf16> -> tensor<64x32xf16>
  %qr = graph.relu %q : tensor<64x32xf16> -> tensor<64x32xf16>
  %kr = graph.relu %k : tensor<64x32xf16> -> tensor<64x32xf16>
  %vr = graph.relu %v : tensor<64x32xf16> -> tensor<64x32xf16>
  func.return %qr, %kr, %vr : tensor<64x32xf16>, tensor<64x32xf16>, tensor<64x32xf16>
}
