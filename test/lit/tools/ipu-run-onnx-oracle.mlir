// RUN: python %S/Inputs/onnx_models.py mlp %t.onnx
// RUN: ipu-run %t.onnx --target sim16 --check outputs | filecheck %s

// ipu-run on an ONNX file checks the outputs twice: against the reference evaluation of the
// imported graph IR, and against the ONNX file itself run by onnxruntime (the oracle users trust;
// onnx.reference where onnxruntime is not installed), each output by its ONNX name.

// CHECK:      output=probs samples=64 maximumAbsoluteError={{[0-9.]+}}
// CHECK:      oracleOutput=probs oracle=onnxruntime samples=64 maximumAbsoluteError={{[0-9.]+}}
// CHECK:      numericalTest=PASS
