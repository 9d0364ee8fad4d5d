// RUN: ipu-opt %examples/mlp_small.mlir -p ipu-compile --target sim16 -o %t.a.mlir
// RUN: ipu-translate %t.a.mlir --to-ipuexe -o %t.a.ipuexe
// RUN: ipu-translate %t.a.ipuexe --from-ipuexe -o %t.b.mlir
// RUN: ipu-translate %t.b.mlir --to-ipuexe -o %t.b.ipuexe
// RUN: cmp %t.a.ipuexe %t.b.ipuexe
// RUN: filecheck %s --input-file %t.b.mlir
// RUN: not grep -c "layout #plan" %t.b.mlir
// RUN: ipu-opt %t.b.mlir -o %t.c.mlir
// RUN: ipu-translate %t.c.mlir --to-ipuexe -o %t.c.ipuexe
// RUN: cmp %t.a.ipuexe %t.c.ipuexe
// RUN: ipu-translate %t.b.ipuexe --from-ipuexe | cmp %t.b.mlir -

// The disassembly of a package is a complete tasm module: it re-encodes to the same bytes
// (content digest included), also after an ipu-opt print, and disassembles to the same text.
// Bindings carry the package's slice tables, weights their bytes, the module the compiler
// version and the metrics the compiler took from `tasm.memory`.

// CHECK:      // package: target=sim16 tiles=16 compiler="[[V:[0-9.]+]]" schema=8
// CHECK-NEXT: builtin.module attributes {ipu.target = #ipu.target<"sim16">, tasm.compiler = "[[V]]", tasm.memory = {peak_standard_bytes = {{[0-9]+}} : i64, {{.*}}}} {
// CHECK-NEXT:   tasm.program @p0 tiles(0, 16) {
// CHECK-NEXT:     tasm.host_in @x
// CHECK:        tasm.phase @phase0 lower_bound {{[0-9]+}} horizon {{[0-9]+}} scheduler "{{[a-z0-9-]+}}" transfers = #table.transfers<[start, src_tile, {{.*}}, par_time_step]
// CHECK-NEXT:     [{{[-0-9, ]+}}]
// CHECK:        tasm.weight @w1 dense<"0x{{[0-9A-F]+}}"> : tensor<256x1024xf16> : tensor<256x1024xf16> slices = #table.slices<[logical_offset, {{.*}}, tile_stride]
// CHECK:        tasm.weight @b1 dense<"0x{{[0-9A-F]+}}"> : tensor<1024xf16> : tensor<1024xf16> slices = #table.slices<[logical_offset, {{.*}}]
// CHECK:        tasm.stream_in @x : tensor<64x256xf16> slices = #table.slices<[logical_offset, {{.*}}]
// CHECK-NEXT:     [{{[-0-9, ]+}}]
// CHECK:        tasm.stream_out @output0 : tensor<64x256xf16> slices = #table.slices<[logical_offset, {{.*}}]
// CHECK:        tasm.checkpoint_def @h value "h" : tensor<64x1024xf16> slices = #table.slices<[logical_offset, {{.*}}]
// CHECK:      }
