// RUN: ipu-opt %s -p host-layout | filecheck %s
// RUN: ipu-opt %s -p host-layout | ipu-opt | filecheck %s
// RUN: ipu-opt %s -p ipu-compile --target sim16 | filecheck %s --check-prefix=TASM
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// An NCHW image turned channels last by the importer's chain (transpose, reshape, transpose,
// reshape) and cast to half: the host writes the image rearranged (`ipu.host_perms`), the
// cast stays (derived: it is not the model's NCHW value), and no exchange moves the elements.
// CHECK-LABEL: func.func @image
// CHECK-SAME:    (%x: tensor<2x8x8x3xf32>)
// CHECK-SAME:    ipu.host_perms = {x = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:    %[[H:.*]] = graph.cast %x {ipu.derived} : tensor<2x8x8x3xf32> -> tensor<2x8x8x3xf16>
// CHECK-NEXT:    %y = graph.relu %[[H]]
// CHECK-NOT:     graph.transpose
// TASM:          tasm.stream_in @x : tensor<2x8x8x3xf32> host_perm array<i64: 0, 2, 3, 1>
// EMU:           numericalTest=PASS
func.func @image(%x: tensor<2x3x8x8xf32>) -> tensor<2x8x8x3xf16> {
  %h = graph.cast %x : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf16>
  %0 = graph.transpose %h {perm = array<i64: 1, 0, 2, 3>} : tensor<2x3x8x8xf16> -> tensor<3x2x8x8xf16>
  %1 = graph.reshape %0 : tensor<3x2x8x8xf16> -> tensor<3x128xf16>
  %2 = graph.transpose %1 {perm = array<i64: 1, 0>} : tensor<3x128xf16> -> tensor<128x3xf16>
  %3 = graph.reshape %2 : tensor<128x3xf16> -> tensor<2x8x8x3xf16>
  %y = graph.relu %3 : tensor<2x8x8x3xf16> -> tensor<2x8x8x3xf16>
  func.return %y : tensor<2x8x8x3xf16>
}
