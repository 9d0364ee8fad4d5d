"""Mixture-of-experts routing from ONNX, compiled and emulated on sim16 and checked against
onnxruntime: a router's softmax, its top-2 experts (TopK, values and int64 indices), their
weights renormalized, a per-token gather of the chosen experts' scores (GatherElements by the
run-time indices), and an expert mask from the indices (OneHot-free: Equal against a range)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ipu import api  # noqa: E402
from ipu.frontends.onnx_import import OnnxImportError, import_model  # noqa: E402


def _run(m) -> dict[str, np.ndarray]:
    compiled = api.compile(m, "sim16")
    report = api.run(compiled, seed=9)
    assert [c for c in report.checks if c.kind == "oracle"], "no oracle check"
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    return api.host_outputs(compiled.reference, report.outputs)


def test_top2_router_with_renormalized_weights_and_gathered_scores() -> None:
    tokens, d, experts = 16, 32, 8
    rng = np.random.default_rng(2)
    inits = [
        numpy_helper.from_array((rng.standard_normal((d, experts)) * 0.5).astype(np.float32), "wr"),
        numpy_helper.from_array(np.array([2], np.int64), "k"),
        numpy_helper.from_array(np.array([-1], np.int64), "ax"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "wr"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
        helper.make_node("TopK", ["probs", "k"], ["topv", "topi"], axis=-1),
        helper.make_node("ReduceSum", ["topv", "ax"], ["den"], keepdims=1),
        helper.make_node("Div", ["topv", "den"], ["weights"]),
        helper.make_node("GatherElements", ["logits", "topi"], ["chosen"], axis=1),
    ]
    g = helper.make_graph(
        nodes,
        "router",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [tokens, d])],
        [
            helper.make_tensor_value_info("weights", TensorProto.FLOAT, [tokens, 2]),
            helper.make_tensor_value_info("topi", TensorProto.INT64, [tokens, 2]),
            helper.make_tensor_value_info("chosen", TensorProto.FLOAT, [tokens, 2]),
        ],
        inits,
    )
    out = _run(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
    assert out["topi"].dtype == np.int64 and out["topi"].shape == (tokens, 2)
    assert (out["topi"][:, 0] != out["topi"][:, 1]).all()
    np.testing.assert_allclose(out["weights"].sum(axis=1), 1.0, rtol=1e-5)


def test_topk_smallest_along_a_middle_axis() -> None:
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=0)]
    g = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 4])],
        [
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 3, 4]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3, 4]),
        ],
        [numpy_helper.from_array(np.array([3], np.int64), "k")],
    )
    _run(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))


def test_topk_of_too_many_is_named() -> None:
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"])]
    g = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 200])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 100]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [2, 100])],
        [numpy_helper.from_array(np.array([100], np.int64), "k")],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"TopK.*k = 100 of 200.*64"):
        import_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
