// The front of a GPT-2-style model on sim16: token embeddings looked up by i32 ids (an ONNX
// model's int64 input_ids, narrowed and range-checked by the host), plus position embeddings
// (constant after import: Gather(wpe, Range) folds), a layer norm and a projection.
//
// The lookup's grid is pinned to 4 row blocks x 4 column blocks, the way a vocabulary too large
// for the column blocks alone is planned (GPT-2's 50257 x 768 table on mk2 takes 8 x 128): the
// table stays a distributed resident weight, the ids are written to every tile of the grid, each
// tile's embedding_slice writes its rows or zeros, and plan.reduce sums the four row blocks'
// partials. Unpinned, 16 tiles split this table by columns alone (no partials).
//
//   ipu-run examples/embedding_small.mlir --target sim16
func.func @main(%ids: tensor<1x32xi32>) -> tensor<32x64xf16> {
  %wte = graph.parameter "wte" #graph.gaussian<seed = 1, std = 0.5> : tensor<512x64xf16>
  %tok = graph.gather %wte, %ids {axis = 0, plan.choice = #plan.choice<gather, grid = [4, 4]>} : (tensor<512x64xf16>, tensor<1x32xi32>) -> tensor<32x64xf16>
  %wpe = graph.parameter "wpe" #graph.gaussian<seed = 2, std = 0.1> : tensor<32x64xf16>
  %h = graph.add %tok, %wpe : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  %g = graph.parameter "ln.g" dense<1.0> : tensor<64xf16> : tensor<64xf16>
  %b = graph.parameter "ln.b" dense<0.0> : tensor<64xf16> : tensor<64xf16>
  %n = graph.layer_norm %h, %g, %b : (tensor<32x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %w = graph.parameter "proj" #graph.gaussian<seed = 3, std = 0.1> : tensor<64x64xf16>
  %y = graph.matmul %n, %w : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  func.return %y : tensor<32x64xf16>
}
