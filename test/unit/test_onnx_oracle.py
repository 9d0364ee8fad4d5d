"""The ONNX oracle: onnxruntime when it is installed (the runtime users trust), onnx.reference
otherwise or on request; both run the ONNX file itself and agree on what they compute."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ipu.frontends.onnx_oracle import onnx_oracle, onnxruntime_available  # noqa: E402


def _mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b")
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"]),
            helper.make_node("Add", ["h", "b"], ["hb"]),
            helper.make_node("Tanh", ["hb"], ["t"]),
            helper.make_node("Softmax", ["t"], ["y"], axis=-1),
        ],
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [w, b],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _numpy_mlp(m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    init = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    t = np.tanh(x @ init["w"] + init["b"])
    e = np.exp(t - t.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.skipif(not onnxruntime_available(), reason="onnxruntime is not installed")
def test_auto_prefers_onnxruntime() -> None:
    assert onnx_oracle(_mlp()).backend == "onnxruntime"


@pytest.mark.parametrize("backend", ["onnxruntime", "reference"])
def test_each_backend_computes_the_model(backend: str) -> None:
    if backend == "onnxruntime" and not onnxruntime_available():
        pytest.skip("onnxruntime is not installed")
    m = _mlp()
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    oracle = onnx_oracle(m, backend)  # type: ignore[arg-type]
    assert oracle.backend == ("onnxruntime" if backend == "onnxruntime" else "onnx.reference")
    out = oracle({"x": x})
    assert list(out) == ["y"] and out["y"].shape == (4, 16)
    np.testing.assert_allclose(out["y"], _numpy_mlp(m, x), rtol=1e-5, atol=1e-6)


def test_inputs_are_cast_to_the_model_dtype() -> None:
    """An input given as float64 (an .npz from NumPy defaults) is fed at the model's float32."""
    m = _mlp()
    x = np.random.default_rng(1).standard_normal((4, 8))
    got = onnx_oracle(m, "reference")({"x": x})["y"]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _numpy_mlp(m, x.astype(np.float32)), rtol=1e-5, atol=1e-6)


def test_unknown_backend_refused() -> None:
    with pytest.raises(ValueError, match="unknown ONNX oracle backend 'tvm'"):
        onnx_oracle(_mlp(), "tvm")  # type: ignore[arg-type]
