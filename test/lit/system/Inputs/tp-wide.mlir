// The transformer block of split-tensor-parallel.mlir at 64 tokens of 256 (4 heads of 64, FFN 1024):
// wide enough that on two sim16 chips a tensor-parallel split beats a pipeline for one
// micro-batch, not for many (parallel-auto.mlir).
func.func @main(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %g = graph.parameter "g" #graph.gaussian<seed = 1, std = 0.1> : tensor<256xf32>
  %wq = graph.parameter "wq" #graph.gaussian<seed = 2, std = 0.2> : tensor<256x256xf32>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 3, std = 0.2> : tensor<256x256xf32>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 4, std = 0.2> : tensor<256x256xf32>
  %bq = graph.parameter "bq" #graph.gaussian<seed = 5, std = 0.1> : tensor<256xf32>
  %wo = graph.parameter "wo" #graph.gaussian<seed = 6, std = 0.2> : tensor<256x256xf32>
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 7, std = 0.2> : tensor<256x1024xf32>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 8, std = 0.2> : tensor<1024x256xf32>
  %n = graph.layer_norm %x, %g, %g : (tensor<64x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %q0 = graph.matmul %n, %wq : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %q1 = graph.add %q0, %bq : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %k0 = graph.matmul %n, %wk : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %v0 = graph.matmul %n, %wv : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %q = graph.split_heads %q1 {heads = 4 : i64} : tensor<64x256xf32> -> tensor<4x64x64xf32>
  %k = graph.split_heads %k0 {heads = 4 : i64} : tensor<64x256xf32> -> tensor<4x64x64xf32>
  %v = graph.split_heads %v0 {heads = 4 : i64} : tensor<64x256xf32> -> tensor<4x64x64xf32>
  %a = graph.attention %q, %k, %v {form = "materialized", causal, scale = 0.125 : f64} : (tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %m = graph.merge_heads %a : tensor<4x64x64xf32> -> tensor<64x256xf32>
  %o = graph.matmul %m, %wo : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %h = graph.add %x, %o : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %n2 = graph.layer_norm %h, %g, %g : (tensor<64x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %f1 = graph.matmul %n2, %w1 : (tensor<64x256xf32>, tensor<256x1024xf32>) -> tensor<64x1024xf32>
  %f2 = graph.gelu %f1 : tensor<64x1024xf32> -> tensor<64x1024xf32>
  %f3 = graph.matmul %f2, %w2 : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32>
  %y = graph.add %h, %f3 : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  func.return %y : tensor<64x256xf32>
}
