// A projection whose result a softmax reads whole, then an FFN that splits.
func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %w0 = graph.parameter "w0" #graph.gaussian<seed = 1, std = 0.2> : tensor<32x32xf32>
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 2, std = 0.2> : tensor<32x64xf32>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.2> : tensor<64x32xf32>
  %p = graph.matmul %x, %w0 : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %s = graph.softmax %p : tensor<16x32xf32> -> tensor<16x32xf32>
  %f1 = graph.matmul %s, %w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %f2 = graph.gelu %f1 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f3 = graph.matmul %f2, %w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  func.return %f3 : tensor<16x32xf32>
}
