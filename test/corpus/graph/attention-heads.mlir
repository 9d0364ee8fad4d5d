func.func @main(%q: tensor<3x8x4xf16>, %k: tensor<2x8x4xf16>) -> tensor<3x8x4xf16> {
  %y = graph.attention %q, %k, %k {form = "materialized"} : (tensor<3x8x4xf16>, tensor<2x8x4xf16>, tensor<2x8x4xf16>) -> tensor<3x8x4xf16>
  func.return %y : tensor<3x8x4xf16>
}
