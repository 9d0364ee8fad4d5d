func.func @main(%q: tensor<2x8x4xf16>, %k: tensor<2x16x4xf16>) -> tensor<2x8x4xf16> {
  %y = graph.attention %q, %k, %k {form = "streamed", causal} : (tensor<2x8x4xf16>, tensor<2x16x4xf16>, tensor<2x16x4xf16>) -> tensor<2x8x4xf16>
  func.return %y : tensor<2x8x4xf16>
}
