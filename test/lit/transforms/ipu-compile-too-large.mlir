// RUN: not ipu-opt %s -p ipu-compile --target sim16 2>&1 | filecheck %s
// RUN: not ipu-opt %s -p plan-ops --target sim16 2>&1 | filecheck %s

// A 4096x8192 by 8192x8192 fp16 matmul cannot fit 16 tiles of 624 KiB at any grid.
func.func @main(%x: tensor<4096x8192xf16>) -> tensor<4096x8192xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<8192x8192xf16>
  %y = graph.matmul %x, %w : (tensor<4096x8192xf16>, tensor<8192x8192xf16>) -> tensor<4096x8192xf16>
  func.return %y : tensor<4096x8192xf16>
}

// CHECK-NOT: Traceback
// CHECK: error: model does not fit target sim16: matmul [4096x8192] x [8192x8192] needs at least {{[0-9]+}} bytes per tile (grid {{[0-9]+}}x{{[0-9]+}}x{{[0-9]+}}); per-op budget is {{[0-9]+}} of 638976 bytes (0 held by live values)
// CHECK-NOT: Traceback
