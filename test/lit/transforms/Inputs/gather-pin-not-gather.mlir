func.func @main(%ids: tensor<8xi32>) -> tensor<8x32xf16> {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0, plan.choice = #plan.choice<gemm_serial, grid = [4, 4]>} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x32xf16>
  func.return %x : tensor<8x32xf16>
}
