"""Operators lowered as their ONNX function bodies when the importer has no lowering for them or
refuses a case: an Attention with a softcap (the fused graph.attention has none) imports as the
body's matmuls, tanh and softmax and matches onnxruntime; an operator without a body still gets
its one-line diagnostic."""

from __future__ import annotations

import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from ipu import api  # noqa: E402
from ipu.frontends.onnx_import import OnnxImportError, import_model  # noqa: E402


def _attention(**attrs) -> onnx.ModelProto:
    dv = attrs.pop("dv", 8)
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], **attrs)
    shape_q, shape_kv, shape_v = [2, 3, 4, 8], [2, 3, 6, 8], [2, 3, 6, dv]
    g = helper.make_graph(
        [node],
        "att",
        [
            helper.make_tensor_value_info("q", TensorProto.FLOAT, shape_q),
            helper.make_tensor_value_info("k", TensorProto.FLOAT, shape_kv),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, shape_v),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, shape_v[-1]])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])


def test_softcapped_attention_is_its_function_body() -> None:
    m = _attention(softcap=2.0)
    text = str(import_model(m))
    assert "graph.attention" not in text and "graph.tanh" in text and "graph.softmax" in text
    compiled = api.compile(m, "sim16")
    report = api.run(compiled, seed=4)
    assert [c for c in report.checks if c.kind == "oracle"], "no oracle check"
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]


def test_an_operator_without_a_body_keeps_its_diagnostic() -> None:
    node = helper.make_node("NonMaxSuppression", ["b", "s"], ["y"])
    g = helper.make_graph(
        [node],
        "nms",
        [
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 4, 4]),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 1, 4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [1, 3])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(OnnxImportError, match="operator NonMaxSuppression is not supported"):
        import_model(m)
