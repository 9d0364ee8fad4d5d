// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A ReLU of an add nothing else reads (a bias, a residual) is one pass over the rows: the add's
// plan op becomes `add_relu` and carries the ReLU's value (its checkpoint); an add read twice
// keeps its own op and the ReLU its own.
// CHECK-LABEL: func.func @main
// CHECK:       %y = plan.binary "add_relu" %h, %b {value = "y"}
// CHECK-NOT:   plan.unary
// CHECK:       %s = plan.binary "add" %y, %{{.*}} {value = "s"}
// CHECK-NEXT:  %r = plan.unary "relu" %s {value = "r"}
// CHECK-NOT:   add_relu
// EMU:         numericalTest=PASS
func.func @main(%x: tensor<64x32xf16>) -> (tensor<64x32xf16>, tensor<64x32xf16>) {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<32x32xf16>
  %b = graph.parameter "b" #graph.gaussian<seed = 2, std = 0.5> : tensor<32xf16>
  %h = graph.matmul %x, %w : (tensor<64x32xf16>, tensor<32x32xf16>) -> tensor<64x32xf16>
  %a = graph.add %h, %b : (tensor<64x32xf16>, tensor<32xf16>) -> tensor<64x32xf16>
  %y = graph.relu %a : tensor<64x32xf16> -> tensor<64x32xf16>
  %s = graph.add %y, %x : (tensor<64x32xf16>, tensor<64x32xf16>) -> tensor<64x32xf16>
  %r = graph.relu %s : tensor<64x32xf16> -> tensor<64x32xf16>
  %m = graph.mul %s, %x : (tensor<64x32xf16>, tensor<64x32xf16>) -> tensor<64x32xf16>
  func.return %r, %m : tensor<64x32xf16>, tensor<64x32xf16>
}
