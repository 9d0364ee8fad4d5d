// GPT-2's token embedding at full size on mk2: 128 token ids looked up in the 50257 x 768 f16
// table (77 MB: too large for any tile, and for 64 tiles together), then a 768 x 768 projection.
// The planner keeps the table a distributed resident weight on an 8 x 128 grid (row blocks of
// 6283 rows x 6 columns, 75 KB a tile), writes the ids to those 1024 tiles, and sums the eight
// row blocks' f32 partials with plan.reduce:
//
//   ipu-run examples/gpt2_embedding.mlir              # numericalTest=PASS, totalCycles=22077 (about 12 s)
func.func @main(%ids: tensor<1x128xi32>) -> tensor<128x768xf16> {
  %wte = graph.parameter "wte" #graph.gaussian<seed = 1, std = 0.02> : tensor<50257x768xf16>
  %x = graph.gather %wte, %ids {axis = 0} : (tensor<50257x768xf16>, tensor<1x128xi32>) -> tensor<128x768xf16>
  %w = graph.parameter "w" #graph.gaussian<seed = 2, std = 0.02> : tensor<768x768xf16>
  %y = graph.matmul %x, %w : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  func.return %y : tensor<128x768xf16>
}
