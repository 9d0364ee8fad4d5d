// MLP block: 512 tokens, d_model 2048, ffn 8192, fp16 storage, fp32 accumulation.
func.func @main(%x: tensor<512x2048xf16>) -> tensor<512x2048xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<2048x8192xf16>
  %b1 = graph.parameter "b1" #graph.gaussian<seed = 2, std = 0.02> : tensor<8192xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<8192x2048xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<2048xf16>
  %h = graph.matmul %x, %w1 : (tensor<512x2048xf16>, tensor<2048x8192xf16>) -> tensor<512x8192xf16>
  %hb = graph.add %h, %b1 : (tensor<512x8192xf16>, tensor<8192xf16>) -> tensor<512x8192xf16>
  %g = graph.gelu %hb : tensor<512x8192xf16> -> tensor<512x8192xf16>
  %y = graph.matmul %g, %w2 : (tensor<512x8192xf16>, tensor<8192x2048xf16>) -> tensor<512x2048xf16>
  %yb = graph.add %y, %b2 : (tensor<512x2048xf16>, tensor<2048xf16>) -> tensor<512x2048xf16>
  func.return %yb : tensor<512x2048xf16>
}
