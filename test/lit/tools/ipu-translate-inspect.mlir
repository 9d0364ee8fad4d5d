// RUN: ipu-opt %examples/mlp_small.mlir -p ipu-compile --target sim16 -o %t.mlir
// RUN: ipu-translate %t.mlir --to-ipuexe -o %t.ipuexe
// RUN: ipu-translate %t.ipuexe --inspect | filecheck %s
// RUN: ipu-translate %t.ipuexe --inspect -o %t.txt
// RUN: filecheck %s --input-file %t.txt
// RUN: not ipu-translate %t.ipuexe --inspect --from-ipuexe 2>&1 | filecheck %s --check-prefix=BOTH

// `--inspect` validates the package, then summarizes it: the MLP block of mlp_small.mlir on sim16.

// CHECK:      package: schema 8, target sim16, compiler {{[0-9.]+}}
// CHECK-NEXT: tiles: 16, memory [0x4c000, 0xe8000) 638976 bytes per tile
// CHECK-NEXT: programs: 1 (1 distinct) for 16 of 16 tiles
// CHECK-NEXT:   program 0: tiles 0..15 (16), code {{[1-9][0-9]*}} bytes at 0x4c000
// CHECK-NEXT: exchange: {{[1-9][0-9]*}} phases, {{[0-9]+}} transfer families, {{[0-9]+}} transfers
// CHECK-NEXT:   phase 0: lower_bound {{[0-9]+}} horizon {{[0-9]+}} scheduler {{[a-z0-9-]+}} families {{[0-9]+}} transfers {{[0-9]+}}
// CHECK:      bindings: 4 weights, 1 inputs, 1 outputs, 5 checkpoints
// CHECK-NEXT:   weight w1 f16 [256, 1024]: {{[0-9]+}} slices, 524288 bytes ({{[0-9]+}} on tiles)
// CHECK-NEXT:   weight b1 f16 [1024]: {{[0-9]+}} slices, 2048 bytes
// CHECK-NEXT:   weight w2 f16 [1024, 256]: {{[0-9]+}} slices, 524288 bytes
// CHECK-NEXT:   weight b2 f16 [256]: {{[0-9]+}} slices, 512 bytes
// CHECK-NEXT:   input x f16 [64, 256]: {{[0-9]+}} slices, 32768 bytes
// CHECK-NEXT:   output output0 f16 [64, 256]: {{[0-9]+}} slices, 32768 bytes (32768 on tiles)
// CHECK-NEXT:   checkpoint 0 h (%h, value) f16 [64, 1024]: {{[0-9]+}} slices, 131072 bytes
// CHECK:        checkpoint 4 yb (%yb, value) f16 [64, 256]: {{[0-9]+}} slices, 32768 bytes
// Host calls: each write or read is a host-exchange phase of 600 + ceil(bytes / 23) cycles.
// CHECK-NEXT: host calls: 2 (7 steps), 1116672 bytes over the host link, 52155 host cycles
// CHECK-NEXT:   initialize: 4 steps, 1051136 bytes, 48105 cycles
// CHECK-NEXT:     step 0: write weight w1, 524288 bytes, 23396 cycles
// CHECK-NEXT:     step 1: write weight b1, 2048 bytes, 690 cycles
// CHECK-NEXT:     step 2: write weight w2, 524288 bytes, 23396 cycles
// CHECK-NEXT:     step 3: write weight b2, 512 bytes, 623 cycles
// CHECK-NEXT:   run: 3 steps, 65536 bytes, 4050 cycles
// CHECK-NEXT:     step 0: write input x, 32768 bytes, 2025 cycles
// CHECK-NEXT:     step 1: execute the programs
// CHECK-NEXT:     step 2: read output output0, 32768 bytes, 2025 cycles
// CHECK-NEXT: memory per tile (bytes touched over the run, the union of each class's ranges):
// CHECK-NEXT:   {{ +}}min     median        max   busiest
// CHECK-NEXT:   code {{ +}}[[CODE:[0-9]+]] {{ +}}[[CODE]] {{ +}}[[CODE]]   tile {{[0-9]+}}
// CHECK-NEXT:   kernel operands {{ +[0-9]+ +[0-9]+ +[0-9]+}}   tile {{[0-9]+}}
// CHECK-NEXT:   weights {{ +[0-9]+ +[0-9]+ +[0-9]+}}   tile {{[0-9]+}}
// CHECK-NEXT:   inputs {{ +}}8192 {{ +}}8192 {{ +}}8192   tile {{[0-9]+}}
// CHECK-NEXT:   outputs {{ +[0-9]+ +[0-9]+ +[0-9]+}}   tile {{[0-9]+}}
// CHECK-NEXT:   checkpoints {{ +[0-9]+ +[0-9]+ +[0-9]+}}   tile {{[0-9]+}}
// CHECK-NEXT:   exchange receive {{ +[0-9]+ +[0-9]+ +[0-9]+}}   tile {{[0-9]+}}
// CHECK-NEXT:   region standard {{ +[0-9]+ +[0-9]+ +[0-9]+}}   tile {{[0-9]+}}
// CHECK-NEXT:   region interleaved {{ +[0-9]+ +[0-9]+ +[0-9]+}}   tile {{[0-9]+}}
// CHECK-NEXT:   all {{ +[0-9]+ +[0-9]+ +[0-9]+}}   tile {{[0-9]+}}
// CHECK-NEXT: busiest tile {{[0-9]+}}: {{[0-9]+}} of 638976 bytes ({{[0-9.]+}}%), standard {{[0-9]+}}, interleaved {{[0-9]+}}
// CHECK-NEXT: metrics: {{[0-9]+}}
// CHECK-NEXT:   programs = 1
// CHECK:        peak_total_bytes = {{[0-9]+}}

// BOTH: error: choose exactly one of --to-ipuexe, --from-ipuexe, --inspect, --import-onnx and --import-stablehlo
// BOTH-NOT: Traceback
