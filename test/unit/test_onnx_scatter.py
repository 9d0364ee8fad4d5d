"""ONNX `ScatterND` and `ScatterElements` into computed data, with computed updates, at constant
indices and at indices computed at run time (a KV cache write), compiled for sim16 and compared
with onnxruntime (`frontends/onnx_scatter.py`); what stays refused at run-time indices is named."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ort = pytest.importorskip("onnxruntime")

from ipu import api  # noqa: E402


def _model(op: str, idx: np.ndarray | None, data: list[int], upd: list[int], idx_shape=(2, 1), **attrs):
    nodes = [helper.make_node("Relu", ["x"], ["d"]), helper.make_node("Neg", ["u"], ["n"])]
    nodes.append(helper.make_node(op, ["d", "i", "n"], ["y"], **attrs))
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, data),
        helper.make_tensor_value_info("u", TensorProto.FLOAT, upd),
    ]
    inits = []
    if idx is None:
        ins.append(helper.make_tensor_value_info("i", TensorProto.INT64, list(idx_shape)))
    else:
        inits.append(numpy_helper.from_array(idx, "i"))
    g = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, data)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(
    ("op", "idx", "data", "upd", "attrs"),
    [
        ("ScatterND", np.array([[1], [3]]), [4, 3, 2], [2, 3, 2], {}),  # whole [3, 2] slices
        ("ScatterND", np.array([[0, 2], [0, 2], [3, -1]]), [4, 3, 2], [3, 2], {"reduction": "add"}),  # duplicates sum
        ("ScatterND", np.array([[2, 1, 0], [2, 1, 0]]), [4, 3, 2], [2], {"reduction": "max"}),  # applied in turn
        ("ScatterElements", np.array([[1, 0, 2], [0, 2, 1]]), [3, 3], [2, 3], {"axis": 0, "reduction": "mul"}),
    ],
)
def test_scatter_matches_onnxruntime(tmp_path, op, idx, data, upd, attrs):
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(data).astype(np.float32), "u": rng.standard_normal(upd).astype(np.float32)}
    _matches_onnxruntime(tmp_path, _model(op, idx, data, upd, **attrs), feeds)


def _matches_onnxruntime(tmp_path, model, feeds) -> None:
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    report = api.run(api.compile(str(path), "sim16"), feeds)
    assert report.checks and all(c.result.passed for c in report.checks)
    np.testing.assert_allclose(report.result.outputs["y"], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("op", "ids", "data", "upd", "attrs"),
    [
        ("ScatterND", np.array([[3], [0]]), [4, 3], [2, 3], {}),  # two rows of the leading axis
        ("ScatterND", np.array([[-1]]), [6, 2, 4], [1, 2, 4], {}),  # a KV cache row, counted back
        ("ScatterND", np.array([[1], [2]]), [4, 3], [2, 3], {"reduction": "add"}),
        ("ScatterElements", np.array([[2], [0]]), [2, 5], [2, 1], {"axis": 1}),  # one position per row
        ("ScatterElements", np.array([[1, 0, 2]]), [3, 3], [1, 3], {"axis": 0, "reduction": "add"}),
    ],
)
def test_scatter_at_runtime_indices_matches_onnxruntime(tmp_path, op, ids, data, upd, attrs):
    rng = np.random.default_rng(1)
    feeds = {
        "x": rng.standard_normal(data).astype(np.float32),
        "u": rng.standard_normal(upd).astype(np.float32),
        "i": ids.astype(np.int64),
    }
    _matches_onnxruntime(tmp_path, _model(op, None, data, upd, idx_shape=ids.shape, **attrs), feeds)


@pytest.mark.parametrize(
    ("op", "data", "upd", "idx_shape", "attrs", "why"),
    [
        ("ScatterND", [4, 3], [2], (2, 2), {}, r"index tuples of length 2 computed at run time"),
        ("ScatterND", [4, 3], [2, 3], (2, 1), {"reduction": "mul"}, r"reduction 'mul' at run-time indices 'i'"),
    ],
)
def test_what_runtime_indices_cannot_scatter_is_refused(tmp_path, op, data, upd, idx_shape, attrs, why):
    path = tmp_path / "m.onnx"
    onnx.save(_model(op, None, data, upd, idx_shape=idx_shape, **attrs), path)
    with pytest.raises(api.ApiError, match=why):
        api.compile(str(path), "sim16")
