"""The elementwise ops of real exports at every level above the kernel: each op's reference
(golden evaluator), its builder method and a compiled run, its ONNX import (the real op, not a
decomposition; the SiLU and rsqrt patterns; Pow, Div, Clip and Swish), and results that equal
onnxruntime's where IEEE arithmetic makes them exact. Kernel values and cycles: test_emulator.py;
ABI positions and pinned cycles: test_kernels.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import ipu  # noqa: E402
from ipu import api  # noqa: E402
from ipu.builder import GraphBuilder  # noqa: E402
from ipu.dialects import graph as g  # noqa: E402
from ipu.frontends.onnx_import import import_model  # noqa: E402
from ipu.frontends.onnx_oracle import onnx_oracle  # noqa: E402
from ipu.golden.evaluator import evaluate, load_module, main_function  # noqa: E402

F = TensorProto.FLOAT
UNARY = ["sqrt", "rsqrt", "reciprocal", "neg", "abs", "erf", "sin", "cos", "log", "silu"]
UNARY += ["floor", "ceil", "round", "sign", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh"]
UNARY += ["softplus", "softsign"]
TRUTH = {
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "reciprocal": lambda x: 1.0 / x,
    "neg": np.negative,
    "abs": np.abs,
    "erf": np.frompyfunc(math.erf, 1, 1),
    "sin": np.sin,
    "cos": np.cos,
    "log": np.log,
    "silu": lambda x: x / (1.0 + np.exp(-x)),
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "sign": np.sign,
    "tan": np.tan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "softplus": lambda x: np.logaddexp(0.0, x),
    "softsign": lambda x: x / (1.0 + np.abs(x)),
}
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 1e-30, np.inf, -np.inf, -100.0, 100.0, 2.5], np.float32)


def _model(nodes: list, inputs: dict[str, list[int]], outputs: dict[str, list[int]], inits=(), opset=21):
    gr = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, F, s) for n, s in outputs.items()],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in dict(inits).items()],
    )
    return helper.make_model(gr, opset_imports=[helper.make_opsetid("", opset)])


def _positive(*shape: int, seed: int = 1) -> np.ndarray:
    return (np.abs(np.random.default_rng(seed).standard_normal(shape)) + 0.1).astype(np.float32)


def _run(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> api.Report:
    report = api.run(api.compile(m, "sim16"), feeds)
    assert any(c.kind == "oracle" for c in report.checks)
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    return report


@pytest.mark.parametrize("op", UNARY)
def test_golden_reference_is_the_float64_function_rounded(op: str) -> None:
    module = load_module(
        f"func.func @main(%x: tensor<10xf32>) -> tensor<10xf32> {{\n"
        f"  %y = graph.{op} %x : tensor<10xf32> -> tensor<10xf32>\n  func.return %y : tensor<10xf32>\n}}"
    )
    got = evaluate(main_function(module), {"x": SPECIAL}).outputs[0]
    assert got.dtype == np.float32
    with np.errstate(all="ignore"):
        want = np.asarray(TRUTH[op](SPECIAL.astype(np.float64)), np.float64).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=3e-7, atol=1e-37)
    assert type(next(iter(main_function(module).body.block.ops))).name == f"graph.{op}"


def test_binary_references() -> None:
    a = np.array([1.0, -2.0, 3.0, 0.0], np.float32)
    b = np.array([2.0, 0.5, -1.0, 0.0], np.float32)
    assert np.array_equal(g.MinOp.reference(None, a, b), [1.0, -2.0, -1.0, 0.0])  # type: ignore[arg-type]
    d = g.DivOp.reference(None, a, b)  # type: ignore[arg-type]
    assert np.array_equal(d[:3], [0.5, -4.0, -3.0]) and np.isnan(d[3])
    want = np.array([1.0, math.sqrt(2.0), 1 / 3.0, 1.0], np.float32)
    assert np.array_equal(g.PowOp.reference(None, np.abs(a), b), want)  # type: ignore[arg-type]


def test_builder_methods_and_a_compiled_run() -> None:
    b = GraphBuilder()
    x = b.input("x", (32, 64), "f32")
    w = b.parameter("w", (64, 64), "f32", std=0.1, seed=4)
    h = b.matmul(x, w, name="h")
    a = b.abs(h, name="a")
    s = b.sqrt(a, name="s")
    r = b.rsqrt(b.add(a, s, name="as"), name="r")
    c = b.reciprocal(r, name="c")
    lg = b.log(c, name="lg")
    e = b.erf(b.neg(lg, name="n"), name="e")
    t = b.min(b.sin(e, name="si"), b.cos(s, name="co"), name="mn")
    q = b.div(t, c, name="q")
    p = b.pow(c, s, name="p")
    b.output(b.silu(b.add(q, p, name="qp"), name="y"))
    module = b.build()
    for op in [*UNARY[:10], "min", "div", "pow"]:
        assert f"graph.{op} " in str(module), op
    assert all(callable(getattr(GraphBuilder, op)) for op in UNARY)  # one method per unary op
    report = ipu.run(ipu.compile(module, target="sim16"), seed=2)
    assert report.passed, [(c.name, c.result.reason) for c in report.checks if not c.result.passed]
    assert {"s", "r", "e", "mn", "q", "p"} <= {c.name for c in report.checks}


@pytest.mark.parametrize(
    ("onnx_op", "graph_op"),
    [
        ("Sqrt", "sqrt"),
        ("Reciprocal", "reciprocal"),
        ("Neg", "neg"),
        ("Abs", "abs"),
        ("Erf", "erf"),
        ("Sin", "sin"),
        ("Cos", "cos"),
        ("Log", "log"),
        ("Floor", "floor"),
        ("Ceil", "ceil"),
        ("Round", "round"),
        ("Sign", "sign"),
        ("Tan", "tan"),
        ("Sinh", "sinh"),
        ("Cosh", "cosh"),
        ("Asin", "asin"),
        ("Acos", "acos"),
        ("Atan", "atan"),
        ("Asinh", "asinh"),
        ("Acosh", "acosh"),
        ("Atanh", "atanh"),
        ("Softplus", "softplus"),
        ("Softsign", "softsign"),
    ],
)
def test_onnx_unary_imports_as_the_graph_op(onnx_op: str, graph_op: str) -> None:
    m = _model([helper.make_node(onnx_op, ["x"], ["y"], name="u")], {"x": [4, 6]}, {"y": [4, 6]})
    text = str(import_model(m))
    assert f'graph.{graph_op} %x {{onnx.node = "u:{onnx_op}"}} : tensor<4x6xf32> -> tensor<4x6xf32>' in text
    assert "graph.mul" not in text and "graph.max" not in text  # Neg and Abs are no longer decomposed
    x = _positive(4, 6) * np.where(np.arange(6) % 2, 1, -1).astype(np.float32)  # both signs
    if graph_op in ("sqrt", "log"):
        x = np.abs(x)
    elif graph_op in ("asin", "acos", "atanh"):
        x = x / (1 + np.abs(x))  # inside (-1, 1)
    elif graph_op == "acosh":
        x = 1 + np.abs(x)
    _run(m, {"x": x})


def test_silu_and_rsqrt_patterns() -> None:
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["sg"]),
        helper.make_node("Mul", ["x", "sg"], ["y"], name="silu"),
        helper.make_node("Sqrt", ["x"], ["sq"]),
        helper.make_node("Reciprocal", ["sq"], ["z"], name="rs"),
        helper.make_node("Sqrt", ["x"], ["sq2"]),
        helper.make_node("Div", ["one", "sq2"], ["w"], name="rs2"),
    ]
    m = _model(nodes, {"x": [4, 6]}, {"y": [4, 6], "z": [4, 6], "w": [4, 6]}, {"one": np.float32(1.0)})
    text = str(import_model(m))
    assert 'graph.silu %x {onnx.node = "silu:Mul"}' in text
    assert 'graph.rsqrt %x {onnx.node = "rs:Reciprocal"}' in text
    assert 'graph.rsqrt %x {onnx.node = "rs2:Div"}' in text
    assert "graph.sigmoid" not in text and "graph.sqrt" not in text
    _run(m, {"x": _positive(4, 6)})


def test_a_sigmoid_read_elsewhere_is_not_fused() -> None:
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
    text = str(import_model(_model(nodes, {"x": [4, 6]}, {"y": [4, 6], "s": [4, 6]})))
    assert "graph.sigmoid" in text and "graph.silu" not in text


@pytest.mark.parametrize(
    ("exponent", "want"),
    [(0.5, "graph.sqrt"), (-0.5, "graph.rsqrt"), (-1.0, "graph.reciprocal"), (2.0, "graph.mul"), (1.5, "graph.pow")],
)
def test_pow_by_a_constant(exponent: float, want: str) -> None:
    m = _model([helper.make_node("Pow", ["x", "e"], ["y"])], {"x": [4, 6]}, {"y": [4, 6]}, {"e": np.float32(exponent)})
    text = str(import_model(m))
    assert want in text
    report = _run(m, {"x": (x := _positive(4, 6))})
    np.testing.assert_allclose(report.outputs["y"], x.astype(np.float64) ** exponent, rtol=1e-6)


def test_pow_and_div_by_computed_tensors_and_min() -> None:
    nodes = [
        helper.make_node("Pow", ["x", "e"], ["p"]),
        helper.make_node("Div", ["p", "v"], ["d"]),
        helper.make_node("Min", ["d", "x", "x2"], ["y"], name="mn"),
    ]
    m = _model(nodes, {"x": [4, 6], "e": [4, 6], "v": [6], "x2": [4, 6]}, {"y": [4, 6]})
    text = str(import_model(m))
    assert "graph.pow %x, %e" in text and "graph.div %p, %v" in text and text.count("graph.min") == 2
    feeds = {
        "x": _positive(4, 6),
        "e": _positive(4, 6, seed=2),
        "v": _positive(6, seed=3),
        "x2": _positive(4, 6, seed=4),
    }
    _run(m, feeds)


@pytest.mark.parametrize("opset", [10, 13])
def test_clip_with_constant_bounds(opset: int) -> None:
    if opset < 11:
        node = helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.75)
        inits = {}
    else:
        node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
        inits = {"lo": np.float32(-0.5), "hi": np.float32(0.75)}
    m = _model([node], {"x": [4, 6]}, {"y": [4, 6]}, inits, opset=opset)
    text = str(import_model(m))
    assert "graph.max" in text and "graph.min" in text
    x = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert all(c.result.passed for c in report.checks if c.kind != "oracle")  # no oracle for old opsets here
    np.testing.assert_array_equal(report.outputs["y"], np.clip(x, -0.5, 0.75))


def test_swish() -> None:
    m1 = _model([helper.make_node("Swish", ["x"], ["y"])], {"x": [4, 6]}, {"y": [4, 6]}, opset=24)
    assert "graph.silu %x" in str(import_model(m1))
    m2 = _model([helper.make_node("Swish", ["x"], ["y"], alpha=2.0)], {"x": [4, 6]}, {"y": [4, 6]}, opset=24)
    assert "graph.sigmoid" in str(import_model(m2))
    x = np.random.default_rng(6).standard_normal((4, 6)).astype(np.float32)
    for m, alpha in ((m1, 1.0), (m2, 2.0)):
        report = api.run(api.compile(m, "sim16"), {"x": x})
        assert all(c.result.passed for c in report.checks if c.kind != "oracle")
        np.testing.assert_allclose(report.outputs["y"], x / (1 + np.exp(-alpha * x.astype(np.float64))), rtol=1e-6)


@pytest.mark.parametrize(
    "nodes",
    [
        [helper.make_node("Sqrt", ["x"], ["y"])],
        [helper.make_node("Reciprocal", ["x"], ["y"])],
        [helper.make_node("Sqrt", ["x"], ["s"]), helper.make_node("Reciprocal", ["s"], ["y"])],
        [helper.make_node("Div", ["x", "three"], ["y"])],
        [helper.make_node("Div", ["x", "x2"], ["y"])],
        [helper.make_node("Neg", ["x"], ["y"])],
        [helper.make_node("Abs", ["x"], ["y"])],
        [helper.make_node("Min", ["x", "x2"], ["y"])],
    ],
)
def test_ieee_exact_ops_equal_onnxruntime_bit_for_bit(nodes: list) -> None:
    """Correctly rounded operations give onnxruntime's float32 values exactly (Div by 3 is a
    division, not x * (1/3); rsqrt rounds after the root and after the division, as ORT does)."""
    m = _model(nodes, {"x": [8, 16], "x2": [8, 16]}, {"y": [8, 16]}, {"three": np.float32(3.0)})
    feeds = {"x": _positive(8, 16, seed=7) * 10, "x2": _positive(8, 16, seed=8)}
    oracle = onnx_oracle(m, "onnxruntime")
    report = api.run(api.compile(m, "sim16"), feeds)
    assert report.passed
    np.testing.assert_array_equal(report.outputs["y"], oracle(feeds)["y"])


@pytest.mark.parametrize(("op", "attrs"), [("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("HardSwish", {})])
def test_hard_sigmoid_and_hard_swish(op: str, attrs: dict) -> None:
    """max(0, min(1, alpha x + beta)) with graph.mul/add/min/max by splats (MobileNetV3's
    activations); HardSwish multiplies it by x, with alpha = 1/6 and beta = 1/2."""
    m = _model([helper.make_node(op, ["x"], ["y"], **attrs)], {"x": [4, 8]}, {"y": [4, 8]}, opset=22)
    text = str(import_model(m))
    assert "graph.min" in text and "graph.relu" in text  # max(0, .): raise-graph-ops' RaiseRelu
    x = (np.random.default_rng(9).standard_normal((4, 8)) * 4).astype(np.float32)
    report = _run(m, {"x": x})
    a, b = (attrs.get("alpha", 1 / 6), attrs.get("beta", 0.5))
    h = np.clip(a * x.astype(np.float64) + b, 0, 1)
    np.testing.assert_allclose(report.outputs["y"], h if op == "HardSigmoid" else x * h, rtol=1e-6, atol=1e-7)
    assert (report.outputs["y"] == 0).any()  # the lower clamp is reached


@pytest.mark.parametrize("slope_shape", [[8], [4, 8]])
def test_prelu_with_a_computed_slope(slope_shape: list[int]) -> None:
    """max(x, 0) (a relu) + slope * min(x, 0) equals onnxruntime's x > 0 ? x : slope * x bit for bit."""
    m = _model([helper.make_node("PRelu", ["x", "s"], ["y"])], {"x": [4, 8], "s": slope_shape}, {"y": [4, 8]})
    text = str(import_model(m))
    assert "graph.relu" in text and "graph.min" in text  # max(x, 0): raise-graph-ops' RaiseRelu
    rng = np.random.default_rng(10)
    feeds = {"x": rng.standard_normal((4, 8)).astype(np.float32), "s": rng.random(slope_shape).astype(np.float32)}
    report = _run(m, feeds)
    np.testing.assert_array_equal(report.outputs["y"], onnx_oracle(m, "onnxruntime")(feeds)["y"])
