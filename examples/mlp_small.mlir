// MLP block: 64 tokens, d_model 256, ffn 1024 (the sim-target version of mlp.mlir), fp16 storage, fp32 accumulation.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x1024xf16>
  %b1 = graph.parameter "b1" #graph.gaussian<seed = 2, std = 0.02> : tensor<1024xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.02> : tensor<256xf16>
  %h = graph.matmul %x, %w1 : (tensor<64x256xf16>, tensor<256x1024xf16>) -> tensor<64x1024xf16>
  %hb = graph.add %h, %b1 : (tensor<64x1024xf16>, tensor<1024xf16>) -> tensor<64x1024xf16>
  %g = graph.gelu %hb : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  %yb = graph.add %y, %b2 : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  func.return %yb : tensor<64x256xf16>
}
