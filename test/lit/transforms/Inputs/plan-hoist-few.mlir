// The second half of plan-hoist.mlir: the same loop with 1 trip.

func.func @few(%x2: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %h = graph.parameter "g2" #graph.gaussian<seed = 1, std = 0.5> : tensor<64xf32>
  %e = graph.parameter "b2" #graph.gaussian<seed = 2, std = 0.5> : tensor<64xf32>
  %s = graph.add %h, %e : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %z = graph.repeat 1 iter(%d = %x2) : (tensor<16x64xf32>) {
    %m = graph.layer_norm %d, %h, %e {epsilon = 1.0e-05 : f32} : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
    graph.yield %m : tensor<16x64xf32>
  }
  func.return %z, %s : tensor<16x64xf32>, tensor<64xf32>
}
