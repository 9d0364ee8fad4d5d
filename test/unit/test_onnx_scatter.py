"""ONNX `ScatterND` and `ScatterElements` at constant indices into computed data, with computed
updates (`frontends/onnx_scatter.py`), compiled for sim16 and compared with onnxruntime;
run-time indices are refused by name."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ort = pytest.importorskip("onnxruntime")

from ipu import api  # noqa: E402


def _model(op: str, idx: np.ndarray | None, data: list[int], upd: list[int], **attrs):
    nodes = [helper.make_node("Relu", ["x"], ["d"]), helper.make_node("Neg", ["u"], ["n"])]
    nodes.append(helper.make_node(op, ["d", "i", "n"], ["y"], **attrs))
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, data),
        helper.make_tensor_value_info("u", TensorProto.FLOAT, upd),
    ]
    inits = []
    if idx is None:
        ins.append(helper.make_tensor_value_info("i", TensorProto.INT64, [2, 1]))
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
    model = _model(op, idx, data, upd, **attrs)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    report = api.run(api.compile(str(path), "sim16"), feeds)
    assert report.checks and all(c.result.passed for c in report.checks)
    np.testing.assert_allclose(report.result.outputs["y"], want, rtol=1e-6, atol=1e-6)


def test_runtime_scatter_indices_are_refused(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_model("ScatterND", None, [4, 3], [2, 3]), path)
    with pytest.raises(api.ApiError, match=r"ScatterND.*indices 'i' are computed at run time"):
        api.compile(str(path), "sim16")
