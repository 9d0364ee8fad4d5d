// 32 query heads need 32 tiles; sim16 has 16.
func.func @main(%q: tensor<32x8x4xf16>) -> tensor<32x8x4xf16> {
  %y = graph.attention %q, %q, %q {form = "materialized"} : (tensor<32x8x4xf16>, tensor<32x8x4xf16>, tensor<32x8x4xf16>) -> tensor<32x8x4xf16>
  func.return %y : tensor<32x8x4xf16>
}
