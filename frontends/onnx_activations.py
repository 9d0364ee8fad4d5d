"""Piecewise activations spelled with comparisons, `Where` and the elementwise ops the importer
lowers (`Composer`): Elu, Selu, Celu, ThresholdedRelu and Shrink. The exponential reads
`min(x, 0)`, so a large positive x (whose branch is not taken) never overflows to inf."""

from __future__ import annotations

import numpy as np
import onnx

from ipu.frontends.onnx_compose import Composer
from ipu.frontends.onnx_import import _Importer, _no_attrs, float_input, lowering

SELU_ALPHA = 1.67326319217681884765625  # ONNX's defaults, as float32
SELU_GAMMA = 1.05070102214813232421875


def _exp_minus_one(c: Composer, x: str, dt: type, scale: float = 1.0) -> str:
    """exp(min(x, 0) * scale) - 1 (the negative branch's exponential)."""
    neg = c.node("Min", [x, c.const(np.array(0, dt))])
    if scale != 1.0:
        neg = c.node("Mul", [neg, c.const(np.array(scale, dt))])
    return c.node("Sub", [c.node("Exp", [neg]), c.const(np.array(1, dt))])


@lowering("Elu", "Selu", since=6)
def _elu(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Elu: x for x >= 0, alpha (e^x - 1) below; Selu: gamma (x for x > 0, alpha (e^x - 1) at or below)."""
    selu = node.op_type == "Selu"
    _no_attrs(im, attrs, ("alpha", "gamma") if selu else ("alpha",))
    x = float_input(im, node)
    dt = np.dtype(x.dtype).type
    alpha = float(attrs.get("alpha", SELU_ALPHA if selu else 1.0))  # type: ignore[arg-type]
    c = Composer(node)
    negative = c.node("Mul", [_exp_minus_one(c, node.input[0], dt), c.const(np.array(alpha, dt))])
    cond = c.node("Greater" if selu else "Less", [node.input[0], c.const(np.array(0, dt))])
    y = c.node("Where", [cond, node.input[0], negative] if selu else [cond, negative, node.input[0]])
    if selu:
        gamma = float(attrs.get("gamma", SELU_GAMMA))  # type: ignore[arg-type]
        y = c.node("Mul", [y, c.const(np.array(gamma, dt))])
    c.lower(im, y)


@lowering("Celu", since=12)
def _celu(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1))."""
    _no_attrs(im, attrs, ("alpha",))
    x = float_input(im, node)
    dt = np.dtype(x.dtype).type
    alpha = float(attrs.get("alpha", 1.0))  # type: ignore[arg-type]
    if alpha == 0.0:
        raise im.fail("alpha = 0 divides by zero")
    c = Composer(node)
    zero = c.const(np.array(0, dt))
    negative = c.node("Mul", [_exp_minus_one(c, node.input[0], dt, 1.0 / alpha), c.const(np.array(alpha, dt))])
    c.lower(im, c.node("Add", [c.node("Max", [node.input[0], zero]), c.node("Min", [negative, zero])]))


@lowering("ThresholdedRelu", since=10)
def _thresholded_relu(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """x where x > alpha, else 0."""
    _no_attrs(im, attrs, ("alpha",))
    x = float_input(im, node)
    dt = np.dtype(x.dtype).type
    c = Composer(node)
    cond = c.node("Greater", [node.input[0], c.const(np.array(float(attrs.get("alpha", 1.0)), dt))])  # type: ignore[arg-type]
    c.lower(im, c.node("Where", [cond, node.input[0], c.const(np.array(0, dt))]))


@lowering("Shrink", since=9)
def _shrink(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """x + bias below -lambd, x - bias above lambd, 0 between."""
    _no_attrs(im, attrs, ("bias", "lambd"))
    x = float_input(im, node)
    dt = np.dtype(x.dtype).type
    bias, lambd = float(attrs.get("bias", 0.0)), float(attrs.get("lambd", 0.5))  # type: ignore[arg-type]
    c = Composer(node)
    x0 = node.input[0]
    low = c.node("Less", [x0, c.const(np.array(-lambd, dt))])
    high = c.node("Greater", [x0, c.const(np.array(lambd, dt))])
    above = c.node("Where", [high, c.node("Sub", [x0, c.const(np.array(bias, dt))]), c.const(np.array(0, dt))])
    c.lower(im, c.node("Where", [low, c.node("Add", [x0, c.const(np.array(bias, dt))]), above]))
