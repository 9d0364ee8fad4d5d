"""Data movement and batched MatMul of computed tensors, imported from ONNX, compiled for sim16,
emulated and checked against onnxruntime: Slice, Split, Concat and Pad become graph.slice /
graph.concat / graph.pad (exchanges, no selection matmuls), a MatMul of two computed operands
one 2-D matmul per batch; and the diagnostics for what stays refused."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from test_onnx_import import ir, model, rand, runs

from ipu.frontends.onnx_import import OnnxImportError, import_model


def _ints(name: str, values: list[int]) -> tuple[str, np.ndarray]:
    return name, np.array(values, np.int64)


def test_slice_of_a_computed_tensor() -> None:
    """A window on two axes of a rank-3 tensor (negative start, clamped end): one graph.slice."""
    nodes = [
        helper.make_node("Tanh", ["x"], ["h"]),
        helper.make_node("Slice", ["h", "st", "en", "ax"], ["y"]),
    ]
    inits = dict([_ints("st", [1, -6]), _ints("en", [3, 100]), _ints("ax", [1, 2])])
    m = model(nodes, {"x": [2, 4, 8]}, {"y": [2, 2, 6]}, inits, opset=13)
    text = ir(m)
    assert "graph.slice" in text and "graph.matmul" not in text
    runs(m)


def test_strided_and_reversed_slices() -> None:
    """Steps other than 1 (every second column, the rows reversed): unit windows joined by one
    graph.concat per strided axis."""
    nodes = [
        helper.make_node("Tanh", ["x"], ["h"]),
        helper.make_node("Slice", ["h", "st", "en", "ax", "sp"], ["y"]),
    ]
    inits = dict([_ints("st", [-1, 1]), _ints("en", [-100, 8]), _ints("ax", [0, 1]), _ints("sp", [-1, 2])])
    m = model(nodes, {"x": [5, 8]}, {"y": [5, 4]}, inits, opset=13)
    text = ir(m)
    assert text.count("graph.concat") == 2 and "graph.matmul" not in text
    runs(m)


def test_broadcast_of_a_computed_tensor() -> None:
    """A computed float [4, 6] added to a [2, 3, 4, 6] tensor: ones * x (exact for every value);
    a computed integer one (a float product would not do): six copies joined by graph.concat."""
    nodes = [helper.make_node("Exp", ["b"], ["e"]), helper.make_node("Add", ["x", "e"], ["y"])]
    m = model(nodes, {"x": [2, 3, 4, 6], "b": [4, 6]}, {"y": [2, 3, 4, 6]}, opset=13)
    text = ir(m)
    assert "graph.mul" in text and "graph.concat" not in text
    runs(m)
    nodes = [
        helper.make_node("Cast", ["b"], ["bi"], to=TensorProto.INT32),
        helper.make_node("Neg", ["bi"], ["n"]),
        helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT32),
        helper.make_node("Add", ["xi", "n"], ["yi"]),
        helper.make_node("Cast", ["yi"], ["y"], to=TensorProto.FLOAT),
    ]
    m = model(nodes, {"x": [2, 3, 4, 6], "b": [4, 6]}, {"y": [2, 3, 4, 6]}, opset=13)
    assert "graph.concat" in ir(m)
    runs(m)


def test_tile_of_a_computed_tensor() -> None:
    nodes = [helper.make_node("Tanh", ["x"], ["h"]), helper.make_node("Tile", ["h", "r"], ["y"])]
    m = model(nodes, {"x": [2, 3, 4]}, {"y": [4, 3, 8]}, dict([_ints("r", [2, 1, 2])]), opset=13)
    assert ir(m).count("graph.concat") == 2
    runs(m)


def test_split_of_a_computed_tensor() -> None:
    """Split along the middle axis into unequal parts: one graph.slice per part."""
    nodes = [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Split", ["h", "sp"], ["a", "b"], axis=1)]
    m = model(nodes, {"x": [3, 5, 4]}, {"a": [3, 2, 4], "b": [3, 3, 4]}, dict([_ints("sp", [2, 3])]), opset=13)
    text = ir(m)
    assert text.count("graph.slice") == 2 and "graph.matmul" not in text
    runs(m)


def test_split_with_an_empty_part_and_shape_of_a_computed_tensor() -> None:
    """An empty split part (rotary embedding with the whole head rotated) joins as nothing; the
    static Shape of a computed tensor is a constant, so the Reshape reading it folds."""
    nodes = [
        helper.make_node("Relu", ["x"], ["h"]),
        helper.make_node("Split", ["h", "sp"], ["a", "none"], axis=1),
        helper.make_node("Neg", ["a"], ["n"]),
        helper.make_node("Concat", ["n", "none"], ["c"], axis=1),
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Reshape", ["c", "s"], ["y"]),
    ]
    m = model(nodes, {"x": [3, 4]}, {"y": [3, 4]}, dict([_ints("sp", [4, 0])]), opset=13)
    assert "graph.neg" in ir(m)
    runs(m)


def test_split_of_a_projection_keeps_per_part_matmuls() -> None:
    """A split of `x @ W` by column windows stays one matmul per part (no data moved)."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Split", ["h"], ["a", "b"], axis=1)]
    m = model(nodes, {"x": [4, 6]}, {"a": [4, 4], "b": [4, 4]}, {"w": rand(6, 8)}, opset=13)
    text = ir(m)
    assert text.count("graph.matmul") == 2 and "graph.slice" not in text
    runs(m)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_of_computed_tensors(axis: int) -> None:
    """Two computed parts and a constant one joined: one graph.concat, no selection matmul."""
    shapes = {0: ([2, 3, 4], [1, 3, 4]), 1: ([2, 3, 4], [2, 2, 4]), -1: ([2, 3, 4], [2, 3, 2])}
    sa, sc = shapes[axis]
    out = list(sa)
    out[axis] = 2 * sa[axis] + sc[axis]
    nodes = [helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Concat", ["e", "x", "c"], ["y"], axis=axis)]
    m = model(nodes, {"x": sa}, {"y": out}, {"c": rand(*sc, seed=2)}, opset=13)
    text = ir(m)
    assert "graph.concat" in text and "graph.matmul" not in text
    runs(m)


def test_pad_constant_value_and_crop() -> None:
    """Pads of 1 before and 2 after on the rows, a crop of 1 on the columns, the value 0.5."""
    nodes = [helper.make_node("Sigmoid", ["x"], ["h"]), helper.make_node("Pad", ["h", "p", "v"], ["y"])]
    inits = {"p": np.array([0, 1, -1, 0, 2, 0], np.int64), "v": np.array(0.5, np.float32)}
    m = model(nodes, {"x": [2, 4, 6]}, {"y": [2, 7, 5]}, inits, opset=13)
    text = ir(m)
    assert "graph.pad" in text and "graph.slice" in text
    runs(m)


@pytest.mark.parametrize(
    ("sa", "sb"),
    [
        ([2, 4, 6], [2, 6, 5]),  # [B, M, K] x [B, K, N]
        ([2, 2, 4, 6], [2, 2, 6, 5]),  # [B, H, M, K] x [B, H, K, N]
        ([2, 1, 4, 6], [1, 3, 6, 5]),  # broadcast batch axes on both sides
        ([4, 6], [3, 6, 5]),  # a shared lhs
        ([3, 4, 6], [1, 6, 5]),  # a shared rhs: folded into the rows, one matmul
        ([3, 4, 6], [6]),  # a vector rhs
    ],
)
def test_batched_matmul_of_computed_operands(sa: list[int], sb: list[int]) -> None:
    out = list(np.matmul(np.zeros(sa), np.zeros(sb)).shape)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"])]
    m = model(nodes, {"a": sa, "b": sb}, {"y": out}, opset=13)
    text = ir(m)
    batches = int(np.prod(out[:-2])) if len(sb) > 2 and np.prod(sb[:-2]) > 1 else 1
    if len(sa) == len(sb) > 2 and sa[:-2] == sb[:-2]:  # one batch shape: one graph.batch_matmul
        assert text.count("graph.batch_matmul") == 1 and "graph.matmul" not in text
    else:
        assert text.count("graph.matmul") == batches
    runs(m)


def test_batched_matmul_with_a_constant_operand() -> None:
    """A constant batched rhs: each batch's matrix is its own parameter."""
    nodes = [helper.make_node("MatMul", ["a", "w"], ["y"])]
    m = model(nodes, {"a": [2, 4, 6]}, {"y": [2, 4, 3]}, {"w": rand(2, 6, 3)}, opset=13)
    assert ir(m).count("graph.matmul") == 2
    runs(m)


@pytest.mark.parametrize(
    ("node", "inits", "out", "msg"),
    [
        (
            helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect"),
            dict([_ints("p", [1, 0, 1, 0])]),
            [6, 4],
            "pad mode 'reflect' is not supported (only constant)",
        ),
    ],
)
def test_refused_data_movement(node, inits, out: list[int], msg: str) -> None:
    m = model([node], {"x": [4, 4]}, {"y": out}, inits, opset=13)
    with pytest.raises(OnnxImportError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        import_model(m)


def test_long_strided_slice_is_refused() -> None:
    inits = dict([_ints("st", [0]), _ints("en", [200]), _ints("ax", [1]), _ints("sp", [2])])
    m = model(
        [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], {"x": [2, 200]}, {"y": [2, 100]}, inits
    )
    with pytest.raises(OnnxImportError, match=r"a slice with step 2 \(axis 1\) picking 100 elements is not supported"):
        import_model(m)


def test_an_empty_slice_joins_as_nothing() -> None:
    """An empty window (start = end) is an empty tensor: the concat of x with it is x."""
    nodes = [
        helper.make_node("Slice", ["x", "st", "en", "ax"], ["e"]),
        helper.make_node("Concat", ["x", "e"], ["y"], axis=0),
    ]
    inits = dict([_ints("st", [3]), _ints("en", [3]), _ints("ax", [0])])
    m = model(nodes, {"x": [4, 4]}, {"y": [4, 4]}, inits, opset=13)
    runs(m)


def test_too_many_batches_is_refused() -> None:
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [300, 2, 2], "b": [300, 2, 2]}, {"y": [300, 2, 2]})
    with pytest.raises(OnnxImportError, match="a batched MatMul of 300 batches is not supported"):
        import_model(m)


def test_unfusable_attention_chain_lowers_node_by_node() -> None:
    """A softcapped chain (Tanh between the scores and the softmax) is not one graph.attention:
    it stays op by op, Q K^T and P V as graph.batch_matmul of computed operands."""
    h, s, d = 2, 4, 8
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"]),
        helper.make_node("Div", ["s0", "cap"], ["s1"]),
        helper.make_node("Tanh", ["s1"], ["s2"]),
        helper.make_node("Mul", ["s2", "cap"], ["s3"]),
        helper.make_node("Softmax", ["s3"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    qkv = {n: [1, h, s, d] for n in "qkv"}
    m = model(nodes, qkv, {"y": [1, h, s, d]}, {"cap": np.array(2.0, np.float32)}, opset=17)
    text = ir(m)
    assert "graph.attention" not in text and text.count("graph.batch_matmul") == 2  # unrolled per head by plan-ops
    runs(m)


def test_runtime_where_mask_chain_lowers_node_by_node() -> None:
    """A Where on a condition computed at run time (a bool tensor) is no attention op's mask, so
    the chain is lowered node by node (the condition never hides a whole row: that is NaN)."""
    nodes = [
        helper.make_node("Greater", ["c", "lo"], ["cond"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"]),
        helper.make_node("Where", ["cond", "s0", "neg_inf"], ["s1"]),
        helper.make_node("Softmax", ["s1"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    qkv = {n: [1, 2, 4, 8] for n in "qkv"}
    inits = {"lo": np.array(-100, np.float32), "neg_inf": np.array(-np.inf, np.float32)}
    m = model(nodes, {**qkv, "c": [1, 1, 4, 4]}, {"y": [1, 2, 4, 8]}, inits, opset=17)
    text = ir(m)
    assert "graph.attention" not in text and "graph.where" in text
    runs(m)


def test_half_precision_windows_and_batched_matmul() -> None:
    """float16: even last-axis windows and a batched matmul, exact against onnxruntime."""
    nodes = [
        helper.make_node("Slice", ["a", "st", "en", "ax"], ["s"]),
        helper.make_node("Concat", ["s", "s"], ["c"], axis=1),
        helper.make_node("MatMul", ["c", "b"], ["y"]),
    ]
    inits = dict([_ints("st", [2]), _ints("en", [6]), _ints("ax", [2])])
    m = model(nodes, {"a": [2, 3, 8], "b": [2, 4, 6]}, {"y": [2, 6, 6]}, inits, opset=13, dtype=TensorProto.FLOAT16)
    text = ir(m)
    assert "graph.slice" in text and "xf16" in text
    runs(m)


def test_tile_with_a_zero_repeat_is_refused() -> None:
    nodes = [helper.make_node("Tile", ["x", "r"], ["y"])]
    m = model(nodes, {"x": [2, 3]}, {"y": [2, 3]}, dict([_ints("r", [1, 0])]), opset=13)
    with pytest.raises(OnnxImportError, match=r"op_type:Tile\): .*Inferred shape and existing shape differ"):
        import_model(m)
