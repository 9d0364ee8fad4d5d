// RUN: rm -f %t.ipuexe
// RUN: ipu-opt %examples/mlp_small.mlir -p ipu-compile --target sim16 | tee %t.tasm.mlir | ipu-translate --to-ipuexe -o %t.ipuexe
// RUN: ipu-translate %t.ipuexe --inspect | filecheck %s
// RUN: ipu-translate - --inspect < %t.ipuexe | filecheck %s
// RUN: ipu-translate --from-ipuexe < %t.ipuexe | ipu-translate --to-ipuexe -o - | cmp - %t.ipuexe
// RUN: not ipu-translate --to-ipuexe --target sim64 -o %t.bad < %t.tasm.mlir 2>&1 | filecheck %s --check-prefix=TARGET

// MLIR's habit: a translate tool reads standard input when given no file or `-`, and `-o -`
// writes standard output; the tasm module's #ipu.target says which machine it is for.

// CHECK: package: schema {{[0-9]+}}, target sim16
// CHECK: programs: 1 (1 distinct) for 16 of 16 tiles
// TARGET: error: ipu-translate: option target=sim64 contradicts the module's target sim16
