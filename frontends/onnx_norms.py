"""Normalizations spelled with reductions and elementwise ops (`Composer`): LpNormalization
(x over its L1 or L2 norm along one axis) and LRN (each channel over a power of the sum of
squares of its neighbouring channels)."""

from __future__ import annotations

import numpy as np
import onnx

from ipu.frontends.onnx_compose import Composer
from ipu.frontends.onnx_import import _Importer, _no_attrs, float_input, lowering


@lowering("LpNormalization")
def _lp_normalization(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """x / ||x||_p along `axis` (p 1 or 2); a line whose norm is 0 stays 0 (ONNX's reference)."""
    _no_attrs(im, attrs, ("axis", "p"))
    x = float_input(im, node)
    p, axis = int(attrs.get("p", 2)), int(attrs.get("axis", -1))  # type: ignore[call-overload]
    if p not in (1, 2):
        raise im.fail(f"p = {p}: ONNX defines p = 1 or 2")
    if not -len(x.shape) <= axis < len(x.shape):
        raise im.fail(f"axis {axis} out of range for rank {len(x.shape)}")
    dt = np.dtype(x.dtype).type
    c = Composer(node)
    norm = c.node("ReduceL2" if p == 2 else "ReduceL1", [node.input[0]], axes=[axis], keepdims=1)
    zero = c.node("Equal", [norm, c.const(np.array(0, dt))])
    safe = c.node("Where", [zero, c.const(np.array(1, dt)), norm])  # a zero norm: every x is 0, and so is y
    c.lower(im, c.node("Div", [node.input[0], safe]))


@lowering("LRN")
def _lrn(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """x / (bias + alpha / size * sum of x^2 over channels [c - (size-1)//2, c + size//2... ])^beta
    over `[N, C, ...]`: the squares padded with zeros along C and the `size` shifted windows added."""
    _no_attrs(im, attrs, ("alpha", "beta", "bias", "size"))
    x = float_input(im, node)
    if "size" not in attrs:
        raise im.fail("LRN needs its size attribute")
    size = int(attrs["size"])  # type: ignore[call-overload]
    if size <= 0 or len(x.shape) < 3:
        raise im.fail(f"size {size} over an input of shape {list(x.shape)}: a positive size over [N, C, ...]")
    alpha, beta = float(attrs.get("alpha", 1e-4)), float(attrs.get("beta", 0.75))  # type: ignore[arg-type]
    bias = float(attrs.get("bias", 1.0))  # type: ignore[arg-type]
    dt = np.dtype(x.dtype).type
    rank, ch = len(x.shape), x.shape[1]
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    c = Composer(node)
    sq = c.node("Mul", [node.input[0], node.input[0]])
    pads = [0] * (2 * rank)
    pads[1], pads[rank + 1] = before, after
    padded = c.node("Pad", [sq, c.const(np.array(pads, np.int64))])
    total = None
    for k in range(size):  # channel c reads padded channels c .. c + size - 1
        bounds = [c.const(np.array([b], np.int64)) for b in (k, k + ch, 1)]  # starts, ends, axes
        window = c.node("Slice", [padded, *bounds])
        total = window if total is None else c.node("Add", [total, window])
    scaled = c.node("Add", [c.const(np.array(bias, dt)), c.node("Mul", [total, c.const(np.array(alpha / size, dt))])])
    c.lower(im, c.node("Div", [node.input[0], c.node("Pow", [scaled, c.const(np.array(beta, dt))])]))
