// Four pre-norm transformer blocks (seq 1024, d_model 2048, 16 query heads, 4 KV heads,
// ffn 8192) under `graph.repeat`, kept structured through every level; the body's
// parameters are shared by all iterations (tied weights).
func.func @main(%x: tensor<1024x2048xf16>) -> tensor<1024x2048xf16> {
  %out = graph.repeat 4 iter(%carry = %x) : (tensor<1024x2048xf16>) {
    %g1 = graph.parameter "ln1_gamma" dense<1.0> : tensor<2048xf16> : tensor<2048xf16>
    %b1 = graph.parameter "ln1_beta" dense<0.0> : tensor<2048xf16> : tensor<2048xf16>
    %wq = graph.parameter "wq" #graph.gaussian<seed = 21, std = 0.02> : tensor<2048x2048xf16>
    %wk = graph.parameter "wk" #graph.gaussian<seed = 22, std = 0.02> : tensor<2048x512xf16>
    %wv = graph.parameter "wv" #graph.gaussian<seed = 23, std = 0.02> : tensor<2048x512xf16>
    %wo = graph.parameter "wo" #graph.gaussian<seed = 24, std = 0.02> : tensor<2048x2048xf16>
    %g2 = graph.parameter "ln2_gamma" dense<1.0> : tensor<2048xf16> : tensor<2048xf16>
    %b2 = graph.parameter "ln2_beta" dense<0.0> : tensor<2048xf16> : tensor<2048xf16>
    %w1 = graph.parameter "w1" #graph.gaussian<seed = 25, std = 0.02> : tensor<2048x8192xf16>
    %c1 = graph.parameter "c1" #graph.gaussian<seed = 26, std = 0.02> : tensor<8192xf16>
    %w2 = graph.parameter "w2" #graph.gaussian<seed = 27, std = 0.02> : tensor<8192x2048xf16>
    %c2 = graph.parameter "c2" #graph.gaussian<seed = 28, std = 0.02> : tensor<2048xf16>
    %n1 = graph.layer_norm %carry, %g1, %b1 : (tensor<1024x2048xf16>, tensor<2048xf16>, tensor<2048xf16>) -> tensor<1024x2048xf16>
    %q = graph.matmul %n1, %wq : (tensor<1024x2048xf16>, tensor<2048x2048xf16>) -> tensor<1024x2048xf16>
    %k = graph.matmul %n1, %wk : (tensor<1024x2048xf16>, tensor<2048x512xf16>) -> tensor<1024x512xf16>
    %v = graph.matmul %n1, %wv : (tensor<1024x2048xf16>, tensor<2048x512xf16>) -> tensor<1024x512xf16>
    %qh = graph.split_heads %q {heads = 16 : i64} : tensor<1024x2048xf16> -> tensor<16x1024x128xf16>
    %kh = graph.split_heads %k {heads = 4 : i64} : tensor<1024x512xf16> -> tensor<4x1024x128xf16>
    %vh = graph.split_heads %v {heads = 4 : i64} : tensor<1024x512xf16> -> tensor<4x1024x128xf16>
    %a = graph.attention %qh, %kh, %vh {form = "materialized", causal} : (tensor<16x1024x128xf16>, tensor<4x1024x128xf16>, tensor<4x1024x128xf16>) -> tensor<16x1024x128xf16>
    %m = graph.merge_heads %a : tensor<16x1024x128xf16> -> tensor<1024x2048xf16>
    %o = graph.matmul %m, %wo : (tensor<1024x2048xf16>, tensor<2048x2048xf16>) -> tensor<1024x2048xf16>
    %r1 = graph.add %carry, %o : (tensor<1024x2048xf16>, tensor<1024x2048xf16>) -> tensor<1024x2048xf16>
    %n2 = graph.layer_norm %r1, %g2, %b2 : (tensor<1024x2048xf16>, tensor<2048xf16>, tensor<2048xf16>) -> tensor<1024x2048xf16>
    %h = graph.matmul %n2, %w1 : (tensor<1024x2048xf16>, tensor<2048x8192xf16>) -> tensor<1024x8192xf16>
    %hb = graph.add %h, %c1 : (tensor<1024x8192xf16>, tensor<8192xf16>) -> tensor<1024x8192xf16>
    %ge = graph.gelu %hb : tensor<1024x8192xf16> -> tensor<1024x8192xf16>
    %f = graph.matmul %ge, %w2 : (tensor<1024x8192xf16>, tensor<8192x2048xf16>) -> tensor<1024x2048xf16>
    %fb = graph.add %f, %c2 : (tensor<1024x2048xf16>, tensor<2048xf16>) -> tensor<1024x2048xf16>
    %y = graph.add %r1, %fb : (tensor<1024x2048xf16>, tensor<1024x2048xf16>) -> tensor<1024x2048xf16>
    graph.yield %y : tensor<1024x2048xf16>
  }
  func.return %out : tensor<1024x2048xf16>
}
