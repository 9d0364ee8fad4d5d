// RUN: ipu-run %s --target sim16 | filecheck %s

// The elementwise ops of real exports on sim16 (f32, and SiLU in f16): every kernel's emulated
// values match its graph op's reference at every checkpoint, and the cycles are the estimate.
func.func @main(%x: tensor<32x64xf32>, %y: tensor<32x64xf16>) -> (tensor<32x64xf32>, tensor<32x64xf16>) {
  %a = graph.abs %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %s = graph.sqrt %a : tensor<32x64xf32> -> tensor<32x64xf32>
  %r = graph.rsqrt %a : tensor<32x64xf32> -> tensor<32x64xf32>
  %c = graph.reciprocal %r : tensor<32x64xf32> -> tensor<32x64xf32>
  %l = graph.log %c : tensor<32x64xf32> -> tensor<32x64xf32>
  %n = graph.neg %l : tensor<32x64xf32> -> tensor<32x64xf32>
  %e = graph.erf %n : tensor<32x64xf32> -> tensor<32x64xf32>
  %si = graph.sin %e : tensor<32x64xf32> -> tensor<32x64xf32>
  %co = graph.cos %s : tensor<32x64xf32> -> tensor<32x64xf32>
  %m = graph.min %si, %co : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %d = graph.div %m, %s : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %h = graph.silu %y : tensor<32x64xf16> -> tensor<32x64xf16>
  func.return %d, %h : tensor<32x64xf32>, tensor<32x64xf16>
}

// CHECK: name=a value=a aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=s value=s aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=r value=r aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=c value=c aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=l value=l aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=n value=n aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=e value=e aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=si value=si aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=co value=co aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=m value=m aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=d value=d aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=h value=h aspect=value samples=256 maximumAbsoluteError=
// CHECK: output=output0 samples=2048
// CHECK: output=output1 samples=2048
// CHECK: numericalTest=PASS
// CHECK: estimatedOverEmulated=1.0000
