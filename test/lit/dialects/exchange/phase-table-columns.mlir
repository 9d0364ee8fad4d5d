// RUN: ipu-opt %s --split-input-file --verify-diagnostics | filecheck %s


func.func @f(%b: !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard>) {
  %c = exchange.phase 0 %b transfers = dense<[[0, 0, 8, 0, 0, 8, 1, 2, 4, 1, 1, 1, 1, 0, 0, 0]]> : tensor<1x16xi32> {lower_bound = 2 : i64, horizon = 100 : i64, scheduler = "greedy-longest-first"} : !tilemap.buffer<1x2xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<2x2xf32, tiles = [0, 16], memory = standard>
  func.return
}
// CHECK: Operation does not verify: exchange.phase: transfer table must be [n, 17]
