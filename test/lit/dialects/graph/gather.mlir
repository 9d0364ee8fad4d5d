// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// An embedding lookup: rows of a float table [V, D] by i32 ids [S] or [1, S] (one batch row of
// token ids, as an ONNX model declares them) -> [S, D].
// CHECK-LABEL: func.func @gather
func.func @gather(%ids: tensor<8xi32>, %tok: tensor<1x8xi32>) -> (tensor<8x32xf16>, tensor<8x16xf32>) {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.02> : tensor<64x32xf16>
  %pos = graph.parameter "pos" #graph.gaussian<seed = 2, std = 0.02> : tensor<100x16xf32>
  // CHECK: %x = graph.gather %emb, %ids {axis = 0 : i64} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x32xf16>
  %x = graph.gather %emb, %ids {axis = 0} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x32xf16>
  // CHECK-NEXT: %y = graph.gather %pos, %tok {axis = 0 : i64} : (tensor<100x16xf32>, tensor<1x8xi32>) -> tensor<8x16xf32>
  %y = graph.gather %pos, %tok {axis = 0} : (tensor<100x16xf32>, tensor<1x8xi32>) -> tensor<8x16xf32>
  func.return %x, %y : tensor<8x32xf16>, tensor<8x16xf32>
}

// GENERIC: "graph.gather"(%{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x32xf16>
