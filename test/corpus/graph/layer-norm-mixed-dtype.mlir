// An f16 input normalized with f32 scale and shift (it verified and computed wrongly)
func.func @main(%x: tensor<8x16xf16>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf16> {
  %y = graph.layer_norm %x, %g, %b : (tensor<8x16xf16>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
