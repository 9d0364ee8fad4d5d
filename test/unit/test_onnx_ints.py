"""Integer and bool tensors from ONNX: narrow types wrap as NumPy's do, wide ones are narrowed on
the host with a checked range, comparisons, logic, where, casts and arg-reductions, each
compiled, emulated on sim16 and checked against onnxruntime (or onnx.reference)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from ipu import api  # noqa: E402
from ipu.frontends.onnx_import import OnnxImportError, import_model  # noqa: E402
from ipu.runtime.emulator import EmulatorError  # noqa: E402

T = TensorProto


def model(nodes: list, inputs: dict[str, tuple[int, list[int]]], outputs: dict[str, tuple[int, list[int]]]):
    g = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])


def runs(m, inputs: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Compile and emulate; graph reference and onnxruntime must agree exactly; the outputs at the
    model's declared dtypes."""
    compiled = api.compile(m, "sim16")
    report = api.run(compiled, inputs, seed=3)
    assert [c for c in report.checks if c.kind == "oracle"], "no oracle check"
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    return api.host_outputs(compiled.reference, report.outputs)


def test_int8_add_wraps_like_numpy() -> None:
    m = model([helper.make_node("Add", ["a", "b"], ["y"])], {"a": (T.INT8, [4, 6]), "b": (T.INT8, [4, 6])},
              {"y": (T.INT8, [4, 6])})  # fmt: skip
    a = np.full((4, 6), 120, np.int8)
    b = np.arange(24, dtype=np.int8).reshape(4, 6)
    out = runs(m, {"a": a, "b": b})["y"]
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, a + b)  # 120 + 23 wraps to -113
    assert "graph.wrap" in str(import_model(m))


def test_uint8_sub_wraps_and_int32_mul_divides_truncating() -> None:
    m = model(
        [helper.make_node("Sub", ["a", "b"], ["d"]), helper.make_node("Div", ["x", "z"], ["q"])],
        {"a": (T.UINT8, [2, 8]), "b": (T.UINT8, [2, 8]), "x": (T.INT32, [2, 8]), "z": (T.INT32, [2, 8])},
        {"d": (T.UINT8, [2, 8]), "q": (T.INT32, [2, 8])},
    )
    rng = np.random.default_rng(0)
    x = rng.integers(-1000, 1000, (2, 8)).astype(np.int32)
    z = rng.integers(1, 9, (2, 8)).astype(np.int32) * np.where(rng.random((2, 8)) < 0.5, -1, 1).astype(np.int32)
    a, b = np.full((2, 8), 3, np.uint8), np.arange(16, dtype=np.uint8).reshape(2, 8)
    out = runs(m, {"a": a, "b": b, "x": x, "z": z})
    np.testing.assert_array_equal(out["d"], a - b)
    np.testing.assert_array_equal(out["q"], (np.trunc(x / z)).astype(np.int32))


def test_comparison_where_and_logic() -> None:
    m = model(
        [
            helper.make_node("Less", ["x", "y"], ["lt"]),
            helper.make_node("GreaterOrEqual", ["x", "y"], ["ge"]),
            helper.make_node("Not", ["ge"], ["nge"]),
            helper.make_node("Xor", ["lt", "nge"], ["same"]),
            helper.make_node("Or", ["lt", "same"], ["c"]),
            helper.make_node("Where", ["c", "x", "y"], ["m"]),
        ],
        {"x": (T.FLOAT, [3, 10]), "y": (T.FLOAT, [3, 10])},
        {"c": (T.BOOL, [3, 10]), "m": (T.FLOAT, [3, 10])},
    )
    out = runs(m)
    assert out["c"].dtype == np.bool_


def test_cast_float_int_bool() -> None:
    m = model(
        [
            helper.make_node("Cast", ["x"], ["i"], to=T.INT32),
            helper.make_node("Cast", ["x"], ["b"], to=T.BOOL),
            helper.make_node("Cast", ["b"], ["f"], to=T.FLOAT),
            helper.make_node("Cast", ["i"], ["i8"], to=T.INT8),
        ],
        {"x": (T.FLOAT, [2, 6])},
        {"i": (T.INT32, [2, 6]), "f": (T.FLOAT, [2, 6]), "i8": (T.INT8, [2, 6])},
    )
    x = np.array([[-2.7, -0.5, 0.0, 0.5, 2.9, 300.0], [-300.0, 1.0, -1.0, 127.9, 128.0, -129.0]], np.float32)
    out = runs(m, {"x": x})
    np.testing.assert_array_equal(out["i"], np.trunc(x).astype(np.int32))
    np.testing.assert_array_equal(out["i8"], np.trunc(x).astype(np.int32).astype(np.int8))
    np.testing.assert_array_equal(out["f"], (x != 0).astype(np.float32))


def test_int64_argmax_and_mod() -> None:
    m = model(
        [
            helper.make_node("ArgMax", ["x"], ["am"], axis=-1, keepdims=0, select_last_index=1),
            helper.make_node("Mod", ["a", "b"], ["r"]),
            helper.make_node("Mod", ["a", "b"], ["fr"], fmod=1),
        ],
        {"x": (T.INT64, [4, 5]), "a": (T.INT64, [4, 5]), "b": (T.INT64, [4, 5])},
        {"am": (T.INT64, [4]), "r": (T.INT64, [4, 5]), "fr": (T.INT64, [4, 5])},
    )
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 3, (4, 5)).astype(np.int64)
    a = rng.integers(-50, 50, (4, 5)).astype(np.int64)
    b = rng.integers(1, 7, (4, 5)).astype(np.int64) * np.where(rng.random((4, 5)) < 0.5, -1, 1)
    out = runs(m, {"x": x, "a": a, "b": b})
    assert out["am"].dtype == np.int64
    np.testing.assert_array_equal(out["am"], 4 - np.argmax(x[:, ::-1], axis=1))
    np.testing.assert_array_equal(out["r"], np.mod(a, b))
    np.testing.assert_array_equal(out["fr"], np.fmod(a, b))


def test_int64_input_out_of_int32_range_is_named() -> None:
    m = model([helper.make_node("Max", ["a", "b"], ["y"])], {"a": (T.INT64, [1, 4]), "b": (T.INT64, [1, 4])},
              {"y": (T.INT64, [1, 4])})  # fmt: skip
    compiled = api.compile(m, "sim16")
    a = np.array([[1, 2, 3, 2**40]], np.int64)
    with pytest.raises((EmulatorError, ValueError), match=r"input 'a'.*1099511627776.*int32"):
        api.run(compiled, {"a": a, "b": np.zeros((1, 4), np.int64)})


@pytest.mark.parametrize(
    ("node", "dtype", "match"),
    [
        (helper.make_node("Add", ["a", "b"], ["y"]), T.INT64, "add of int64 values"),
        (helper.make_node("Mul", ["a", "b"], ["y"]), T.UINT32, "mul of uint32 values"),
        (helper.make_node("Pow", ["a", "b"], ["y"]), T.INT32, "graph.pow: element type i32 is not supported"),
        (helper.make_node("BitShift", ["a", "b"], ["y"], direction="LEFT"), T.UINT64, "shift_left of uint64"),
    ],
)
def test_refused_integer_ops_are_diagnosed(node, dtype: int, match: str) -> None:
    m = model([node], {"a": (dtype, [2, 4]), "b": (dtype, [2, 4])}, {"y": (dtype, [2, 4])})
    with pytest.raises(OnnxImportError, match=match):
        import_model(m)


def test_integer_constant_beyond_int32_is_named() -> None:
    from onnx import numpy_helper

    g = helper.make_graph(
        [helper.make_node("Max", ["a", "c"], ["y"], name="n")],
        "m",
        [helper.make_tensor_value_info("a", T.INT64, [2, 4])],
        [helper.make_tensor_value_info("y", T.INT64, [2, 4])],
        [numpy_helper.from_array(np.full((2, 4), 2**40, np.int64), "c")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match=r"node 'n' \(Max\): constant 'c': constant value 1099511627776 does not"):
        import_model(m)


def test_cumsum_float_axes_exclusive_reverse() -> None:
    """CumSum along a middle axis (transposed to the last and back), each attribute combination."""
    ax = helper.make_tensor("ax", T.INT64, [], [1])
    nodes = [
        helper.make_node("CumSum", ["x", "ax"], [f"y{e}{r}"], exclusive=e, reverse=r) for e in (0, 1) for r in (0, 1)
    ]
    g = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info("x", T.FLOAT, [2, 5, 3])],
        [helper.make_tensor_value_info(f"y{e}{r}", T.FLOAT, [2, 5, 3]) for e in (0, 1) for r in (0, 1)],
        [ax],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    x = np.random.default_rng(2).standard_normal((2, 5, 3)).astype(np.float32)
    out = runs(m, {"x": x})
    np.testing.assert_allclose(out["y00"], np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["y11"][:, ::-1][:, 1:], np.cumsum(x[:, ::-1], axis=1)[:, :-1], rtol=1e-5, atol=1e-5)
    assert not out["y11"][:, -1].any()
    assert "graph.cumsum" in str(import_model(m))


def test_cumsum_position_ids_from_a_mask() -> None:
    """RoBERTa's position ids: cumsum of (ids != pad) as int64, bounded by the length, so i32 holds it."""
    nodes = [
        helper.make_node("Constant", [], ["pad"], value=helper.make_tensor("pv", T.INT64, [], [1])),
        helper.make_node("Constant", [], ["ax"], value=helper.make_tensor("av", T.INT64, [], [1])),
        helper.make_node("Equal", ["ids", "pad"], ["eq"]),
        helper.make_node("Not", ["eq"], ["ne"]),
        helper.make_node("Cast", ["ne"], ["mask"], to=T.INT64),
        helper.make_node("CumSum", ["mask", "ax"], ["cs"]),
        helper.make_node("Mul", ["cs", "mask"], ["pos0"]),
        helper.make_node("Add", ["pos0", "pad"], ["pos"]),
    ]
    m = model(nodes, {"ids": (T.INT64, [2, 9])}, {"pos": (T.INT64, [2, 9])})
    ids = np.array([[5, 7, 9, 1, 1, 3, 4, 1, 2], [1, 1, 8, 8, 8, 8, 8, 8, 8]], np.int64)
    out = runs(m, {"ids": ids})["pos"]
    mask = (ids != 1).astype(np.int64)
    np.testing.assert_array_equal(out, np.cumsum(mask, axis=1) * mask + 1)


def test_cumsum_of_unbounded_int64_is_named() -> None:
    ax = helper.make_tensor("ax", T.INT64, [], [0])
    g = helper.make_graph(
        [helper.make_node("CumSum", ["x", "ax"], ["y"])],
        "m",
        [helper.make_tensor_value_info("x", T.INT64, [6])],
        [helper.make_tensor_value_info("y", T.INT64, [6])],
        [ax],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(OnnxImportError, match=r"CumSum of int64 values \('x'\).*int32"):
        import_model(m)
