"""ONNX inputs and outputs of rank 4 and 5: the function keeps the ONNX shapes, the importer
carries the row collapse [prod(leading), last] between them, and a compiled run returns the
outputs at their ONNX shapes (against the graph reference and the ONNX oracle)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from ipu import api  # noqa: E402
from ipu.abi.package import kernels_called  # noqa: E402
from ipu.context import make_context  # noqa: E402
from ipu.frontends.onnx_import import import_model  # noqa: E402
from ipu.transforms.plan.plan_ops import PlanOpsPass  # noqa: E402

F = TensorProto.FLOAT


def _model(nodes: list, x: list[int], y: list[int], opset: int = 21) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info("x", F, x)], [helper.make_tensor_value_info("y", F, y)]
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("shape", [(1, 3, 8, 6), (2, 3, 4, 6), (2, 1, 3, 4, 6), (1, 1, 2, 4, 5)])
def test_rank_4_and_5_io_keep_their_onnx_shapes(shape: tuple[int, ...]) -> None:
    m = _model(
        [helper.make_node("Tanh", ["x"], ["t"]), helper.make_node("Relu", ["t"], ["y"])], list(shape), list(shape)
    )
    module = import_model(m)
    text = str(module)
    ty = "x".join(str(d) for d in shape) + "xf32"
    rows = int(np.prod(shape[:-1]))
    assert f"func.func @main(%x: tensor<{ty}>) -> tensor<{ty}>" in text
    assert f"graph.reshape %x : tensor<{ty}> -> tensor<{rows}x{shape[-1]}xf32>" in text
    # the output is reshaped back at the boundary
    assert f"graph.reshape %y.1 : tensor<{rows}x{shape[-1]}xf32> -> tensor<{ty}>\n    func.return %y.2" in text
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    assert any(c.kind == "oracle" for c in report.checks)
    assert report.outputs["y"].shape == shape
    np.testing.assert_allclose(report.outputs["y"], np.maximum(np.tanh(x), 0), atol=1e-6)


def test_rank_4_layer_norm_over_the_last_axis() -> None:
    m = _model([helper.make_node("LayerNormalization", ["x", "s"], ["y"], axis=-1)], [1, 2, 8, 16], [1, 2, 8, 16])
    s = helper.make_tensor("s", F, [16], np.linspace(0.5, 1.5, 16).astype(np.float32))
    m.graph.initializer.append(s)
    x = np.random.default_rng(5).standard_normal((1, 2, 8, 16)).astype(np.float32)
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert report.passed
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    want = (x - mu) / np.sqrt(var + 1e-5) * np.linspace(0.5, 1.5, 16)
    np.testing.assert_allclose(report.outputs["y"], want, atol=1e-4)


def test_leading_unit_axes_do_not_put_the_input_on_one_tile() -> None:
    """[1, C, H, W] is cut along C (its first non-unit axis), the rows of its collapse alike."""
    module = import_model(_model([helper.make_node("Exp", ["x"], ["y"])], [1, 8, 4, 6], [1, 8, 4, 6]))
    PlanOpsPass(target="sim16", finalists=1).apply(make_context(), module)
    module.verify()
    text = str(module)
    assert "!plan.tensor<1x8x4x6xf32, #plan.layout<grid = [8], split = [[], [0], [], []]" in text
    assert "!plan.tensor<32x6xf32, #plan.layout<grid = [8], split = [[0], []]" in text


def test_rank_0_io_runs_as_a_scalar() -> None:
    """A rank-0 input and output are carried as [1] on the device; the host sees 0-d arrays."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "m",
        [helper.make_tensor_value_info("x", F, [])],
        [helper.make_tensor_value_info("y", F, [])],
    )
    compiled = api.compile(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]), "sim16")
    report = api.run(compiled, {"x": np.array(3.5, np.float32)})
    assert report.passed and report.outputs["y"].shape == () and report.outputs["y"] == np.float32(3.5)


@pytest.mark.parametrize(("node", "out"), [("Flatten", [3, 20]), ("Unsqueeze", [3, 4, 5, 1])])
def test_reshapes_that_change_an_odd_last_axis(node: str, out: list[int]) -> None:
    """Rows stored padded to an even length are re-cut on each tile (the `repad` kernel)."""
    if node == "Flatten":
        n = helper.make_node("Flatten", ["x"], ["y"], axis=1)
        m = _model([n], [3, 4, 5], out)
    else:
        n = helper.make_node("Unsqueeze", ["x", "ax"], ["y"])
        m = _model([n], [3, 4, 5], out)
        m.graph.initializer.append(helper.make_tensor("ax", TensorProto.INT64, [1], [3]))
    x = np.random.default_rng(6).standard_normal((3, 4, 5)).astype(np.float32)
    compiled = api.compile(m, "sim16")
    assert "repad" in kernels_called(compiled.package)
    report = api.run(compiled, {"x": x})
    assert report.passed
    np.testing.assert_array_equal(report.outputs["y"], x.reshape(out))
