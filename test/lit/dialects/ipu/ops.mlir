// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The module's target: a typed attribute naming a known machine.

// CHECK: builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
// GENERIC: "builtin.module"() ({
// GENERIC: }) {ipu.target = #ipu.target<"sim16">} : () -> ()
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
}

// -----

// CHECK: builtin.module attributes {ipu.target = #ipu.target<"mk2">} {
builtin.module attributes {ipu.target = #ipu.target<"mk2">} {
}
