// RUN: ipu-opt %s -p 'plan-ops{target=sim16}' | filecheck %s
// RUN: ipu-opt %S/Inputs/plan-carry-pinned.mlir -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s --check-prefix=PIN
// RUN: ipu-opt %S/Inputs/plan-carry-pinned.mlir -p 'plan-decide{target=sim16}' | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %S/Inputs/plan-carry-pinned.mlir -p 'plan-decide{target=sim16}' | ipu-opt -p 'plan-materialize{target=sim16}' | filecheck %s --check-prefix=PIN
// RUN: ipu-run %s --target sim16 --checked --poison | filecheck %s --check-prefix=EMU
// RUN: not ipu-opt %S/Inputs/plan-carry-bad-count.mlir -p 'plan-ops{target=sim16 finalists=1}' 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not ipu-opt %S/Inputs/plan-carry-bad-layout.mlir -p 'plan-ops{target=sim16}' 2>&1 | filecheck %s --check-prefix=FIT
// RUN: not ipu-opt %S/Inputs/plan-carry-bad-op.mlir -p 'plan-decide{target=sim16}' 2>&1 | filecheck %s --check-prefix=OP

// A carried value the body reads in place (the norm) enters the loop in one layout and leaves
// it in another (the add's, the lhs's: the matmul's result): carried in its entry layout, the
// yield converts it back on every trip. The search plans its final states again two ways
// (`search._carried`, test_plan_carry.py): the loop carrying the value as the body yields it
// (`plan.carry` on the loop, the init converted once before it), and the sum planned in its
// rhs's layout (the argument's), so the yield is in the layout the loop carries. The second is
// cheapest here: the matmul's result moves to the rows the norm and the add read in place, and
// nothing is converted back (sim16: 30,642 cycles carried in the entry layout, 27,570).
func.func @main(%x: tensor<16x96xf16>, %w: tensor<96x96xf16>, %g: tensor<96xf16>) -> tensor<16x96xf16> {
  %y.out = graph.repeat 4 iter(%y.in = %x) : (tensor<16x96xf16>) {
    %n = graph.rms_norm %y.in, %g : (tensor<16x96xf16>, tensor<96xf16>) -> tensor<16x96xf16>
    %h = graph.matmul %n, %w : (tensor<16x96xf16>, tensor<96x96xf16>) -> tensor<16x96xf16>
    %s = graph.add %h, %y.in : (tensor<16x96xf16>, tensor<16x96xf16>) -> tensor<16x96xf16>
    graph.yield %s : tensor<16x96xf16>
  }
  func.return %y.out : tensor<16x96xf16>
}

// CHECK:      func.func @main_finalist_0(
// CHECK:      %y.out = plan.repeat 4 iter(%y.in = %x) : (!plan.tensor<16x96xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>>)
// CHECK-NEXT: %n = plan.rowwise "rms_norm" %y.in, %g
// CHECK-NOT:  carried layout
// CHECK:      %h_r = plan.rearrange %h {reason = "graph.add"}
// CHECK-NEXT: %s = plan.binary "add" %h_r, %y.in
// CHECK-NEXT: plan.yield %s : !plan.tensor<16x96xf16, #plan.layout<grid = [16, 1], split = {{\[\[}}0], [1]], memory = standard>>

// The same loop with its carried layout pinned (`Inputs/plan-carry-pinned.mlir`): honoured by
// the greedy plan, kept by plan-decide and honoured again by plan-materialize.
// PIN:        %[[INIT:.*]] = plan.rearrange %x2 {reason = "graph.repeat"} : {{.*}} -> !plan.tensor<16x96xf16, #plan.layout<grid = [1, 6, 2], split = {{\[\[}}0], [1, 2]], memory = standard>>
// PIN-NEXT:   %y.out = plan.repeat 4 iter(%y.in = %[[INIT]]) : (!plan.tensor<16x96xf16, #plan.layout<grid = [1, 6, 2], split = {{\[\[}}0], [1, 2]], memory = standard>>)
// PIN-NOT:    carried layout
// PIN:        } {plan.carry = [#plan.layout<grid = [1, 6, 2], split = {{\[\[}}0], [1, 2]], memory = standard>], value = "y.out"}
// DECIDE:     graph.repeat
// DECIDE:     } {plan.carry = [#plan.layout<grid = [1, 6, 2], split = {{\[\[}}0], [1, 2]], memory = standard>]}

// EMU: numericalTest=PASS
// EMU: totalCycles=27570

// COUNT: error: plan-ops: graph.repeat %y.out (op 0): plan.carry must list one #plan.layout<…> (or unit) per carried value (1)
// FIT: error: plan-ops: graph.repeat %y.out (op 0): carried value 0: pinned layout splits 3 axes; the result has 2
// OP: error: plan-ops: graph.add %s (op 1): plan.carry applies to graph.repeat only
