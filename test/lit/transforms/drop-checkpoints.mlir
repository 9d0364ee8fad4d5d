// RUN: ipu-opt %S/../../../examples/mlp_small.mlir -p 'plan-ops{finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=KEPT
// RUN: ipu-opt %S/../../../examples/mlp_small.mlir -p 'plan-ops{finalists=1},map-tiles,drop-checkpoints' --target sim16 | filecheck %s --check-prefix=DROPPED
// RUN: ipu-opt %S/../../../examples/mlp_small.mlir -p 'plan-ops{finalists=1},map-tiles,drop-checkpoints,screen-tiles,select-finalist,schedule-exchange,place-storage,lower-to-tasm' --target sim16 | filecheck %s --check-prefix=TASM
// RUN: ipu-run %S/../../../examples/mlp_small.mlir --target sim16 --no-checkpoints | filecheck %s --check-prefix=EMU
// RUN: not ipu-run %S/../../../examples/mlp_small.mlir --target sim16 --no-checkpoints --bisect 2>&1 | filecheck %s --check-prefix=BISECT

// drop-checkpoints erases the samples of intermediate values map-tiles made for the numerical
// check; the output's host read stays, and so does every kernel run.

// KEPT-COUNT-5: tilemap.checkpoint
// KEPT:         tilemap.host_read

// DROPPED-NOT:  tilemap.checkpoint
// DROPPED:      tilemap.run
// DROPPED-NOT:  tilemap.checkpoint
// DROPPED:      tilemap.host_read
// DROPPED-NOT:  tilemap.checkpoint

// TASM-NOT:     tasm.checkpoint
// TASM:         tasm.stream_out
// TASM-NOT:     tasm.checkpoint

// `ipu-run --no-checkpoints` compiles without them and still compares the output; --bisect needs them.
// EMU:          output=output0 samples=16384 maximumAbsoluteError=
// EMU:          diagnosticCheckpoints=0 check=sampled {{.*}}numericalTest=PASS
// BISECT:       error: --no-checkpoints applies when compiling, and --bisect needs the checkpoints
