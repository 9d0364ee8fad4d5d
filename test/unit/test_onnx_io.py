"""ONNX models whose inputs and outputs are not plain computed tensors of rank >= 1: scalars
(carried as [1] on the device, the declared shape restored at the host boundary), outputs that
are constants or inputs unchanged (device copies), zero-size tensors (streams of no bytes), and
reductions and softmaxes over any axes (through a transpose); each run against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ipu import api  # noqa: E402
from ipu.frontends.onnx_import import import_model  # noqa: E402
from ipu.runtime.emulator import EmulatorError  # noqa: E402

F = TensorProto.FLOAT


def model(nodes: list, inputs: dict, outputs: dict, inits=(), opset: int = 18) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, F, s) for n, s in outputs.items()],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in dict(inits).items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def rand(*shape: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def run(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Compile for sim16 and emulate on `feeds`; every output must match onnxruntime (the oracle
    check) and have its declared shape."""
    compiled = api.compile(m, "sim16")
    report = api.run(compiled, feeds)
    assert [c for c in report.checks if c.kind == "oracle"], "no oracle check"
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    for o in m.graph.output:
        want = tuple(d.dim_value for d in o.type.tensor_type.shape.dim)
        assert report.outputs[o.name].shape == want, o.name
    return report.outputs


def test_scalar_input_and_output_keep_their_shape_at_the_host() -> None:
    m = model(
        [helper.make_node("Relu", ["s"], ["r"]), helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0)],
        {"s": [], "x": [4, 6]},
        {"r": [], "t": []},
    )
    text = str(import_model(m))
    assert "%s: tensor<f32>" in text and "graph.reshape %s : tensor<f32> -> tensor<1xf32>" in text
    compiled = api.compile(m, "sim16")
    shapes = {b.name: b.shape for b in [*compiled.package.inputs, *compiled.package.outputs]}
    assert shapes == {"s": (), "x": (4, 6), "r": (), "t": ()}
    x = rand(4, 6)
    out = run(m, {"s": np.array(-1.5, np.float32), "x": x})
    assert out["r"] == 0.0
    np.testing.assert_allclose(out["t"], x.sum(), rtol=1e-5)


def test_constant_outputs_are_weights_the_device_copies() -> None:
    """A folded output (here rank 0, rank 3 and one computed from an initializer only) is a weight
    in the package, copied into the output buffer by the programs."""
    c3 = rand(2, 3, 4, seed=2)
    nodes = [
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array(2.5, np.float32))),
        helper.make_node("Exp", ["w"], ["e"]),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    m = model(nodes, {"x": [4]}, {"k": [], "e": [2, 3, 4], "y": [4]}, {"w": c3})
    compiled = api.compile(m, "sim16")
    assert {b.name for b in compiled.package.weights} >= {"k_1", "e_1"}
    out = run(m, {"x": rand(4)})
    assert out["k"] == np.float32(2.5)
    np.testing.assert_allclose(out["e"], np.exp(c3), rtol=1e-6)


def test_pass_through_outputs_are_copied() -> None:
    """An output that is an input (any rank) or an initializer unchanged is a device copy."""
    nodes = [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["w"], ["z"])]
    m = model(nodes, {"x": [2, 3, 4]}, {"y": [2, 3, 4], "z": [3]}, {"w": rand(3, seed=4)})
    assert str(import_model(m)).count("graph.cast") == 2
    x = rand(2, 3, 4)
    out = run(m, {"x": x})
    np.testing.assert_array_equal(out["y"], x)
    with pytest.raises(AssertionError):  # the check can fail: a wrong expectation is caught
        np.testing.assert_array_equal(out["y"], x + 1)


def test_zero_size_inputs_and_outputs() -> None:
    """An empty input folds what reads it (ReduceSum over an empty axis is zeros); an empty
    output is read as an empty array; both are package streams without slices."""
    nodes = [
        helper.make_node("ReduceSum", ["e", "ax"], ["s"], keepdims=1),
        helper.make_node("Identity", ["e"], ["z"]),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    m = model(nodes, {"x": [4, 6], "e": [3, 0]}, {"y": [4, 6], "s": [3, 1], "z": [3, 0]}, {"ax": np.array([1])})
    compiled = api.compile(m, "sim16")
    empty = {b.name: (b.shape, len(b.slices)) for b in [*compiled.package.inputs, *compiled.package.outputs]}
    assert empty["e"] == ((3, 0), 0) and empty["z"] == ((3, 0), 0)
    out = run(m, {"x": rand(4, 6), "e": np.zeros((3, 0), np.float32)})
    np.testing.assert_array_equal(out["s"], np.zeros((3, 1), np.float32))
    assert api.run(compiled).passed  # seeded inputs: the empty one an empty array


def test_zero_size_pieces() -> None:
    """A Concat drops an empty piece; an op whose result is empty is not computed (its result is
    known); a model with nothing but empty outputs still runs (its programs only stream)."""
    nodes = [
        helper.make_node("Concat", ["x", "e"], ["y"], axis=0),
        helper.make_node("Add", ["x", "e"], ["z"]),
    ]
    m = model(nodes, {"x": [1, 4], "e": [0, 4]}, {"y": [1, 4], "z": [0, 4]})
    x = rand(1, 4)
    out = run(m, {"x": x, "e": np.zeros((0, 4), np.float32)})
    np.testing.assert_array_equal(out["y"], x)
    only_empty = model([helper.make_node("Add", ["x", "e"], ["z"])], {"x": [1, 4], "e": [0, 4]}, {"z": [0, 4]})
    assert "func.return\n" in str(import_model(only_empty))  # nothing to compute: x is written, unread
    out = run(only_empty, {"x": x, "e": np.zeros((0, 4), np.float32)})
    assert out["z"].shape == (0, 4)


@pytest.mark.parametrize(
    ("op", "axes", "keep"),
    [("ReduceSum", [1], 1), ("ReduceMax", [1], 0), ("ReduceMean", [0, 2], 1), ("ReduceMin", [1, 3], 0)],
)
def test_reduction_over_any_axes(op: str, axes: list[int], keep: int) -> None:
    shape = (3, 4, 2, 5)
    out_shape = (
        [1 if i in axes else d for i, d in enumerate(shape)]
        if keep
        else [d for i, d in enumerate(shape) if i not in axes]
    )
    m = model(
        [helper.make_node(op, ["x", "ax"], ["y"], keepdims=keep)],
        {"x": list(shape)},
        {"y": out_shape},
        {"ax": np.array(axes, np.int64)},
    )
    assert "graph.transpose" in str(import_model(m))
    run(m, {"x": rand(*shape)})


@pytest.mark.parametrize(("op", "axis"), [("Softmax", 0), ("Softmax", 1), ("LogSoftmax", 0), ("LogSoftmax", 1)])
def test_softmax_over_any_axis(op: str, axis: int) -> None:
    m = model([helper.make_node(op, ["x"], ["y"], axis=axis)], {"x": [3, 4, 5]}, {"y": [3, 4, 5]})
    run(m, {"x": rand(3, 4, 5)})


def test_double_is_computed_in_float32(caplog: pytest.LogCaptureFixture) -> None:
    """DOUBLE inputs and outputs are narrowed explicitly: the function lists them, the import
    warns, the package binds float32, the host refuses a value float32 cannot hold, and the
    outputs (float32) match onnxruntime's float64 at float32 tolerance."""
    D = TensorProto.DOUBLE
    g = helper.make_graph(
        [helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Cast", ["e"], ["y"], to=F)],
        "m",
        [helper.make_tensor_value_info("x", D, [4, 6])],
        [helper.make_tensor_value_info("e", D, [4, 6]), helper.make_tensor_value_info("y", F, [4, 6])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    with caplog.at_level("WARNING", logger="ipu"):
        text = str(import_model(m))
    assert 'ipu.narrowed = {x = "DOUBLE", e = "DOUBLE"}' in text
    assert "computed in float32" in caplog.text and "streams=x,e" in caplog.text
    compiled = api.compile(m, "sim16")
    assert {b.name: b.dtype.name for b in [*compiled.package.inputs, *compiled.package.outputs]} == {
        "x": "F32",
        "e": "F32",
        "y": "F32",
    }
    x = np.random.default_rng(0).standard_normal((4, 6))
    out = run(m, {"x": x})
    assert out["e"].dtype == np.float32
    np.testing.assert_allclose(out["e"], np.exp(x), rtol=1e-6)
    big = x.copy()
    big[1, 2] = 1e300
    with pytest.raises(EmulatorError, match=r"input 'x': value 1e\+300 does not fit float32"):
        api.run(compiled, {"x": big})


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([3, 4, 5], [1, 4, 5]),  # leading axis: a row vector repeated
        ([3, 4, 5], [3, 1, 5]),  # middle axis: repeated, then transposed into place (odd last axis)
        ([2, 3, 4, 6], [2, 1, 1, 6]),  # a run of two middle axes
        ([3, 3, 3, 1], [1, 3, 1, 1]),  # leading and trailing runs
        ([2, 3, 5], [2, 1, 1]),  # trailing: a column
        ([3, 4], []),  # a scalar input
    ],
)
def test_computed_operands_broadcast_any_way(a: list[int], b: list[int]) -> None:
    """A computed operand broadcasts to the other's shape exactly (`ones * x` per run of
    broadcast axes), infinities and NaNs included."""
    m = model(
        [helper.make_node("Div", ["x", "y"], ["q"]), helper.make_node("Sub", ["y", "x"], ["d"])],
        {"x": a, "y": b},
        {"q": a, "d": a},
    )
    y = rand(*b, seed=5) if b else np.array(0.75, np.float32)
    if y.size > 1:
        y.reshape(-1)[0] = np.inf
    out = run(m, {"x": rand(*a), "y": y})
    assert np.isinf(out["d"]).any() == (y.size > 1)


def test_expand_of_a_middle_axis() -> None:
    m = model(
        [helper.make_node("Expand", ["x", "s"], ["y"])], {"x": [3, 1]}, {"y": [2, 3, 6]}, {"s": np.array([2, 1, 6])}
    )
    run(m, {"x": rand(3, 1)})


@pytest.mark.parametrize(("axes", "keep"), [([2], 1), ([0, 2], 0), ([], 1)])
def test_reduce_prod(axes: list[int], keep: int) -> None:
    shape = (3, 4, 5)
    kept = [a for a in range(3) if a not in axes] if axes else []
    out = [1 if i in axes or not axes else d for i, d in enumerate(shape)] if keep else [shape[a] for a in kept]
    inits = {"ax": np.array(axes, np.int64)} if axes else {}
    m = model(
        [helper.make_node("ReduceProd", ["x", *(["ax"] if axes else [])], ["y"], keepdims=keep)],
        {"x": list(shape)},
        {"y": out},
        inits,
    )
    assert 'kind = "prod"' in str(import_model(m))
    run(m, {"x": rand(*shape) * 0.5 + 1})


def test_clip_with_run_time_bounds() -> None:
    """Scalar bound inputs (rank 0) broadcast over x; min > max gives max, as in onnxruntime."""
    m = model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], {"x": [3, 5], "lo": [], "hi": []}, {"y": [3, 5]})
    x = rand(3, 5) * 3
    out = run(m, {"x": x, "lo": np.array(-1.0, np.float32), "hi": np.array(0.5, np.float32)})
    np.testing.assert_array_equal(out["y"], np.clip(x, -1.0, 0.5))
    out = run(m, {"x": x, "lo": np.array(2.0, np.float32), "hi": np.array(1.0, np.float32)})
    np.testing.assert_array_equal(out["y"], np.full((3, 5), 1.0, np.float32))


@pytest.mark.parametrize(("a", "const"), [([6], False), ([2, 3, 6], False), ([4, 6], True)])
def test_matmul_by_a_vector(a: list[int], const: bool) -> None:
    """A rank-1 right operand is the column [K, 1], the unit axis dropped: 1-D x 1-D is a scalar."""
    inits = {"v": rand(6, seed=7)} if const else {}
    ins = {"x": a} | ({} if const else {"v": [6]})
    m = model([helper.make_node("MatMul", ["x", "v"], ["y"])], ins, {"y": a[:-1]}, inits)
    feeds = {"x": rand(*a)} | ({} if const else {"v": rand(6, seed=8)})
    run(m, feeds)


def test_builder_outputs_an_input_and_a_parameter_as_copies() -> None:
    from ipu.builder import GraphBuilder

    b = GraphBuilder()
    x = b.input("x", (4, 8), "f32")
    w = b.parameter("w", (8,), "f32", std=0.5, seed=2)
    b.output(x, name="same")
    b.output(w, name="weight")
    compiled = api.compile(b.build(), "sim16")
    xs = rand(4, 8)
    report = api.run(compiled, {"x": xs})
    assert report.passed
    np.testing.assert_array_equal(report.outputs["same"], xs)
