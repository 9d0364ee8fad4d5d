// RUN: ipu-opt %s -p 'plan-ops{target=sim64 finalists=1}' --target sim64 --log-level info 2>&1 | filecheck %s
// RUN: ipu-opt %s -p plan-ops --target sim64 | filecheck %s --check-prefix=SEARCH
// RUN: ipu-run %s --target sim64 | filecheck %s --check-prefix=EMU

// Six [768x768] matmuls, a [768x3072] / [3072x768] feed-forward pair and a [768x8192] output
// projection at 128 rows on sim64: every weight stays live throughout, so the cheapest plan's
// working sets do not fit beside them (the estimate's peak, exchange rows and code exceed the
// tile). plan-ops then leans the matmul under the most memory pressure into a serial gemm with a
// capped working set, one at a time, until the plan fits: here the feed-forward up-projection,
// the down-projection, then the output projection. The [768x768] matmuls keep their cheapest
// grid (a K-split plan.gemm). (Under the PopLibs-derived kernel costs the cheapest plan of the
// earlier eleven [768x768] layers + output projection already fits, its later weights fetched
// from distributed homes, so nothing was leaned; the feed-forward pair brings the pressure back.)

// CHECK:      leaned matmuls to fit leaned=13:{{[0-9]+}},15:{{[0-9]+}},17:{{[0-9]+}} {{.*}} peak_total_bytes=
// CHECK:      %h0_partial = plan.gemm %x, %w0
// CHECK:      %h5_partial = plan.gemm
// CHECK:      %hup = plan.gemm_serial %{{.*}}, %wup {k_steps = {{[0-9]+}} : i64, value = "hup"}
// CHECK:      %hdown = plan.gemm_serial %{{.*}}, %wdown {k_steps = {{[0-9]+}} : i64, value = "hdown"}
// CHECK:      %y = plan.gemm_serial %{{.*}}, %head {k_steps = {{[0-9]+}} : i64, value = "y"}

// The search starts from the leaned plan and keeps the leaning in every plan it tries.
// SEARCH:     %hup = plan.gemm_serial
// SEARCH:     %hdown = plan.gemm_serial
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
  %wup = graph.parameter "wup" #graph.gaussian<seed = 7, std = 0.02> : tensor<768x3072xf16>
  %hup = graph.matmul %h5, %wup : (tensor<128x768xf16>, tensor<768x3072xf16>) -> tensor<128x3072xf16>
  %wdown = graph.parameter "wdown" #graph.gaussian<seed = 8, std = 0.02> : tensor<3072x768xf16>
  %hdown = graph.matmul %hup, %wdown : (tensor<128x3072xf16>, tensor<3072x768xf16>) -> tensor<128x768xf16>
  %head = graph.parameter "head" #graph.gaussian<seed = 99, std = 0.02> : tensor<768x8192xf16>
  %y = graph.matmul %hdown, %head : (tensor<128x768xf16>, tensor<768x8192xf16>) -> tensor<128x8192xf16>
  func.return %y : tensor<128x8192xf16>
}
