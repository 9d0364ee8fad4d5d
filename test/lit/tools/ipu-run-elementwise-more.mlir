// RUN: ipu-run %s --target sim16 | filecheck %s

// Rounding, the sign, tan, the hyperbolic and inverse trigonometric functions, softplus and
// softsign on sim16 (each inverse function on values inside its domain: tanh keeps asin, acos and
// atanh inside (-1, 1), cosh keeps acosh at or above 1): the emulated kernels match the graph
// references at every checkpoint, and the cycles are the estimate.
func.func @main(%x: tensor<32x64xf32>) -> (tensor<32x64xf32>, tensor<32x64xf32>) {
  %fl = graph.floor %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %ce = graph.ceil %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %ro = graph.round %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %sg = graph.sign %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %t = graph.tanh %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %as = graph.asin %t : tensor<32x64xf32> -> tensor<32x64xf32>
  %ac = graph.acos %t : tensor<32x64xf32> -> tensor<32x64xf32>
  %at = graph.atanh %t : tensor<32x64xf32> -> tensor<32x64xf32>
  %ch = graph.cosh %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %ah = graph.acosh %ch : tensor<32x64xf32> -> tensor<32x64xf32>
  %sh = graph.sinh %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %ih = graph.asinh %sh : tensor<32x64xf32> -> tensor<32x64xf32>
  %tn = graph.tan %t : tensor<32x64xf32> -> tensor<32x64xf32>
  %an = graph.atan %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %sp = graph.softplus %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %ss = graph.softsign %x : tensor<32x64xf32> -> tensor<32x64xf32>
  %a1 = graph.add %fl, %ce : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %a2 = graph.add %a1, %ro : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %a3 = graph.add %a2, %sg : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %a4 = graph.add %as, %ac : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %a5 = graph.add %a4, %at : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %a6 = graph.add %a5, %ah : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %a7 = graph.add %a6, %ih : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %a8 = graph.add %a7, %tn : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %a9 = graph.add %a8, %an : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %b1 = graph.add %sp, %ss : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %y = graph.add %a9, %b1 : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  func.return %a3, %y : tensor<32x64xf32>, tensor<32x64xf32>
}

// CHECK: name=fl value=fl aspect=value samples=256 maximumAbsoluteError=0.000000
// CHECK: name=ce value=ce aspect=value samples=256 maximumAbsoluteError=0.000000
// CHECK: name=ro value=ro aspect=value samples=256 maximumAbsoluteError=0.000000
// CHECK: name=sg value=sg aspect=value samples=256 maximumAbsoluteError=0.000000
// CHECK: name=as value=as aspect=value samples=256
// CHECK: name=ac value=ac aspect=value samples=256
// CHECK: name=at value=at aspect=value samples=256
// CHECK: name=ah value=ah aspect=value samples=256
// CHECK: name=ih value=ih aspect=value samples=256
// CHECK: name=tn value=tn aspect=value samples=256
// CHECK: name=sp value=sp aspect=value samples=256
// CHECK: name=ss value=ss aspect=value samples=256
// CHECK: numericalTest=PASS
// CHECK: estimatedOverEmulated=1.0000
