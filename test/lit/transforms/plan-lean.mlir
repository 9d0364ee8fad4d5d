// RUN: ipu-opt %s -p 'plan-ops{target=sim64 finalists=1}' --target sim64 --log-level info 2>&1 | filecheck %s
// RUN: ipu-opt %s -p plan-ops --target sim64 | filecheck %s --check-prefix=SEARCH
// RUN: ipu-run %s --target sim64 | filecheck %s --check-prefix=EMU

// Eleven [768x768] matmuls and a [768x8192] output projection at 128 rows on sim64: every weight
// stays live throughout, so the cheapest plan's working sets do not fit beside them (the
// estimate's peak, exchange rows and code exceed the tile). plan-ops then leans the matmul under
// the most memory pressure into a serial gemm with a capped working set, one at a time, until the
// plan fits: here the output projection, then the first matmul. The rest keep their cheapest grid.

// CHECK:      leaned matmuls to fit leaned=1:{{[0-9]+}},23:{{[0-9]+}} {{.*}} peak_total_bytes=
// CHECK:      %h0 = plan.gemm_serial %x, %w0 {k_steps = {{[0-9]+}} : i64, value = "h0"}
// CHECK:      %h1_partial = plan.gemm
// CHECK:      %y = plan.gemm_serial %{{.*}}, %head {k_steps = {{[0-9]+}} : i64, value = "y"}

// The search starts from the leaned plan and keeps the leaning in every plan it tries.
// SEARCH:     %h0 = plan.gemm_serial
// SEARCH:     %y = plan.gemm_serial

// EMU:        numericalTest=PASS

func.func @main(%x: tensor<128x768xf16>) -> tensor<128x8192xf16> {
  %w0 = graph.parameter "w0" #graph.gaussian<seed = 1, std = 0.02> : tensor<768x768xf16>
  %h0 = graph.matmul %x, %w0 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 2, std = 0.02> : tensor<768x768xf16>
  %h1 = graph.matmul %h0, %w1 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.02> : tensor<768x768xf16>
  %h2 = graph.matmul %h1, %w2 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w3 = graph.parameter "w3" #graph.gaussian<seed = 4, std = 0.02> : tensor<768x768xf16>
  %h3 = graph.matmul %h2, %w3 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w4 = graph.parameter "w4" #graph.gaussian<seed = 5, std = 0.02> : tensor<768x768xf16>
  %h4 = graph.matmul %h3, %w4 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w5 = graph.parameter "w5" #graph.gaussian<seed = 6, std = 0.02> : tensor<768x768xf16>
  %h5 = graph.matmul %h4, %w5 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w6 = graph.parameter "w6" #graph.gaussian<seed = 7, std = 0.02> : tensor<768x768xf16>
  %h6 = graph.matmul %h5, %w6 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w7 = graph.parameter "w7" #graph.gaussian<seed = 8, std = 0.02> : tensor<768x768xf16>
  %h7 = graph.matmul %h6, %w7 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w8 = graph.parameter "w8" #graph.gaussian<seed = 9, std = 0.02> : tensor<768x768xf16>
  %h8 = graph.matmul %h7, %w8 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w9 = graph.parameter "w9" #graph.gaussian<seed = 10, std = 0.02> : tensor<768x768xf16>
  %h9 = graph.matmul %h8, %w9 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %w10 = graph.parameter "w10" #graph.gaussian<seed = 11, std = 0.02> : tensor<768x768xf16>
  %h10 = graph.matmul %h9, %w10 : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  %head = graph.parameter "head" #graph.gaussian<seed = 99, std = 0.02> : tensor<768x8192xf16>
  %y = graph.matmul %h10, %head : (tensor<128x768xf16>, tensor<768x8192xf16>) -> tensor<128x8192xf16>
  func.return %y : tensor<128x8192xf16>
}