// RUN: not ipu-opt %s 2>&1 | filecheck %s

// A target that no target/*.toml defines is refused where the attribute is built.
builtin.module attributes {ipu.target = #ipu.target<"mk9">} {
}
// CHECK-NOT: Traceback
// CHECK: #ipu.target: unknown target 'mk9' (known: ipu21, mk1, mk2, sim16, sim64)
