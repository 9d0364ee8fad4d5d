// RUN: ipu-run %S/partition-stages.mlir --system sim16x2 --microbatches 2 --package %t.ipupod | filecheck %s --check-prefix=EMU
// RUN: ipu-translate %t.ipupod --from-ipuexe -o %t.sys.mlir
// RUN: filecheck %s --input-file %t.sys.mlir
// RUN: ipu-translate %t.sys.mlir --to-ipuexe -o %t.again.ipupod
// RUN: python3 -c "import sys; a, b = (open(p, 'rb').read() for p in sys.argv[1:]); sys.exit(a != b)" %t.ipupod %t.again.ipupod
// RUN: python3 -c "import numpy as np; np.savez('%t.x.npz', x=np.ones((16, 32), np.float32))"
// RUN: ipu-run %t.sys.mlir --inputs %t.x.npz | filecheck %s --check-prefix=LOWERED

// A compiled system as IR: `ipu-translate m.ipupod --from-ipuexe` writes the pipeline with each
// value crossing chips as a system.link (its rows: at which cycle which source tile sends which
// bytes to which destination tile, its lower bound and horizon) and each chip's program as a
// nested tasm module; `--to-ipuexe` packages it back to the same bytes, and ipu-run runs it.

// EMU:        numericalTest=PASS

// CHECK:      builtin.module attributes {ipu.system = #ipu.system<"sim16x2">, ipu.compiler = "{{.*}}"} {
// CHECK-NEXT:   system.pipeline @main microbatches 2 attributes {ipu.inputs = ["x"], ipu.outputs = ["output0"]} {
// CHECK-NEXT:   ^bb0(%x: tensor<16x32xf32>):
// CHECK-NEXT:     %[[H:.*]] = system.stage @stage0 chip 0(%x) : (tensor<16x32xf32>) -> (tensor<16x32xf32>)
// CHECK-NEXT:     %[[L:.*]] = system.link %[[H]] from 0 to 1 rows = #table.links<[start, src_tile, src_offset, dst_tile, dst_offset, bytes]
// CHECK:          bound [[B:[0-9]+]] horizon [[B]] : tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:     %{{.*}} = system.stage @stage1 chip 1(%[[L]])
// CHECK-NEXT:     system.output
// CHECK:        builtin.module @stage0 attributes {ipu.target = #ipu.target<"sim16">
// CHECK:          tasm.program @p0
// CHECK:          tasm.stream_out @boundary.y3.out_trip2
// CHECK:        builtin.module @stage1 attributes {ipu.target = #ipu.target<"sim16">
// CHECK:          tasm.stream_in @boundary.y3.out_trip2

// LOWERED:    numericalTest=SKIPPED
// LOWERED:    system=sim16x2 stages=2 microbatches=2
