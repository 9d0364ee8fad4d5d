"""What torch exporters emit, in miniature: each pattern the importer recognises, built with
onnx.helper, imported to the graph op it should become, compiled for sim16, emulated and checked
against onnxruntime; and the diagnostics for what is still refused."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from test_onnx_import import model, rand, runs

from ipu.frontends.onnx_import import import_model

H, S, D = 2, 8, 16


def _attention_nodes(mask: str) -> tuple[list, dict]:
    """q, k, v [1, S, H*D] -> heads -> softmax(q k^T * s + mask) v -> [1, S, H*D] (classic exporter)."""
    shape = np.array([1, S, H, D], np.int64)
    nodes = [helper.make_node("Reshape", [n, "shape"], [f"{n}4"]) for n in ("q", "k", "v")] + [
        helper.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qh", "kt"], ["s"]),
        helper.make_node("Div", ["s", "sqrt_d"], ["scaled"]),
    ]
    inits = {"shape": shape, "sqrt_d": np.array(np.sqrt(D), np.float32), "oshape": np.array([1, S, H * D], np.int64)}
    last = "scaled"
    if mask == "causal_add":
        inits["mask"] = np.triu(np.full((S, S), np.finfo(np.float32).min, np.float32), 1)[None, None]
        nodes.append(helper.make_node("Add", ["scaled", "mask"], ["masked"]))
        last = "masked"
    elif mask == "causal_where":
        inits["cond"] = np.tril(np.ones((S, S), bool))[None, None]
        inits["fill"] = np.array(-np.inf, np.float32)
        nodes.append(helper.make_node("Where", ["cond", "scaled", "fill"], ["masked"]))
        last = "masked"
    elif mask == "bias":
        inits["mask"] = rand(1, 1, S, S)
        nodes.append(helper.make_node("Add", ["scaled", "mask"], ["masked"]))
        last = "masked"
    nodes += [
        helper.make_node("Softmax", [last], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vh"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ot", "oshape"], ["y"]),
    ]
    return nodes, inits


@pytest.mark.parametrize("mask", ["none", "causal_add", "causal_where"])
def test_attention_chain_becomes_graph_attention(mask: str) -> None:
    nodes, inits = _attention_nodes(mask)
    m = model(nodes, {n: [1, S, H * D] for n in "qkv"}, {"y": [1, S, H * D]}, inits, opset=17)
    text = str(import_model(m))
    assert text.count("graph.attention") == 1 and "graph.softmax" not in text
    assert ("causal" in text) == mask.startswith("causal")
    assert "graph.split_heads" in text and "graph.merge_heads" in text
    runs(m)


def test_attention_with_a_bias_becomes_its_bias_operand() -> None:
    """A constant that is neither all-visible nor causal is an additive bias (shared by the heads)."""
    nodes, inits = _attention_nodes("bias")
    m = model(nodes, {n: [1, S, H * D] for n in "qkv"}, {"y": [1, S, H * D]}, inits, opset=17)
    text = str(import_model(m))
    assert "bias %mask_shared" in text and "graph.softmax" not in text
    assert 'graph.parameter "mask_shared" dense<' in text and f"tensor<1x{S}x{S}xf32>" in text  # one [1, S, S]
    runs(m)


def test_fused_qkv_split_becomes_one_matmul_per_part() -> None:
    w, b = rand(32, 96), rand(96)
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["qkv"]),
        helper.make_node("Split", ["qkv"], ["q", "k", "v"], axis=1, num_outputs=3),
        helper.make_node("Mul", ["q", "k"], ["qk"]),
        helper.make_node("Add", ["qk", "v"], ["y"]),
    ]
    m = model(nodes, {"x": [8, 32]}, {"y": [8, 32]}, {"w": w, "b": b}, opset=18)
    text = str(import_model(m))
    assert text.count("graph.matmul") == 3 and "tensor<32x96xf32>" not in text  # the fused weight is gone
    runs(m)


def test_split_of_a_computed_tensor_is_two_slices() -> None:
    """Not a matmul's column range: each part is a graph.slice (an exchange, no matmul)."""
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)]
    m = model(nodes, {"x": [8, 32]}, {"a": [8, 16], "b": [8, 16]}, opset=18)
    text = str(import_model(m))
    assert text.count("graph.slice") == 2 and "graph.matmul" not in text
    runs(m)


def test_rotate_half_is_a_signed_permutation() -> None:
    half = np.array([D // 2], np.int64)
    nodes = [
        helper.make_node("Slice", ["x", "zero", "half", "minus1"], ["x1"]),
        helper.make_node("Slice", ["x", "half", "big", "minus1"], ["x2"]),
        helper.make_node("Neg", ["x2"], ["nx2"]),
        helper.make_node("Concat", ["nx2", "x1"], ["r"], axis=-1),
        helper.make_node("Mul", ["r", "sin"], ["y"]),
    ]
    inits = {
        "zero": np.array([0], np.int64),
        "half": half,
        "big": np.array([D], np.int64),
        "minus1": np.array([-1], np.int64),
        "sin": rand(1, 1, S, D),
    }
    m = model(nodes, {"x": [1, H, S, D]}, {"y": [1, H, S, D]}, inits, opset=17)
    text = str(import_model(m))
    assert "graph.matmul" in text and "rotate_half" in text
    runs(m)


def test_patch_embedding_conv_and_class_token_concat() -> None:
    nodes = [
        helper.make_node("Conv", ["img", "w", "b"], ["c"], kernel_shape=[4, 4], strides=[4, 4]),
        helper.make_node("Reshape", ["c", "flat"], ["f"]),
        helper.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Concat", ["cls", "t"], ["y"], axis=1),
    ]
    inits = {"w": rand(16, 3, 4, 4), "b": rand(16), "flat": np.array([1, 16, 16], np.int64), "cls": rand(1, 1, 16)}
    m = model(nodes, {"img": [1, 3, 16, 16]}, {"y": [1, 17, 16]}, inits, opset=17)
    text = str(import_model(m))
    assert "array<i64: 1, 3, 0, 2, 4>" in text  # the patches: one permutation of the image
    runs(m)


def test_conv_that_is_not_a_patch_embedding_is_a_graph_conv() -> None:
    nodes = [helper.make_node("Conv", ["img", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    m = model(nodes, {"img": [1, 3, 8, 8]}, {"c": [1, 4, 8, 8]}, {"w": rand(4, 3, 3, 3)}, opset=17)
    assert "graph.conv" in str(import_model(m))
    runs(m)


def test_rank4_transpose_keeping_the_last_axis() -> None:
    nodes = [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1, 3])]
    m = model(nodes, {"x": [2, 3, 4, 6]}, {"y": [4, 2, 3, 6]}, opset=17)
    assert "graph.transpose" in str(import_model(m))
    runs(m)


def test_grouped_kv_repeat_is_absorbed_by_attention() -> None:
    hq, hkv = 4, 2
    rep = np.array([1, hkv, hq // hkv, S, D], np.int64)
    nodes = []
    for n in ("k", "v"):
        nodes += [
            helper.make_node("Unsqueeze", [n, "ax2"], [f"{n}5"]),
            helper.make_node("Expand", [f"{n}5", "rep"], [f"{n}e"]),
            helper.make_node("Reshape", [f"{n}e", "qshape"], [f"{n}r"]),
        ]
    nodes += [
        helper.make_node("Transpose", ["kr"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vr"], ["y"]),
    ]
    inits = {
        "ax2": np.array([2], np.int64),
        "rep": rep,
        "qshape": np.array([1, hq, S, D], np.int64),
        "scale": np.array(0.25, np.float32),
    }
    m = model(
        nodes, {"q": [1, hq, S, D], "k": [1, hkv, S, D], "v": [1, hkv, S, D]}, {"y": [1, hq, S, D]}, inits, opset=17
    )
    text = str(import_model(m))
    assert "graph.attention" in text and "tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<4x8x16xf32>" in text
    runs(m)


def test_constant_folding_uses_onnxruntime() -> None:
    """GatherElements over a constant (BERT's token-type buffer) folds with onnxruntime."""
    nodes = [
        helper.make_node("GatherElements", ["table", "idx"], ["tt"], axis=1),
        helper.make_node("Cast", ["tt"], ["ttf"], to=onnx.TensorProto.FLOAT),
        helper.make_node("Add", ["x", "ttf"], ["y"]),
    ]
    inits = {"table": np.zeros((1, 64), np.int64), "idx": np.arange(8, dtype=np.int64)[None]}
    m = model(nodes, {"x": [1, 8]}, {"y": [1, 8]}, inits, opset=17)
    import_model(m)
    runs(m)


@pytest.mark.parametrize("perm", [[2, 1, 0], [0, 2, 1], [1, 2, 0, 3], [3, 0, 2, 1]])
def test_transposes_that_move_the_last_axis(perm: list[int]) -> None:
    """permute (last axis kept), a 2-D transpose of that view, permute again."""
    shape = [2, 3, 4] if len(perm) == 3 else [2, 3, 4, 6]
    out = [shape[p] for p in perm]
    m = model([helper.make_node("Transpose", ["x"], ["y"], perm=perm)], {"x": shape}, {"y": out}, opset=17)
    assert "graph.transpose" in str(import_model(m))
    runs(m)


def test_batched_attention_folds_the_batch_into_the_heads() -> None:
    b, h, s, d = 2, 2, 8, 16
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["sc"]),
        helper.make_node("Mul", ["sc", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    shapes = {n: [b, h, s, d] for n in "qkv"}
    m = model(nodes, shapes, {"y": [b, h, s, d]}, {"scale": np.array(0.25, np.float32)}, opset=17)
    assert "tensor<4x8x16xf32>" in str(import_model(m))
    runs(m)
