func.func @main(%q: tensor<4x512x32xf16>, %k: tensor<2x512x32xf16>, %v: tensor<2x512x32xf16>) -> tensor<4x512x32xf16> {
  %a = graph.attention %q, %k, %v {form = "materialized", causal} : (tensor<4x512x32xf16>, tensor<2x512x32xf16>, tensor<2x512x32xf16>) -> tensor<4x512x32xf16>
  func.return %a : tensor<4x512x32xf16>
}
