// RUN: ipu-opt %s -p 'plan-ops{finalists=1}' --target sim16 | filecheck %s --check-prefix=OPTIONS
// RUN: ipu-opt %s -p 'plan-ops{target=sim64 finalists=1}' | filecheck %s --check-prefix=EXPLICIT
// RUN: ipu-opt %s -p plan-ops --target sim64 | filecheck %s --check-prefix=BARE
// RUN: ipu-opt %s -p 'plan-ops{finalists=1}' | filecheck %s --check-prefix=DEFAULT
// RUN: ipu-opt %s -p 'plan-ops{finalists=1}' --target sim16 | ipu-opt -p map-tiles | filecheck %s --check-prefix=KEPT
// RUN: not ipu-opt %s -p 'plan-ops{target=sim64 finalists=1}' --target sim16 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: ipu-opt %s -p 'plan-ops{finalists=1}' --target sim16 | not ipu-opt -p map-tiles,schedule-exchange --target mk2 2>&1 | filecheck %s --check-prefix=LATER
// RUN: ipu-opt %s -p 'plan-ops{finalists=1}' --target sim16 | not ipu-opt -p map-tiles --target sim64 2>&1 | filecheck %s --check-prefix=INPUT
// RUN: not ipu-opt %s -t sim16 2>&1 | filecheck %s --check-prefix=DASH-T
// RUN: env COLUMNS=1000 ipu-opt --help | filecheck %s --check-prefix=HELP

// plan-ops records the target on the module as #ipu.target: from --target (given to every
// targeted pass that names none, with or without other options), its own option, else mk2; the
// module keeps it through the later passes. A --target that contradicts a pass's own option, or
// the module's target, is an error naming both. -t is not an option (xDSL's output format flag:
// ipu-opt prints MLIR only), so --target means the machine and nothing else.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %g = graph.gelu %x : tensor<64x256xf16> -> tensor<64x256xf16>
  func.return %g : tensor<64x256xf16>
}

// OPTIONS:  builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
// EXPLICIT: builtin.module attributes {ipu.target = #ipu.target<"sim64">} {
// BARE:     builtin.module attributes {ipu.target = #ipu.target<"sim64">} {
// DEFAULT:  builtin.module attributes {ipu.target = #ipu.target<"mk2">} {
// KEPT:     builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
// KEPT:     tilemap.run "gelu"
// BOTH:     error: --target sim16 contradicts plan-ops{target=sim64}
// LATER:    error: --target mk2 contradicts the module's target sim16
// INPUT:    error: --target sim64 contradicts the module's target sim16
// DASH-T:   error: -t is not an option: --target NAME names the machine
// HELP:       {{^}}  --target NAME
// HELP-SAME:  machine to compile for
// HELP:       passes: canonicalize, cse, dce, convert-stablehlo-to-graph, convert-precision, raise-graph-ops, expand-windows, host-layout, fuse-sibling-matmuls, fold-attention-scale, roll-layers, stripe-causal-attention, partition-stages, split-tensor-parallel, split-attention-heads, unroll-batch-matmul, plan-ops, plan-decide, plan-materialize, map-tiles, drop-checkpoints, schedule-exchange, screen-tiles, select-finalist, join-phases, place-storage, lower-to-tasm, ipu-compile
// HELP-NOT:   riscv
// HELP-NOT:   csl
// HELP-NOT:   wgsl
