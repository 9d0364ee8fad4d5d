func.func @main(%q: tensor<2x8x4xf16>) -> tensor<2x8x4xf16> {
  %y = graph.attention %q, %q, %q {form = "flash"} : (tensor<2x8x4xf16>, tensor<2x8x4xf16>, tensor<2x8x4xf16>) -> tensor<2x8x4xf16>
  func.return %y : tensor<2x8x4xf16>
}
