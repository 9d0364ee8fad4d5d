// A causal streamed attention the stripe-causal-attention pass stripes on sim64 (4 query heads:
// 16 query blocks a head, 500 keys padded to 512 query rows).
func.func @main(%q: tensor<4x500x32xf16>, %k: tensor<2x500x32xf16>, %v: tensor<2x500x32xf16>) -> tensor<4x500x32xf16> {
  %a = graph.attention %q, %k, %v {form = "streamed", causal} : (tensor<4x500x32xf16>, tensor<2x500x32xf16>, tensor<2x500x32xf16>) -> tensor<4x500x32xf16>
  func.return %a : tensor<4x500x32xf16>
}
