"""Evaluate one ONNX node on constant inputs, for the importer's constant folding.

onnxruntime runs the node where it is installed (what users trust, and what the oracle runs);
`onnx.reference` is the fallback, and the second opinion where onnxruntime refuses a node (an
op type or dtype it lacks). Either way the folded values are those of a real ONNX runtime, never
a restatement of ours."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper


def _ort_eval(node: onnx.NodeProto, inputs: dict[str, np.ndarray], opset: int) -> list[np.ndarray]:
    import onnxruntime as ort

    ins = [
        helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
        for k, v in inputs.items()
    ]
    outs = [helper.make_value_info(o, onnx.TypeProto()) for o in node.output if o]
    g = helper.make_graph([node], "fold", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return [np.asarray(x) for x in sess.run(None, inputs)]


def _reference_eval(node: onnx.NodeProto, inputs: dict[str, np.ndarray], opset: int) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    return [np.asarray(x) for x in ReferenceEvaluator(node, opsets={"": opset}).run(None, inputs)]


def evaluate_node(node: onnx.NodeProto, inputs: dict[str, np.ndarray], opset: int) -> list[np.ndarray]:
    """The node's outputs (in order, skipping unnamed ones) from constant `inputs`; raises the
    last runtime's error when neither can evaluate it."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return _reference_eval(node, inputs, opset)
    try:
        return _ort_eval(node, inputs, opset)
    except Exception:  # noqa: BLE001 -- onnxruntime lacks some op/dtype pairs: ask onnx.reference
        return _reference_eval(node, inputs, opset)


__all__ = ["evaluate_node"]
