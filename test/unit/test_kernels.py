"""Each kernel's ABI and cycle model, pinned to the values before kernels were defined in one place.

The numbers were computed from the elif chains this registry replaced (`Target.kernel_cycles`,
`package.call_operand_elements` / `call_operand_dtypes`): a refactor of the kernel table must
change no cost and no operand layout.
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
    "arg_rows",
)  # fmt: skip

_AU = {"causal": 0, "scale_bits": 0, "k_base": 0}

# (target, kernel, params, output element size, cycles of one call on one tile)
CYCLES = [
    ("sim16", "amp_matmul", {"m": 16, "k": 64, "n": 32}, 2, 3198),
    ("sim16", "amp_matmul", {"m": 7, "k": 100, "n": 9}, 2, 2331),
    ("sim16", "amp_matmul_acc", {"m": 16, "k": 64, "n": 32}, 2, 3198),
    ("sim16", "amp_matmul_acc", {"m": 7, "k": 100, "n": 9}, 2, 2331),
    ("sim16", "zero", {"elements": 1}, 2, 12),
    ("sim16", "zero", {"elements": 1000}, 2, 74),
    ("sim16", "add", {"m": 16, "n": 64, "b_rows": 1, "b_cols": 64}, 2, 75),
    ("sim16", "add", {"m": 3, "n": 5, "b_rows": 3, "b_cols": 5}, 2, 12),
    ("sim16", "mul", {"m": 16, "n": 64, "b_rows": 1, "b_cols": 64}, 2, 75),
    ("sim16", "sub", {"m": 16, "n": 64, "b_rows": 16, "b_cols": 64}, 2, 75),
    ("sim16", "max", {"m": 3, "n": 5, "b_rows": 3, "b_cols": 1}, 2, 12),
    ("sim16", "gelu", {"elements": 1}, 2, 21),
    ("sim16", "gelu", {"elements": 1000}, 2, 10011),
    ("sim16", "relu", {"elements": 1}, 2, 12),
    ("sim16", "relu", {"elements": 1000}, 2, 74),
    ("sim16", "exp", {"elements": 1}, 2, 21),
    ("sim16", "exp", {"elements": 1000}, 2, 10011),
    ("sim16", "tanh", {"elements": 1}, 2, 21),
    ("sim16", "tanh", {"elements": 1000}, 2, 10011),
    ("sim16", "transpose", {"m": 16, "n": 64}, 2, 10251),
    ("sim16", "transpose", {"m": 3, "n": 5}, 2, 161),
    ("sim16", "reduce_sum", {"parts": 4, "elements": 256}, 2, 4107),
    ("sim16", "reduce_sum", {"parts": 3, "elements": 7}, 2, 95),
    ("sim16", "copy", {"elements": 1000}, 2, 538),
    ("sim16", "copy", {"elements": 1000}, 4, 788),
    ("sim16", "copy", {"elements": 7}, 2, 290),
    ("sim16", "copy", {"elements": 7}, 4, 292),
    ("sim16", "softmax_rows", {"rows": 16, "cols": 64, "valid": 60}, 2, 10443),
    ("sim16", "softmax_rows", {"rows": 3, "cols": 5, "valid": 5}, 2, 164),
    ("sim16", "reduce_rows", {"rows": 16, "cols": 64, "valid": 60, "kind": 1}, 2, 91),
    ("sim16", "reduce_rows", {"rows": 3, "cols": 5, "valid": 5, "kind": 3}, 2, 15),
    ("sim16", "layer_norm_rows", {"rows": 16, "cols": 64, "valid": 60, "eps_bits": 0}, 2, 427),
    ("sim16", "rms_norm_rows", {"rows": 3, "cols": 5, "valid": 5, "eps_bits": 0}, 2, 45),
    ("sim16", "attention_init", {"qr": 16, "d": 64}, 2, 77),
    ("sim16", "attention_init", {"qr": 3, "d": 5}, 2, 13),
    ("sim16", "attention_update", {"qr": 16, "kr": 32, "d": 64, "causal": 1, "scale_bits": 0, "k_base": 0}, 2, 11751),
    ("sim16", "attention_update", {"qr": 3, "kr": 5, "d": 7, "causal": 0, "scale_bits": 0, "k_base": 2}, 2, 1274),
    ("sim16", "attention_combine", {"parts": 4, "qr": 16, "d": 64}, 2, 1179),
    ("sim16", "attention_combine", {"parts": 2, "qr": 3, "d": 5}, 2, 79),
    ("sim16", "gelu_erf", {"elements": 1}, 2, 21),
    ("sim16", "gelu_erf", {"elements": 1000}, 2, 10011),
    # appended with the sigmoid kernel: the transcendental class of exp and tanh
    ("sim16", "sigmoid", {"elements": 1}, 2, 21),
    ("sim16", "sigmoid", {"elements": 1000}, 2, 10011),
    # appended with the embedding_slice kernel: multiSlice's per-index shape, a copy call plus per
    # index a compare (10) and its row at 8 bytes a cycle: 288 + 8 * (10 + 32 / 8)
    ("sim16", "embedding_slice", {"indices": 8, "rows": 16, "cols": 8}, 4, 400),
    ("sim16", "embedding_slice", {"indices": 3, "rows": 5, "cols": 2}, 2, 321),
    # appended with the elementwise ops of real exports: square roots, reciprocals, erf, sin, cos,
    # log and SiLU at the transcendental rate, neg and abs at the vector rate
    *(("sim16", k, {"elements": 1000}, 2, 10011) for k in ("sqrt", "rsqrt", "reciprocal", "erf", "sin", "cos")),
    *(("sim16", k, {"elements": 1000}, 2, 10011) for k in ("log", "silu")),
    ("sim16", "neg", {"elements": 1000}, 2, 74),
    ("sim16", "abs", {"elements": 1}, 2, 12),
    ("sim16", "min", {"m": 16, "n": 64, "b_rows": 1, "b_cols": 64}, 2, 75),
    # a division per element (transcendental rate); pow is exp(b log a), two per element
    ("sim16", "div", {"m": 16, "n": 64, "b_rows": 1, "b_cols": 64}, 2, 10251),
    ("sim16", "pow", {"m": 3, "n": 5, "b_rows": 3, "b_cols": 5}, 2, 311),
    # a copy of the output's stored rows: 20 x 2 elements of 4 bytes
    ("sim16", "repad", {"rows": 4, "cols": 5, "out_rows": 20, "out_cols": 1}, 4, 308),
    # appended: rounding and the sign at the vector rate, the other maps at the transcendental rate
    *(("sim16", k, {"elements": 1000}, 2, 74) for k in ("floor", "ceil", "round", "sign")),
    *(("sim16", k, {"elements": 1000}, 2, 10011) for k in ("tan", "sinh", "cosh", "asin", "acos", "atan")),
    *(("sim16", k, {"elements": 1000}, 2, 10011) for k in ("asinh", "acosh", "atanh", "softplus", "softsign")),
    # appended with the additive attention bias: attention_update plus one vector pass over the
    # [qr, kr] scores (11751 + 16 * 32 / 16 and 1274 + ceil(15 / 16))
    ("sim16", "attention_update_bias", {**_AU, "qr": 16, "kr": 32, "d": 64, "causal": 1}, 2, 11783),
    ("sim16", "attention_update_bias", {**_AU, "qr": 3, "kr": 5, "d": 7, "k_base": 2}, 2, 1275),
]

# One parameter set for every kernel's operand shapes.
P = {"m": 2, "k": 3, "n": 5, "elements": 7, "b_rows": 1, "b_cols": 5, "parts": 3, "rows": 2, "cols": 5, "valid": 4}
P |= {"kind": 1, "eps_bits": 0, "qr": 2, "kr": 3, "d": 5, "causal": 0, "scale_bits": 0, "k_base": 0}
P |= {"indices": 3}
P |= {"out_rows": 5, "out_cols": 2}

# (kernel, output elements, input elements, output dtype, input dtypes) for in = out = f16
OPERANDS = [
    ("amp_matmul", 10, [6, 15], "F16", ["F16", "F16"]),
    ("amp_matmul_acc", 10, [6, 15], "F32", ["F16", "F16"]),
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
    ("attention_init", 14, [], "F32", []),
    ("attention_update", 14, [10, 15, 15, 3, 6], "F32", ["F16", "F16", "F16", "F32", "F32"]),
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
    ("attention_update_bias", 14, [10, 15, 15, 8, 3, 6], "F32", ["F16", "F16", "F16", "F16", "F32", "F32"]),
]


def test_kernel_order_is_the_abi() -> None:
    assert KERNEL_NAMES[: len(ABI_ORDER)] == ABI_ORDER


@pytest.mark.parametrize(("target", "kernel", "params", "out_esize", "cycles"), CYCLES)
def test_kernel_cycles_unchanged(target: str, kernel: str, params: dict[str, int], out_esize: int, cycles: int) -> None:
    assert kernel_cycles(load_target(target), kernel, params, out_esize) == cycles


@pytest.mark.parametrize(("kernel", "out_el", "in_els", "out_dt", "in_dts"), OPERANDS)
def test_kernel_operands_unchanged(kernel: str, out_el: int, in_els: list[int], out_dt: str, in_dts: list[str]) -> None:
    k = KERNELS[kernel]
    o, i = k.operand_elements({name: P[name] for name in k.param_names})
    assert (o, [int(x) for x in i]) == (out_el, in_els)
    od, idt = k.operand_dtypes(DType.F16, DType.F16)
    assert (DType(od).name, [DType(d).name for d in idt]) == (out_dt, in_dts)


def test_operand_roles_replace_the_special_cases_by_name() -> None:
    """The accumulating kernels read their output; attention_update's fifth address is a scratch
    it writes and never reads; every other address of every kernel is an input."""
    acc = {name for name, k in KERNELS.items() if k.out.role is Role.ACCUMULATOR}
    assert acc == {"amp_matmul_acc", "attention_update", "attention_update_bias"}
    scratch = {(name, j) for name, k in KERNELS.items() for j in k.scratches()}
    assert scratch == {("attention_update", 4), ("attention_update_bias", 5)}
    assert KERNELS["attention_update"].reads() == [0, 1, 2, 3]
    assert KERNELS["attention_update_bias"].reads() == [0, 1, 2, 3, 4]
    assert AMP_KERNELS == ("amp_matmul", "amp_matmul_acc")


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
        ("attention_update", {"qr": 2, "kr": 2, "d": 4, "causal": 0, "scale_bits": 0, "k_base": 0}, False),
        ("attention_update", {"qr": 2, "kr": 2, "d": 4, "causal": 2, "scale_bits": 0, "k_base": 0}, True),
        ("attention_update", {"qr": 2, "kr": 2, "d": 4, "causal": 0, "scale_bits": 0, "k_base": -1}, True),
        ("attention_update_bias", {**_AU, "qr": 2, "kr": 2, "d": 4, "k_base": 30}, False),
        ("attention_update_bias", {**_AU, "qr": 2, "kr": 2, "d": 4, "causal": 2}, True),
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
