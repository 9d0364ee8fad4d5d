// RUN: ipu-run %s --target sim16 | filecheck %s

// SiLU and a logistic output layer on sim16: the sigmoid kernel's emulated values match
// graph.sigmoid's reference at every checkpoint, and its cycles are the compiler's estimate.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x128xf32> {
  %w = graph.parameter "w" #graph.gaussian<seed = 5, std = 0.05> : tensor<256x128xf16>
  %h = graph.matmul %x, %w : (tensor<64x256xf16>, tensor<256x128xf16>) -> tensor<64x128xf16>
  %s = graph.sigmoid %h : tensor<64x128xf16> -> tensor<64x128xf16>
  %y = graph.mul %h, %s : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %c = graph.cast %y : tensor<64x128xf16> -> tensor<64x128xf32>
  %p = graph.sigmoid %c : tensor<64x128xf32> -> tensor<64x128xf32>
  func.return %p : tensor<64x128xf32>
}

// CHECK: name=s value=s aspect=value samples=256 maximumAbsoluteError=
// CHECK: name=p value=p aspect=value samples=256 maximumAbsoluteError=
// CHECK: output=output0 samples=8192
// CHECK: numericalTest=PASS
// CHECK: estimatedOverEmulated=1.0000
