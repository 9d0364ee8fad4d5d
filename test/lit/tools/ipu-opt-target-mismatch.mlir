// RUN: not ipu-opt %examples/mlp_small.mlir -p 'plan-ops{target=sim16},map-tiles,schedule-exchange{target=mk2},place-storage{target=mk2},lower-to-tasm{target=mk2}' -o %t.mlir 2>&1 | filecheck %s
// RUN: not test -e %t.mlir
// RUN: ipu-opt %examples/mlp_small.mlir -p 'plan-ops{target=sim16 finalists=1},map-tiles' | not ipu-opt -p 'place-storage{target=mk2}' 2>&1 | filecheck %s --check-prefix=PLACE
// RUN: ipu-opt %examples/mlp_small.mlir -p 'plan-ops{target=sim16 finalists=1}' | not ipu-opt -p 'select-finalist{target=sim64}' 2>&1 | filecheck %s --check-prefix=SELECT

// A 16-tile plan handed to passes told mk2 once emitted a mk2 package silently; the target now
// lives in the module (#ipu.target, set by plan-ops), and a pass option that contradicts it is an
// error naming both, with no output written.

// CHECK-NOT: Traceback
// CHECK: error: schedule-exchange: option target=mk2 contradicts the module's target sim16 (ipu.target = #ipu.target<"sim16">)
// CHECK-NOT: Traceback
// PLACE: error: place-storage: option target=mk2 contradicts the module's target sim16
// SELECT: error: select-finalist: option target=sim64 contradicts the module's target sim16
