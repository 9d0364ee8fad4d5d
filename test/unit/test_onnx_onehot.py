"""ONNX `OneHot` of run-time int64 indices (negative ones count back from depth, out-of-range
ones give a row of `off`), along the last and a middle axis, compiled for sim16 and compared
with numpy; and its refusal of a run-time depth."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ipu import api  # noqa: E402


def _model(axis: int, out_shape: list[int], depth_input: bool = False):
    inits = [numpy_helper.from_array(np.array([-1.0, 3.0], np.float32), "values")]
    ins = [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 5])]
    if depth_input:
        ins.append(helper.make_tensor_value_info("depth", TensorProto.INT64, [1]))
    else:
        inits.append(numpy_helper.from_array(np.array([6], np.int64), "depth"))
    node = helper.make_node("OneHot", ["ids", "depth", "values"], ["y"], axis=axis)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)
    return helper.make_model(
        helper.make_graph([node], "g", ins, [out], inits), opset_imports=[helper.make_opsetid("", 17)]
    )


@pytest.mark.parametrize(("axis", "shape"), [(-1, [2, 5, 6]), (1, [2, 6, 5])])
def test_one_hot_matches_numpy(tmp_path, axis, shape):
    ids = np.array([[0, 5, -1, -6, 2], [6, -7, 3, 1, 4]], np.int64)  # 6 and -7 lie outside [-6, 6)
    want = np.where(np.equal(np.mod(ids, 6)[..., None], np.arange(6)) & ((ids >= -6) & (ids < 6))[..., None], 3.0, -1.0)
    want = np.moveaxis(want, -1, axis).astype(np.float32)
    path = tmp_path / "m.onnx"
    onnx.save(_model(axis, shape), path)
    report = api.run(api.compile(str(path), "sim16"), {"ids": ids})
    assert report.checks and all(c.result.passed for c in report.checks)
    np.testing.assert_array_equal(report.result.outputs["y"], want)


def test_one_hot_of_a_runtime_depth_is_refused(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_model(-1, [2, 5, 6], depth_input=True), path)
    with pytest.raises(api.ApiError, match=r"OneHot.*depth and values must be constants"):
        api.compile(str(path), "sim16")
