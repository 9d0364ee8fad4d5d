"""Attention with an additive bias or a mask, imported from ONNX, compiled for sim16, emulated
and checked against onnxruntime: MatMul/Softmax chains with constant or run-time terms added to
the scores (T5's position bias, padding masks), the Attention op's `attn_mask` (bool and float),
and the diagnostics for what stays refused."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from test_onnx_import import model, rand, runs

from ipu import api
from ipu.frontends.onnx_import import OnnxImportError, import_model

H, S, D = 2, 8, 16


def _chain(terms: list[tuple[str, str]], scale_first: bool = True, guard: bool = False) -> list:
    """q, k, v [1, H, S, D] -> softmax(terms applied to q k^T) v, the terms in order: ("add",
    name), ("where", cond name) (hidden keys -inf) or ("scale", name of a scalar to divide by)."""
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"]),
    ]
    last = "s0"
    for i, (kind, name) in enumerate(terms):
        out = f"s{i + 1}"
        if kind == "add":
            nodes.append(helper.make_node("Add", [last, name], [out]))
        elif kind == "where":
            nodes.append(helper.make_node("Where", [name, last, "neg_inf"], [out]))
        else:
            nodes.append(helper.make_node("Div", [last, name], [out]))
        last = out
    nodes.append(helper.make_node("Softmax", [last], ["p"], axis=-1))
    if guard:  # the dynamo exporter's guard: fully masked rows (NaN) become 0
        nodes += [helper.make_node("IsNaN", ["p"], ["nan"]), helper.make_node("Where", ["nan", "zero", "p"], ["pg"])]
    nodes.append(helper.make_node("MatMul", ["pg" if guard else "p", "v"], ["y"]))
    return nodes


QKV = {n: [1, H, S, D] for n in "qkv"}
COMMON = {
    "sqrt_d": np.array(np.sqrt(D), np.float32),
    "neg_inf": np.array(-np.inf, np.float32),
    "zero": np.array(0, np.float32),
}


def _attention_line(text: str) -> str:
    lines = [x for x in text.splitlines() if "graph.attention" in x]
    assert len(lines) == 1 and "graph.softmax" not in text, text
    return lines[0]


def test_t5_position_bias_per_head_unscaled() -> None:
    """T5: scores + a constant [1, H, S, S] bias, no scale."""
    m = model(_chain([("add", "pos")]), QKV, {"y": [1, H, S, D]}, {**COMMON, "pos": rand(1, H, S, S, seed=4)}, opset=17)
    text = str(import_model(m))
    line = _attention_line(text)
    assert "scale = 1.000000e+00" in line and "tensor<2x8x8xf32>) ->" in line
    bias = line.split(" bias ")[1].split()[0]
    assert f"{bias} = graph.reshape %pos :" in text  # the model's own constant, viewed per head
    runs(m)


def test_bias_before_the_scale_is_scaled_with_the_scores() -> None:
    """(q k^T + b) / sqrt(d) + m: b is divided by sqrt(d), m is not; and a shared [S, S] term."""
    inits = {**COMMON, "b": rand(1, H, S, S, seed=5), "m": rand(S, S, seed=6)}
    m = model(_chain([("add", "b"), ("scale", "sqrt_d"), ("add", "m")]), QKV, {"y": [1, H, S, D]}, inits, opset=17)
    line = _attention_line(str(import_model(m)))
    assert "bias %" in line and "scale = 2.500000e-01" in line
    runs(m)


def test_padding_mask_and_causal_mask_together() -> None:
    """A causal mask stays `causal`; a constant padding mask (the last two keys hidden, a Where
    on a bool condition) becomes a shared bias next to it."""
    cond = np.ones((1, 1, 1, S), bool)
    cond[..., -2:] = False
    causal = np.triu(np.full((S, S), -np.inf, np.float32), 1)
    inits = {**COMMON, "cond": cond, "causal": causal}
    nodes = _chain([("scale", "sqrt_d"), ("add", "causal"), ("where", "cond")])
    m = model(nodes, QKV, {"y": [1, H, S, D]}, inits, opset=17)
    line = _attention_line(str(import_model(m)))
    assert "causal" in line and "bias %" in line and "tensor<1x8x8xf32>) ->" in line
    runs(m)


@pytest.mark.parametrize("shape", [[1, H, S, S], [1, 1, S, S], [S, S]])
def test_bias_computed_at_run_time(shape: list[int]) -> None:
    """A bias that is a model input (per head or shared) reaches graph.attention as a value."""
    m = model(_chain([("scale", "sqrt_d"), ("add", "rb")]), {**QKV, "rb": shape}, {"y": [1, H, S, D]}, COMMON, opset=17)
    line = _attention_line(str(import_model(m)))
    assert "bias %" in line
    runs(m)


def test_run_time_bias_before_the_scale_is_scaled() -> None:
    m = model(
        _chain([("add", "rb"), ("scale", "sqrt_d")]), {**QKV, "rb": [1, H, S, S]}, {"y": [1, H, S, D]}, COMMON, opset=17
    )
    assert "graph.mul" in str(import_model(m))
    runs(m)


def test_fully_masked_row_stays_op_by_op_without_the_nan_guard_and_is_zero_with_it() -> None:
    """ONNX's softmax of a row of -inf is NaN, which graph.attention (a row of zeros) does not
    compute: unguarded, the chain stays op by op; the dynamo exporter's guard makes such a row 0,
    which graph.attention gives."""
    cond = np.ones((1, 1, S, S), bool)
    cond[..., 3, :] = False
    inits = {**COMMON, "cond": cond}
    m = model(_chain([("where", "cond")]), QKV, {"y": [1, H, S, D]}, inits, opset=17)
    text = str(import_model(m))
    assert "graph.attention" not in text and "graph.softmax" in text
    m = model(_chain([("where", "cond")], guard=True), QKV, {"y": [1, H, S, D]}, inits, opset=17)
    assert "bias %" in _attention_line(str(import_model(m)))
    runs(m)


def test_where_on_a_run_time_condition_lowers_node_by_node() -> None:
    """A Where mask on a condition computed at run time (a bool tensor) is no attention bias:
    the chain is lowered node by node (graph.where), still checked against onnxruntime."""
    nodes = [helper.make_node("Greater", ["c", "lo"], ["cond"]), *_chain([("where", "cond")])]
    inits = {**COMMON, "lo": np.array(-100, np.float32)}  # never hides a whole row (that is NaN)
    m = model(nodes, {**QKV, "c": [1, 1, S, S]}, {"y": [1, H, S, D]}, inits, opset=17)
    text = str(import_model(m))
    assert "graph.attention" not in text and "graph.where" in text
    runs(m)


def _attention_op(mask: np.ndarray | None, runtime_mask: list[int] | None = None, **attrs: object):
    ins = ["q", "k", "v", "mask" if mask is not None or runtime_mask else ""]
    node = helper.make_node("Attention", [i for i in ins if i] if ins[3] else ins[:3], ["y"], **attrs)
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, H, S, D]) for n in "qkv"]
    inits = []
    if mask is not None:
        dt = TensorProto.BOOL if mask.dtype == bool else TensorProto.FLOAT
        inits.append(helper.make_tensor("mask", dt, list(mask.shape), mask.flatten().tolist()))
    if runtime_mask:
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, runtime_mask))
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, H, S, D])]
    g = helper.make_graph([node], "m", inputs, out, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])


def test_attention_op_bool_mask_with_a_fully_masked_row() -> None:
    """True keeps a key; a row with none left is 0, as onnxruntime's Attention gives."""
    mask = np.random.default_rng(2).random((S, S)) < 0.7
    mask[:, 0] = True
    mask[5, :] = False
    m = _attention_op(mask)
    assert "bias %mask" in _attention_line(str(import_model(m)))
    report = runs(m)
    np.testing.assert_array_equal(report.outputs["y"][0, :, 5], 0)


def test_attention_op_float_mask_per_head() -> None:
    runs(_attention_op(rand(1, H, S, S, seed=8)))


def test_attention_op_short_mask_hides_the_keys_past_it() -> None:
    """A mask shorter than the keys is padded with hidden keys (the ONNX definition; the oracle
    is onnx.reference: onnxruntime insists on a full-length mask without a KV cache)."""
    short = np.random.default_rng(3).random((S, S - 3)) < 0.8
    short[:, 0] = True
    m = _attention_op(short)
    assert "bias %" in _attention_line(str(import_model(m)))
    c = api.compile(m, "sim16")
    c.oracle = lambda feeds: {"y": ReferenceEvaluator(m).run(None, feeds)[0]}
    report = api.run(c, seed=3)
    assert report.passed and any(x.kind == "oracle" for x in report.checks)


def test_attention_op_constant_masks_that_are_no_bias() -> None:
    assert "bias" not in _attention_line(str(import_model(_attention_op(np.ones((S, S), bool)))))
    line = _attention_line(str(import_model(_attention_op(np.tril(np.ones((S, S), bool))))))
    assert "causal" in line and "bias" not in line


def test_attention_op_mask_computed_at_run_time() -> None:
    m = _attention_op(None, runtime_mask=[1, 1, S, S], is_causal=1)
    line = _attention_line(str(import_model(m)))
    assert "causal" in line and "bias %" in line
    runs(m)


@pytest.mark.parametrize(
    ("inputs", "attrs"),
    [
        (["q", "k", "v"], {"softcap": 2.0}),
        (["q", "k", "v"], {"softcap": 0.5, "scale": 0.25}),
    ],
)
def test_attention_op_cases_the_fused_op_lacks_run_op_by_op(inputs: list[str], attrs: dict) -> None:
    """A softcap, which graph.attention does not model, imports as the Attention function body's
    primitive ops (onnx_functions) and matches the oracle (a KV cache does too: the node tests;
    onnxruntime refuses this one's shapes)."""
    node = helper.make_node("Attention", inputs, ["y"], **attrs)
    names = [i for i in inputs if i]
    vis = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, H, S, D]) for n in names]
    g = helper.make_graph([node], "m", vis, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, H, S, D])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    assert "graph.attention" not in str(import_model(m))
    runs(m)


def test_attention_op_causal_with_more_keys_than_queries() -> None:
    """is_causal with S < Sk: the mask aligns top-left (query i sees keys 0 .. i), a constant bias."""
    vis = [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, H, 4, D])]
    vis += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, H, 6, D]) for n in "kv"]
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1)
    g = helper.make_graph([node], "m", vis, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, H, 4, D])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    line = _attention_line(str(import_model(m)))
    assert "causal" not in line and "bias %" in line and "tensor<1x4x6xf32>) ->" in line
    runs(m)


def test_attention_op_mask_that_does_not_broadcast_is_refused() -> None:
    m = _attention_op(rand(3, S, S, seed=9))  # 3 heads' masks for 2 heads
    with pytest.raises(OnnxImportError, match=r"attention bias terms of shapes \[\[3, 8, 8\]\] do not broadcast"):
        import_model(m)
