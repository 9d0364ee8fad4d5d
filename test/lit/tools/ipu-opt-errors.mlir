// RUN: not ipu-opt %s 2>&1 | filecheck %s --check-prefix=PARSE
// RUN: not ipu-opt %examples/mlp_small.mlir --target nosuch 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not ipu-opt %examples/mlp_small.mlir -p plan-ops --target nosuch 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not ipu-opt %examples/mlp_small.mlir -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not ipu-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING

// Malformed IR: a function argument list that never closes.
func.func @f( {
  func.return
}

// PARSE-NOT: Traceback
// PARSE: error: parse error:
// PARSE: ipu-opt-errors.mlir:8:15
// PARSE: Expected argument or type
// PARSE-NOT: Traceback

// TARGET-NOT: Traceback
// TARGET: error: unknown target 'nosuch' (known: ipu21, mk1, mk2, sim16, sim64)
// TARGET-NOT: Traceback

// PASS-NOT: Traceback
// PASS: error: Unrecognized passes: ['no-such-pass']
// PASS-NOT: Traceback

// MISSING-NOT: Traceback
// MISSING: error: no such file: {{.*}}ipu-opt-errors.mlir.missing
// MISSING-NOT: Traceback
