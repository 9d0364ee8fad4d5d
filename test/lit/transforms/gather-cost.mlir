// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 --log-level info 2>&1 >/dev/null | filecheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | ipu-opt -p 'plan-materialize{target=sim16}' | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16}' | filecheck %s --check-prefix=SEARCH
// RUN: not ipu-opt %s -p 'plan-materialize{target=sim16}' 2>&1 | filecheck %s --check-prefix=UNDECIDED

// The planner chooses an embedding lookup's grid by cost. A small table is split by columns only
// (16 column blocks of [64, 2]: no partials, no reduce). A narrow table whose column blocks (at
// most 4 of 2 columns) would hold more than the weights' share of tile memory (0.12 of 624 KiB:
// 32768 rows x 2 columns of f16 is 128 KiB) is also split by rows, and plan.reduce sums the row
// blocks' partials.
func.func @main(%ids: tensor<16xi32>) -> (tensor<16x32xf16>, tensor<16x8xf16>) {
  %small = graph.parameter "small" #graph.gaussian<seed = 1, std = 0.5> : tensor<64x32xf16>
  %x = graph.gather %small, %ids {axis = 0} : (tensor<64x32xf16>, tensor<16xi32>) -> tensor<16x32xf16>
  %big = graph.parameter "big" #graph.gaussian<seed = 2, std = 0.5> : tensor<32768x8xf16>
  %y = graph.gather %big, %ids {axis = 0} : (tensor<32768x8xf16>, tensor<16xi32>) -> tensor<16x8xf16>
  func.return %x, %y : tensor<16x32xf16>, tensor<16x8xf16>
}

// CHECK:     %small = plan.parameter "small" {{.*}} : !plan.tensor<64x32xf16, #plan.layout<grid = [1, 16], split = [[0], [1]], memory = standard>>
// CHECK:     %x = plan.embedding_slice %small, %ids {value = "x"} : ({{.*}}) -> !plan.tensor<16x32xf16, #plan.layout<grid = [1, 16], split = [[], [1]], memory = standard>>
// CHECK:     %big = plan.parameter "big" {{.*}} : !plan.tensor<32768x8xf16, #plan.layout<grid = [[[PV:[0-9]+]], [[PD:[0-9]+]]], split = [[0], [1]], memory = standard>>
// CHECK:     %ids_r = plan.rearrange %ids
// CHECK:     %y_partial = plan.embedding_slice %big, %ids_r : ({{.*}}) -> !plan.tensor<16x8xf32, #plan.layout<grid = [[[PV]], [[PD]]], split = [[], [1]], partial = 0, memory = standard>>
// CHECK-NEXT: %y = plan.reduce %y_partial {value = "y"}

// LOG: planned operation {{.*}}grid=1x16
// LOG: planned operation {{.*}}grid=2x4 {{.*}}table_bytes_per_tile=65536

// plan-decide records each lookup's grid as a decision, which plan-materialize builds; the
// whole-graph search (finalists > 1) may try other fitting grids and keeps the cheapest plan.
// DECIDE: graph.gather %small, %ids {axis = 0 : i64, plan.choice = #plan.choice<gather, grid = [1, 16]>}
// DECIDE: graph.gather %big, %ids {axis = 0 : i64, plan.choice = #plan.choice<gather, grid = [2, 4]>}
// SEARCH: plan.embedding_slice %small
// SEARCH: plan.embedding_slice %big
// UNDECIDED: error: plan-materialize: graph.gather %x (op 1) has no plan.choice; run plan-decide first
