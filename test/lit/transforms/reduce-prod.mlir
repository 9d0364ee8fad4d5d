// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s --check-prefix=TILE
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A product over the last axis (ONNX ReduceProd): the row reduction's fourth kind, the
// reduce_rows kernel with kind = 4.
func.func @main(%x: tensor<1x8x6xf32>) -> tensor<1x8xf32> {
  %p = graph.reduce %x {kind = "prod", axis = 2 : i64} : tensor<1x8x6xf32> -> tensor<1x8xf32>
  func.return %p : tensor<1x8xf32>
}

// PLAN: %p = plan.rowwise "prod" %{{[a-z_0-9]+}} {value = "p"}
// TILE: tilemap.run "reduce_rows"(%{{[a-z_0-9]+}}) {rows = {{[0-9]+}} : i64, cols = 6 : i64, valid = 6 : i64, kind = 4 : i64}
// EMU: output=output0 samples=8
// EMU: numericalTest=PASS
