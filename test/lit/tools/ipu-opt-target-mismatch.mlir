// RUN: not ipu-opt %examples/mlp_small.mlir -p 'plan-ops{target=sim16},map-tiles,schedule-exchange{target=mk2},place-storage{target=mk2},lower-to-tasm{target=mk2}' -o %t.mlir 2>&1 | filecheck %s
// RUN: not test -e %t.mlir
// RUN: ipu-opt %examples/mlp_small.mlir -p 'plan-ops{target=sim16 finalists=1},map-tiles' -o %t.tiles.mlir
// RUN: not ipu-opt -p 'place-storage{target=mk2}' < %t.tiles.mlir 2>&1 | filecheck %s --check-prefix=PLACE
// RUN: not ipu-opt -p 'select-finalist{target=sim64}' < %t.tiles.mlir 2>&1 | filecheck %s --check-prefix=SELECT
// RUN: ipu-opt %examples/mlp_small.mlir -p 'plan-decide{target=sim16}' | tee %t.decided.mlir | filecheck %s --check-prefix=DECIDED
// RUN: not ipu-opt -p 'plan-materialize{target=sim64}' < %t.decided.mlir 2>&1 | filecheck %s --check-prefix=MATERIALIZE
// RUN: not ipu-opt -p 'screen-tiles{target=mk2}' < %t.tiles.mlir 2>&1 | filecheck %s --check-prefix=SCREEN

// A 16-tile plan handed to passes told mk2 once emitted a mk2 package silently; the target now
// lives in the module (#ipu.target, set by plan-ops), and a pass option that contradicts it is an
// error naming both, with no output written.

// CHECK-NOT: Traceback
// CHECK: error: schedule-exchange: option target=mk2 contradicts the module's target sim16 (ipu.target = #ipu.target<"sim16">)
// CHECK-NOT: Traceback
// PLACE: error: place-storage: option target=mk2 contradicts the module's target sim16
// SELECT: error: select-finalist: option target=sim64 contradicts the module's target sim16
// plan-decide records the target as plan-ops does; plan-materialize and screen-tiles read it.
// DECIDED: builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
// DECIDED: plan.choice = #plan.choice<gemm
// MATERIALIZE: error: plan-materialize: option target=sim64 contradicts the module's target sim16
// SCREEN: error: screen-tiles: option target=mk2 contradicts the module's target sim16
