"""Each kernel's ABI and cycle model, pinned.

The operand layouts were computed from the elif chains this registry replaced
(`package.call_operand_elements` / `call_operand_dtypes`); the cycles are the PopLibs-derived model
(issue 17; hand-derived in test_kernel_costs.py). A refactor of the kernel table must change no
cost and no operand layout.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu.abi.isa import DType, float_bits
from ipu.abi.kernels import AMP_KERNELS, KERNEL_NAMES, KERNELS, UNARY_KERNELS, Role, kernel_cycles
from ipu.target import load_target

# The kernel indices are the package ABI: this order may only grow at the end.
ABI_ORDER = (
    "amp_matmul", "amp_matmul_acc", "zero", "add", "mul", "sub", "max", "gelu", "relu", "exp", "tanh",
    "transpose", "reduce_sum", "copy", "softmax_rows", "reduce_rows", "layer_norm_rows", "rms_norm_rows",
    "attention_init", "attention_update", "attention_combine", "gelu_erf", "sigmoid",
    "embedding_slice",
    "sqrt", "rsqrt", "reciprocal", "neg", "abs", "erf", "sin", "cos", "log", "silu", "min", "div", "pow",
    "repad", "floor", "ceil", "round", "sign", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
    "atanh", "softplus", "softsign", "attention_update_bias",
    "mod", "fmod", "equal", "less", "less_equal", "greater", "greater_equal", "and", "or", "xor", "shift_left",
    "shift_right", "not", "bitwise_not", "to_bool", "wrap_i8", "wrap_u8", "wrap_i16", "wrap_u16", "select",
    "arg_rows", "iteration_slice", "attention_start", "attention_start_bias",
)  # fmt: skip

_AU = {"causal": 0, "scale_bits": 0, "k_base": 0, "k_step": 1}

# (target, kernel, params, output element size, cycles of one call on one tile): the PopLibs-derived
# model (docs/cycle-model-sources.md; test_kernel_costs.py derives the formulas by hand), pinned
# so that a refactor of the kernel table or the target files changes no cost unnoticed
CYCLES = [
    ("sim16", "amp_matmul", {"m": 16, "k": 64, "n": 32}, 2, 4057),
    ("sim16", "amp_matmul", {"m": 7, "k": 100, "n": 9}, 2, 3684),
    ("sim16", "amp_matmul_acc", {"m": 16, "k": 64, "n": 32}, 2, 4081),
    ("sim16", "amp_matmul_acc", {"m": 7, "k": 100, "n": 9}, 2, 3696),
    # a stacked rhs read in place: the AMP's cycles and DynamicSlice1D's supervisor part (25)
    ("sim16", "amp_matmul_stacked", {"m": 16, "k": 64, "n": 32, "iterations": 12}, 2, 4057 + 25),
    ("sim16", "zero", {"elements": 1}, 2, 162),
    ("sim16", "zero", {"elements": 1000}, 2, 408),
    ("sim16", "add", {"m": 16, "n": 64, "b_rows": 1, "b_cols": 64}, 2, 941),
    ("sim16", "add", {"m": 3, "n": 5, "b_rows": 3, "b_cols": 5}, 2, 185),
    ("sim16", "mul", {"m": 16, "n": 64, "b_rows": 1, "b_cols": 64}, 2, 941),
    ("sim16", "sub", {"m": 16, "n": 64, "b_rows": 16, "b_cols": 64}, 2, 941),
    ("sim16", "max", {"m": 3, "n": 5, "b_rows": 3, "b_cols": 1}, 2, 191),
    ("sim16", "gelu", {"elements": 1}, 2, 231),
    ("sim16", "gelu", {"elements": 1000}, 2, 1461),
    ("sim16", "relu", {"elements": 1}, 2, 140),
    ("sim16", "relu", {"elements": 1000}, 2, 878),
    ("sim16", "exp", {"elements": 1}, 2, 242),
    ("sim16", "exp", {"elements": 1000}, 2, 1226),
    ("sim16", "tanh", {"elements": 1}, 2, 146),
    ("sim16", "tanh", {"elements": 1000}, 2, 1130),
    ("sim16", "transpose", {"m": 16, "n": 64}, 2, 739),
    ("sim16", "transpose", {"m": 3, "n": 5}, 2, 319),
    ("sim16", "reduce_sum", {"parts": 4, "elements": 256}, 2, 1380),
    ("sim16", "reduce_sum", {"parts": 3, "elements": 7}, 2, 282),
    ("sim16", "copy", {"elements": 1000}, 2, 738),
    ("sim16", "copy", {"elements": 1000}, 4, 738),
    ("sim16", "copy", {"elements": 7}, 2, 240),
    ("sim16", "copy", {"elements": 7}, 4, 240),
    ("sim16", "softmax_rows", {"rows": 16, "cols": 64, "valid": 60}, 2, 5108),
    ("sim16", "softmax_rows", {"rows": 3, "cols": 5, "valid": 5}, 2, 1706),
    ("sim16", "reduce_rows", {"rows": 16, "cols": 64, "valid": 60, "kind": 1}, 2, 606),
    ("sim16", "reduce_rows", {"rows": 3, "cols": 5, "valid": 5, "kind": 3}, 2, 186),
    ("sim16", "layer_norm_rows", {"rows": 16, "cols": 64, "valid": 60, "eps_bits": 0}, 2, 6135),
    ("sim16", "rms_norm_rows", {"rows": 3, "cols": 5, "valid": 5, "eps_bits": 0}, 2, 911),
    # a norm over column blocks: statistics, then normalising given `parts` blocks' statistics
    ("sim16", "norm_stats", {"rows": 16, "cols": 64}, 2, 2153),
    ("sim16", "layer_norm_apply", {"rows": 16, "cols": 64, "parts": 4, "eps_bits": 0}, 2, 4372),
    ("sim16", "rms_norm_apply", {"rows": 3, "cols": 6, "parts": 2, "eps_bits": 0}, 2, 726),
    ("sim16", "attention_init", {"qr": 16, "d": 64}, 2, 666),
    ("sim16", "attention_init", {"qr": 3, "d": 5}, 2, 150),
    # attention updates are priced by their inputs' dtype (the scores'): half, then fp32
    ("sim16", "attention_update", {**_AU, "qr": 16, "kr": 32, "d": 64, "causal": 1}, 2, 14242),
    ("sim16", "attention_update", {**_AU, "qr": 16, "kr": 32, "d": 64, "causal": 1}, 4, 16552),
    ("sim16", "attention_update", {**_AU, "qr": 3, "kr": 5, "d": 7, "k_base": 2}, 2, 3738),
    ("sim16", "attention_update", {**_AU, "qr": 3, "kr": 5, "d": 7, "k_base": 2}, 4, 3840),
    # scale 1.0 (the query block came scaled): the scores' scale (755 half, 1133 fp32) is not run
    ("sim16", "attention_update", {**_AU, "qr": 16, "kr": 32, "d": 64, "scale_bits": 1065353216}, 2, 13487),
    ("sim16", "attention_update", {**_AU, "qr": 16, "kr": 32, "d": 64, "scale_bits": 1065353216}, 4, 15419),
    ("sim16", "attention_combine", {"parts": 4, "qr": 16, "d": 64}, 2, 15655),
    ("sim16", "attention_combine", {"parts": 2, "qr": 3, "d": 5}, 2, 2167),
    ("sim16", "gelu_erf", {"elements": 1}, 2, 218),
    ("sim16", "gelu_erf", {"elements": 1000}, 2, 16154),
    ("sim16", "sigmoid", {"elements": 1}, 2, 158),
    ("sim16", "sigmoid", {"elements": 1000}, 2, 1634),
    ("sim16", "embedding_slice", {"indices": 8, "rows": 16, "cols": 8}, 4, 400),
    ("sim16", "embedding_slice", {"indices": 3, "rows": 5, "cols": 2}, 2, 321),
    ("sim16", "sqrt", {"elements": 1000}, 2, 5918),
    ("sim16", "rsqrt", {"elements": 1000}, 2, 4910),
    ("sim16", "reciprocal", {"elements": 1000}, 2, 3902),
    ("sim16", "erf", {"elements": 1000}, 2, 16154),
    ("sim16", "sin", {"elements": 1000}, 2, 26174),
    ("sim16", "cos", {"elements": 1000}, 2, 26174),
    ("sim16", "log", {"elements": 1000}, 2, 1130),
    ("sim16", "silu", {"elements": 1000}, 2, 1461),
    ("sim16", "neg", {"elements": 1000}, 2, 626),
    ("sim16", "abs", {"elements": 1}, 2, 152),
    ("sim16", "min", {"m": 16, "n": 64, "b_rows": 1, "b_cols": 64}, 2, 1199),
    ("sim16", "div", {"m": 16, "n": 64, "b_rows": 1, "b_cols": 64}, 2, 5585),
    ("sim16", "pow", {"m": 3, "n": 5, "b_rows": 3, "b_cols": 5}, 2, 6017),
    ("sim16", "repad", {"rows": 4, "cols": 5, "out_rows": 20, "out_cols": 1}, 4, 258),
    ("sim16", "floor", {"elements": 1000}, 2, 1634),
    ("sim16", "ceil", {"elements": 1000}, 2, 1634),
    ("sim16", "round", {"elements": 1000}, 2, 1634),
    ("sim16", "sign", {"elements": 1000}, 2, 2390),
    ("sim16", "tan", {"elements": 1000}, 2, 5711522),
    ("sim16", "sinh", {"elements": 1000}, 2, 2894),
    ("sim16", "cosh", {"elements": 1000}, 2, 2894),
    ("sim16", "asin", {"elements": 1000}, 2, 102326),
    ("sim16", "acos", {"elements": 1000}, 2, 102326),
    ("sim16", "atan", {"elements": 1000}, 2, 102326),
    ("sim16", "asinh", {"elements": 1000}, 2, 26834),
    ("sim16", "acosh", {"elements": 1000}, 2, 26834),
    ("sim16", "atanh", {"elements": 1000}, 2, 7430),
    ("sim16", "softplus", {"elements": 1000}, 2, 47498),
    ("sim16", "softsign", {"elements": 1000}, 2, 7430),
    ("sim16", "attention_update_bias", {**_AU, "causal": 1, "qr": 16, "kr": 32, "d": 64}, 2, 14997),
    ("sim16", "attention_update_bias", {**_AU, "causal": 1, "qr": 16, "kr": 32, "d": 64}, 4, 17685),
    ("sim16", "attention_update_bias", {**_AU, "k_base": 2, "qr": 3, "kr": 5, "d": 7}, 2, 4115),
    ("sim16", "attention_update_bias", {**_AU, "k_base": 2, "qr": 3, "kr": 5, "d": 7}, 4, 4235),
    ("sim16", "attention_start", {**_AU, "qr": 16, "kr": 32, "d": 64, "causal": 1}, 2, 11584),
    ("sim16", "attention_start", {**_AU, "qr": 16, "kr": 32, "d": 64, "causal": 1}, 4, 13894),
    ("sim16", "attention_start_bias", {**_AU, "qr": 16, "kr": 32, "d": 64, "causal": 1}, 2, 12339),
    ("sim16", "attention_start_bias", {**_AU, "qr": 16, "kr": 32, "d": 64, "causal": 1}, 4, 15027),
]

# One parameter set for every kernel's operand shapes.
P = {"m": 2, "k": 3, "n": 5, "elements": 7, "b_rows": 1, "b_cols": 5, "parts": 3, "rows": 2, "cols": 5, "valid": 4}
P |= {"kind": 1, "eps_bits": 0, "qr": 2, "kr": 3, "d": 5, "causal": 0, "scale_bits": 0, "k_base": 0, "k_step": 1}
P |= {"indices": 3}
P |= {"out_rows": 5, "out_cols": 2}
P |= {"iterations": 4}

# (kernel, output elements, input elements, output dtype, input dtypes) for in = out = f16
OPERANDS = [
    ("amp_matmul", 10, [6, 15], "F16", ["F16", "F16"]),
    ("amp_matmul_acc", 10, [6, 15], "F32", ["F16", "F16"]),
    ("amp_matmul_stacked", 10, [6, 60], "F16", ["F16", "F16"]),  # 4 stacked blocks of the rhs
    ("amp_matmul_swapped_stacked", 10, [6, 60, 10], "F16", ["F16", "F16", "F16"]),
    ("zero", 7, [], "F16", []),
    ("add", 10, [10, 5], "F16", ["F16", "F16"]),
    ("mul", 10, [10, 5], "F16", ["F16", "F16"]),
    ("sub", 10, [10, 5], "F16", ["F16", "F16"]),
    ("max", 10, [10, 5], "F16", ["F16", "F16"]),
    ("gelu", 7, [7], "F16", ["F16"]),
    ("relu", 7, [7], "F16", ["F16"]),
    ("exp", 7, [7], "F16", ["F16"]),
    ("tanh", 7, [7], "F16", ["F16"]),
    ("transpose", 10, [10], "F16", ["F16"]),
    ("reduce_sum", 7, [21], "F16", ["F16"]),
    ("copy", 7, [7], "F16", ["F16"]),
    ("softmax_rows", 10, [10], "F16", ["F16"]),
    ("reduce_rows", 2, [10], "F16", ["F16"]),
    ("layer_norm_rows", 10, [10, 5, 5], "F16", ["F16", "F16", "F16"]),
    ("rms_norm_rows", 10, [10, 5], "F16", ["F16", "F16"]),
    ("norm_stats", 4, [10], "F32", ["F16"]),
    ("layer_norm_apply", 10, [10, 12, 5, 5], "F16", ["F16", "F32", "F16", "F16"]),
    ("rms_norm_apply", 10, [10, 12, 5], "F16", ["F16", "F32", "F16"]),
    ("attention_init", 14, [], "F32", []),
    ("attention_update", 14, [10, 15, 15, 3, 6], "F32", ["F16", "F16", "F16", "F32", "F16"]),
    ("attention_combine", 10, [42], "F16", ["F32"]),
    ("gelu_erf", 7, [7], "F16", ["F16"]),
    ("sigmoid", 7, [7], "F16", ["F16"]),
    ("embedding_slice", 15, [10, 3, 2], "F16", ["F16", "INT32", "INT32"]),
    *((k, 7, [7], "F16", ["F16"]) for k in ("sqrt", "rsqrt", "reciprocal", "neg", "abs", "erf", "sin", "cos")),
    *((k, 7, [7], "F16", ["F16"]) for k in ("log", "silu")),
    ("min", 10, [10, 5], "F16", ["F16", "F16"]),
    ("div", 10, [10, 5], "F16", ["F16", "F16"]),
    ("pow", 10, [10, 5], "F16", ["F16", "F16"]),
    ("repad", 10, [12], "F16", ["F16"]),  # [2, 5] stored as [2, 6] -> [5, 2]
    *((k, 7, [7], "F16", ["F16"]) for k in ("floor", "ceil", "round", "sign", "tan", "sinh", "cosh", "asin")),
    *((k, 7, [7], "F16", ["F16"]) for k in ("acos", "atan", "asinh", "acosh", "atanh", "softplus", "softsign")),
    ("attention_update_bias", 14, [10, 15, 15, 8, 3, 6], "F32", ["F16", "F16", "F16", "F16", "F32", "F16"]),
    ("attention_start", 14, [10, 15, 15, 3, 6], "F32", ["F16", "F16", "F16", "F32", "F16"]),
    ("attention_start_bias", 14, [10, 15, 15, 8, 3, 6], "F32", ["F16", "F16", "F16", "F16", "F32", "F16"]),
]


def test_kernel_order_is_the_abi() -> None:
    assert KERNEL_NAMES[: len(ABI_ORDER)] == ABI_ORDER


@pytest.mark.parametrize(("target", "kernel", "params", "esize", "cycles"), CYCLES)
def test_kernel_cycles_unchanged(target: str, kernel: str, params: dict[str, int], esize: int, cycles: int) -> None:
    """`esize`: the output's element size, or the inputs' for a kernel that `reads_in_dtype`."""
    assert kernel_cycles(load_target(target), kernel, params, esize, esize) == cycles


@pytest.mark.parametrize(("kernel", "out_el", "in_els", "out_dt", "in_dts"), OPERANDS)
def test_kernel_operands_unchanged(kernel: str, out_el: int, in_els: list[int], out_dt: str, in_dts: list[str]) -> None:
    k = KERNELS[kernel]
    o, i = k.operand_elements({name: P[name] for name in k.param_names})
    assert (o, [int(x) for x in i]) == (out_el, in_els)
    od, idt = k.operand_dtypes(DType.F16, DType.F16)
    assert (DType(od).name, [DType(d).name for d in idt]) == (out_dt, in_dts)


def test_operand_roles_replace_the_special_cases_by_name() -> None:
    """The accumulating kernels read their output (iteration_store writes one slice of its stack
    in place); attention_update's fifth address is a scratch it writes and never reads, as is a
    swapped AMP's third (the product's transpose); every other address of every kernel is an
    input."""
    acc = {name for name, k in KERNELS.items() if k.out.role is Role.ACCUMULATOR}
    assert acc == {"amp_matmul_acc", "attention_update", "attention_update_bias", "iteration_store"}
    scratch = {(name, j) for name, k in KERNELS.items() for j in k.scratches()}
    assert scratch == {
        ("attention_update", 4),
        ("attention_update_bias", 5),
        ("attention_start", 4),
        ("attention_start_bias", 5),
        ("amp_matmul_swapped", 2),
        ("amp_matmul_swapped_half", 2),
        ("amp_matmul_swapped_stacked", 2),
        ("amp_matmul_swapped_half_stacked", 2),
    }
    assert KERNELS["attention_start"].reads() == [0, 1, 2, 3]  # the state is written, not read
    assert KERNELS["attention_update"].reads() == [0, 1, 2, 3]
    assert KERNELS["attention_update_bias"].reads() == [0, 1, 2, 3, 4]
    assert AMP_KERNELS == (
        "amp_matmul",
        "amp_matmul_acc",
        "amp_conv",
        "amp_matmul_half",
        "amp_conv_half",
        "amp_matmul_swapped",
        "amp_matmul_swapped_half",
        "amp_matmul_stacked",
        "amp_matmul_half_stacked",
        "amp_matmul_swapped_stacked",
        "amp_matmul_swapped_half_stacked",
    )
    # the AMP streams its weights with 128-bit loads: the rhs, or the lhs when swapped
    swapped = {n for n in AMP_KERNELS if KERNELS[n].amp_weights == 0}
    assert swapped == {f"amp_matmul_swapped{h}{s}" for h in ("", "_half") for s in ("", "_stacked")}
    # a stacked rhs: the gemm's AMPs and the bias add and scale read one, each inside a loop, one
    # block a trip
    stacked = {n for n, k in KERNELS.items() if any(o.stacked for o in k.ins)}
    assert stacked == {n for n in AMP_KERNELS if n.endswith("_stacked")} | {"add_stacked", "mul_stacked"}
    assert all(KERNELS[n].iterated and [o.stacked for o in KERNELS[n].ins][:2] == [False, True] for n in stacked)


@pytest.mark.parametrize(
    ("kernel", "params", "bad"),
    [
        ("add", {"m": 4, "n": 8, "b_rows": 1, "b_cols": 8}, False),
        ("add", {"m": 4, "n": 8, "b_rows": 2, "b_cols": 8}, True),  # b_rows neither 1 nor m
        ("add", {"m": 0, "n": 8, "b_rows": 1, "b_cols": 8}, True),  # a shape must be positive
        ("softmax_rows", {"rows": 2, "cols": 4, "valid": 5}, True),  # valid beyond cols
        ("reduce_rows", {"rows": 2, "cols": 4, "valid": 4, "kind": 4}, False),  # 4 = product
        ("reduce_rows", {"rows": 2, "cols": 4, "valid": 4, "kind": 5}, True),
        ("layer_norm_rows", {"rows": 2, "cols": 4, "valid": 4, "eps_bits": float_bits(-1e-5)}, True),
        ("layer_norm_rows", {"rows": 2, "cols": 4, "valid": 4, "eps_bits": float_bits(math.inf)}, True),
        ("attention_update", {"qr": 2, "kr": 2, "d": 4, "causal": 0, "scale_bits": 0, "k_base": 0, "k_step": 1}, False),
        ("attention_update", {"qr": 2, "kr": 2, "d": 4, "causal": -1, "scale_bits": 0, "k_base": 0, "k_step": 1}, True),
        ("attention_update", {"qr": 2, "kr": 2, "d": 4, "causal": 0, "scale_bits": 0, "k_base": -1, "k_step": 1}, True),
        ("attention_update_bias", {**_AU, "qr": 2, "kr": 2, "d": 4, "k_base": 30}, False),
        ("attention_update_bias", {**_AU, "qr": 2, "kr": 2, "d": 4, "causal": 2}, False),  # striped rows two apart
        ("attention_update_bias", {**_AU, "qr": 2, "kr": 2, "d": 4, "causal": -3}, True),
        ("repad", {"rows": 4, "cols": 5, "out_rows": 2, "out_cols": 10}, False),
        ("repad", {"rows": 4, "cols": 5, "out_rows": 3, "out_cols": 7}, True),  # 20 elements in, 21 out
    ],
)
def test_parameter_rules(kernel: str, params: dict[str, int], bad: bool) -> None:
    assert bool(KERNELS[kernel].invalid(params)) is bad


def test_every_elementwise_unary_op_lowers_to_a_unary_kernel() -> None:
    """graph.ELEMENTWISE_UNARY_OPS name their kernel; each is a plan.unary kind (a unary kernel),
    and every unary kernel is some op's (gelu's two forms by its `approximate` attribute, the
    wrap's four by `to`) or a cast's (to_bool)."""
    from xdsl.dialects.builtin import StringAttr, TensorType, f32, i1, i32
    from xdsl.ir import Block

    from ipu.dialects import graph as g

    x, n, b = Block(arg_types=[TensorType(t, [4]) for t in (f32, i32, i1)]).args
    arg = {"float": x, "numeric": x, "int": n, "bool": b}
    used = {"to_bool"}  # graph.cast to i1
    for cls in g.ELEMENTWISE_UNARY_OPS:
        ops = [cls(arg[cls.DTYPES])]
        if cls is g.GeluOp:
            ops.append(cls(x))
            ops[-1].attributes["approximate"] = StringAttr("none")
        if cls is g.WrapOp:
            ops = [cls(n, to) for to in g.WRAP_TYPES]
        for op in ops:
            op.verify()
            assert KERNELS[op.kernel()].unary, op.name
            used.add(op.kernel())
    assert used == set(UNARY_KERNELS)


def test_integer_kernels() -> None:
    """The integer semantics: int32 wrap-around, truncating division with x / 0 = 0, both mods,
    logical shifts of the 32-bit word, comparisons as 0/1 words, the narrow wraps, select and
    arg_rows; only kernels marked `ints` accept INT32 in the dtype word."""
    from ipu.abi.kernels import INT_KERNELS

    p = {"m": 1, "n": 6, "b_rows": 1, "b_cols": 6}
    a = np.array([[7, -7, 7, -7, 2**31 - 1, -(2**31)]], np.int32)
    b = np.array([[2, 2, -2, 0, 1, -1]], np.int32)

    def run(name: str, x: np.ndarray, y: np.ndarray, q: dict = p) -> np.ndarray:
        return np.asarray(KERNELS[name].run(q, 1, [x, y], None)).reshape(-1)

    with np.errstate(over="ignore"):
        assert list(run("add", a, b)) == list((a + b).reshape(-1))  # 2^31 - 1 + 1 wraps
    assert list(run("div", a, b)) == [3, -3, -3, 0, 2**31 - 1, -(2**31)]
    assert list(run("mod", a, b)) == [1, 1, -1, 0, 0, 0]
    assert list(run("fmod", a, b)) == [1, -1, 1, 0, 0, 0]
    assert list(run("less", a, b)) == [0, 1, 0, 1, 0, 1]
    s = np.array([[1, 3, 31, 32, -1, 0]], np.int32)
    one = np.ones((1, 6), np.int32)
    assert list(run("shift_left", one, s)) == [2, 8, -(2**31), 0, 0, 1]
    assert list(run("shift_right", np.full((1, 6), -1, np.int32), s)) == [2**31 - 1, 2**29 - 1, 1, 0, 0, -1]
    e = {"elements": 4}
    v = np.array([[127, 128, -129, 300]], np.int32)
    assert list(KERNELS["wrap_i8"].run(e, 1, [v], None).reshape(-1)) == [127, -128, 127, 44]
    assert list(KERNELS["wrap_u8"].run(e, 1, [v], None).reshape(-1)) == [127, 128, 127, 44]
    f = np.array([[0.0, np.nan, -0.0, 2.5]], np.float32)
    assert list(KERNELS["to_bool"].run(e, 1, [f], None).reshape(-1)) == [0, 1, 0, 1]
    c = np.array([[1, 0, 1, 0]], np.int32)
    assert list(KERNELS["select"].run(e, 1, [f, -f, c], None).reshape(-1)[[0, 2, 3]]) == [0.0, -0.0, -2.5]
    r = {"rows": 1, "cols": 4, "valid": 3, "kind": 1, "last": 1}
    x = np.array([[5, 9, 9, 100]], np.int32)
    assert list(KERNELS["arg_rows"].run(r, 1, [x], None).reshape(-1)) == [2]
    assert list(KERNELS["arg_rows"].run(r | {"last": 0, "kind": 2}, 1, [x], None).reshape(-1)) == [0]
    assert "matmul" not in " ".join(INT_KERNELS) and {"add", "copy", "select", "less"} <= set(INT_KERNELS)
