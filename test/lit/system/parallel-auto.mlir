// RUN: ipu-run %S/Inputs/tp-wide.mlir --system sim16x2 --parallel auto --microbatches 1 --check outputs | filecheck %s --check-prefix=ONE
// RUN: ipu-run %S/Inputs/tp-wide.mlir --system sim16x2 --parallel auto --microbatches 16 --check outputs | filecheck %s --check-prefix=MANY
// RUN: ipu-run %S/Inputs/tp-wide.mlir --system sim16x4 --parallel auto --microbatches 1 --check outputs | filecheck %s --check-prefix=FOUR
// RUN: not ipu-run %S/Inputs/tp-wide.mlir --system sim16x2 --parallel auto --layers 1,0 2>&1 | filecheck %s --check-prefix=PIN

// `--parallel auto` prices every way to spread the model over the system on a copy of it (the
// pipeline's stages, and tensor-parallel groups of each size dividing the chips, pipelined), each
// by the planner's estimates of its stages run through the pipeline's timeline for the run's
// micro-batches, and compiles the fastest. One micro-batch: the tensor-parallel split, whose
// chips all work on it; sixteen: the pipeline, whose chips work on different ones.

// ONE:        parallelCandidate=pipeline estimatedCycles=[[P1:[0-9]+]]{{$}}
// ONE-NEXT:   parallelCandidate=tensor2 estimatedCycles=[[T1:[0-9]+]] chosen
// ONE:        numericalTest=PASS
// ONE:        system=sim16x2 segmentStages=5 microbatches=1

// MANY:       parallelCandidate=pipeline estimatedCycles={{[0-9]+}} chosen
// MANY-NEXT:  parallelCandidate=tensor2 estimatedCycles={{[0-9]+}}{{$}}
// MANY:       numericalTest=PASS
// MANY:       system=sim16x2 stages=2 microbatches=16

// Four chips: the pipeline, a split over all four, and two pipelined pairs.
// FOUR:       parallelCandidate=pipeline estimatedCycles=
// FOUR-NEXT:  parallelCandidate=tensor4 estimatedCycles=
// FOUR-NEXT:  parallelCandidate=tensor2 estimatedCycles=
// FOUR:       numericalTest=PASS

// PIN:        error: --layers pins a pipeline's cut: give --parallel pipeline (a tensor-parallel split is cut by segments)
