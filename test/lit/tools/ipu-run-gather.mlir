// RUN: ipu-run %s --target sim16 | filecheck %s
// RUN: python %S/Inputs/onnx_gather.py model %t.onnx
// RUN: ipu-translate --import-onnx %t.onnx | filecheck %s --check-prefix=IMPORT
// RUN: ipu-run %t.onnx --target sim16 --package %t.ipuexe | filecheck %s --check-prefix=ONNX
// RUN: python %S/Inputs/onnx_gather.py ids %t.last.npz 63
// RUN: ipu-run %t.onnx --target sim16 --inputs %t.last.npz | filecheck %s --check-prefix=ONNX
// RUN: python %S/Inputs/onnx_gather.py ids %t.out.npz 64
// RUN: not ipu-run %t.onnx --target sim16 --inputs %t.out.npz 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: python %S/Inputs/onnx_gather.py ids %t.neg.npz -1
// RUN: not ipu-run %t.onnx --target sim16 --inputs %t.neg.npz 2>&1 | filecheck %s --check-prefix=NEG
// RUN: python %S/Inputs/onnx_gather.py ids %t.big.npz 4294967296
// RUN: not ipu-run %t.onnx --target sim16 --inputs %t.big.npz 2>&1 | filecheck %s --check-prefix=BIG
// RUN: not ipu-run %t.ipuexe --inputs %t.big.npz 2>&1 | filecheck %s --check-prefix=BIGPKG

// Embedding lookups emulated on sim16: a 4x4 grid (the table's row blocks' partials summed by an
// exchange and reduce_sum) and the planner's own choice, each checked against the reference.
func.func @main(%ids: tensor<1x8xi32>) -> (tensor<8x32xf16>, tensor<8x32xf32>) {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.5> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0, plan.choice = #plan.choice<gather, grid = [4, 4]>} : (tensor<64x32xf16>, tensor<1x8xi32>) -> tensor<8x32xf16>
  %pos = graph.parameter "pos" #graph.gaussian<seed = 2, std = 0.5> : tensor<100x32xf32>
  %y = graph.gather %pos, %ids {axis = 0} : (tensor<100x32xf32>, tensor<1x8xi32>) -> tensor<8x32xf32>
  func.return %x, %y : tensor<8x32xf16>, tensor<8x32xf32>
}

// CHECK: name=x value=x aspect=value samples=256 maximumAbsoluteError=0.000000
// CHECK: name=y value=y aspect=value samples=256 maximumAbsoluteError=0.000000
// CHECK: output=output0 samples=256 maximumAbsoluteError=0.000000
// CHECK: output=output1 samples=256 maximumAbsoluteError=0.000000
// CHECK: numericalTest=PASS
// CHECK: estimatedOverEmulated=

// The ONNX model: int64 ids become an i32 input feeding graph.gather; the position embeddings,
// a Gather of an initializer by a Range, fold to a constant parameter at import.
// IMPORT:     func.func @main(%input_ids: tensor<1x8xi32>) -> tensor<1x8x16xf32>
// IMPORT:     %tok = graph.gather %wte, %input_ids {axis = 0 : i64, onnx.node = "/wte/Gather:Gather"} : (tensor<64x32xf32>, tensor<1x8xi32>) -> tensor<8x32xf32>
// IMPORT-NOT: graph.gather
// IMPORT:     graph.parameter "pos"
// IMPORT:     graph.add %tok
// IMPORT:     graph.matmul

// ONNX:      output=logits samples=128
// ONNX:      oracleOutput=logits oracle=onnxruntime samples=128
// ONNX:      numericalTest=PASS

// RANGE:   error: input 'input_ids': index 64 at element 5 outside [0, 64), the rows of the table it indexes
// RANGE-NOT: Traceback
// NEG:     error: input 'input_ids': index -1 at element 5 outside [0, 64), the rows of the table it indexes (negative indices are not supported)
// BIG:     error: input 'input_ids': value 4294967296 at element 5 does not fit int32 (the device's integer type)
// BIG-NOT: Traceback
// BIGPKG:  error: input 'input_ids': value 4294967296 does not fit int32 (the device's integer type)
