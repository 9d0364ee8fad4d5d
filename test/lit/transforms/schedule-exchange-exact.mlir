// RUN: ipu-opt %s -p 'schedule-exchange{target=sim16 cpsat=false}' --target sim16 | filecheck %s
// RUN: ipu-opt %s -p 'schedule-exchange{target=sim16 cpsat=false}' --target sim16 --log-level info -o %t 2>&1 | filecheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'schedule-exchange{target=sim16}' --target sim16 --log-level info -o %t 2>&1 | filecheck %s --check-prefix=CPSAT

// A unicast phase no list schedule fits in its bound: tile 1 sends 4 + 2 words, tile 3 receives
// 3 + 2, tile 1 receives 3 + 3; every list order ends at cycle 9 or later, the bound is 6.
// The exact preemptive scheduler reaches 6 by cutting the 4-word transfer 1 -> 2 into two runs
// (1 word at cycle 0, 3 words at cycle 3): 6 runs for 5 transfers. By default CP-SAT then looks
// for a schedule at the bound without preemption, finds one and proves it optimal.
func.func @f(%b: !tilemap.buffer<1x32xf32, tiles = [0, 4], memory = standard>) {
  %m = tilemap.move %b transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 0, 12, 3, 0, 12, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0], [1, 0, 16, 2, 0, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0], [1, 0, 8, 3, 12, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0], [0, 0, 12, 1, 0, 12, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0], [2, 0, 12, 1, 12, 12, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0]> : !tilemap.buffer<1x32xf32, tiles = [0, 4], memory = standard> -> !tilemap.buffer<1x32xf32, tiles = [0, 4], memory = standard>
  // The same phase with its source 64 bytes further on: the cached schedule is relocated and
  // re-validated, not recomputed.
  %n = tilemap.move %m transfers = #table.transfers<[src_tile, src_address, src_stride, dst_tile, dst_address, dst_stride, rows, row_words, par_count, par_src_step, par_dst_step, mc_count, mc_step, par_src_offset_step, par_dst_offset_step, par_time_step] [0, 64, 12, 3, 0, 12, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0], [1, 64, 16, 2, 0, 16, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0], [1, 64, 8, 3, 12, 8, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0], [0, 64, 12, 1, 0, 12, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0], [2, 64, 12, 1, 12, 12, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0]> : !tilemap.buffer<1x32xf32, tiles = [0, 4], memory = standard> -> !tilemap.buffer<1x32xf32, tiles = [0, 4], memory = standard>
  func.return
}

// CHECK-NOT:  tilemap.move
// CHECK:      %m = exchange.phase %b transfers = #table.transfers<[start, src_tile, {{.*}}]
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\]}}> {lower_bound = 6 : i64, horizon = 6 : i64, scheduler = "exact-preemptive", logical_transfers = 5 : i64, route_cycles = 108 : i64}
// CHECK:      %n = exchange.phase %m transfers = #table.transfers<[start, src_tile, {{.*}}]
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\],$}}
// CHECK-NEXT: {{^ +\[[-0-9, ]+\]}}> {lower_bound = 6 : i64, horizon = 6 : i64, scheduler = "reused-exact-preemptive", logical_transfers = 5 : i64, route_cycles = 108 : i64}

// LOG: optimized physical exchange schedule phase=0 transfers=5 families=6 endpoint_lower_bound=6 selected_horizon=6 lower_bound_gap=0 route_cycles=108 runs_per_transfer=1.200 selected_kind=exact-preemptive
// LOG: optimized physical exchange schedule phase=1 transfers=5 families=6 endpoint_lower_bound=6 selected_horizon=6 lower_bound_gap=0 route_cycles=108 runs_per_transfer=1.200 selected_kind=reused-exact-preemptive

// CPSAT: optimized physical exchange schedule phase=0 transfers=5 families=5 endpoint_lower_bound=6 selected_horizon=6 lower_bound_gap=0 route_cycles=108 runs_per_transfer=1.000 selected_kind=cp-sat-optimal
// CPSAT: optimized physical exchange schedule phase=1 transfers=5 families=5 endpoint_lower_bound=6 selected_horizon=6 lower_bound_gap=0 route_cycles=108 runs_per_transfer=1.000 selected_kind=reused-cp-sat-optimal
