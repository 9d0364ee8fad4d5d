"""Losses from ONNX: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (class weights,
ignore_index, reductions none / sum / mean), as evaluation graphs compute them.

The class axis moves last, so each sample is a row of C scores; the target's score is the row's
element at the label, a `graph.gather` of the [R C, 1] view at r C + label (the label clamped
into [0, C): a valid model's labels lie there or equal ignore_index, whose samples weigh 0).
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from ipu.dialects import graph as g
from ipu.frontends.onnx_import import (
    _Importer,
    _log_softmax_rows,
    _no_attrs,
    _val_input,
    lowering,
)
from ipu.frontends.onnx_routing import pick_in_rows
from ipu.frontends.value_builder import (
    Val,
    _reduce_rows,
    _tt,
    collapsed,
    transpose_value,
)


def _rows_last(im: _Importer, x: Val) -> tuple[Val, list[int]]:
    """[N, C, d...] with C moved last, and the permutation."""
    rank = len(x.shape)
    perm = [0, *range(2, rank), 1]
    return (x if rank == 2 else transpose_value(im, x, perm, None)), perm


def _nll(
    im: _Importer,
    logp: Val,
    target_name: str,
    weight_name: str | None,
    reduction: str,
    ignore: int | None,
    out_name: str,
) -> None:
    """The loss of log-probabilities `logp` [N, C, d...] against the labels, into `out_name`."""
    if len(logp.shape) < 2:
        raise im.fail(f"input of shape {list(logp.shape)}: [N, C, d...] expected")
    dt = logp.dtype
    n, c = logp.shape[:2]
    lead = (n, *logp.shape[2:])
    rows = math.prod(lead)
    x, _ = _rows_last(im, logp)
    table = im.raw_reshape(x.ssa, (rows, c), dt)
    t = im.get(target_name)
    tshape = tuple(np.shape(t)) if not isinstance(t, Val) else t.shape
    if tuple(tshape) != lead:
        raise im.fail(f"target of shape {list(tshape)} for input {list(logp.shape)}: {list(lead)} expected")
    like_i = Val(table, (rows,), np.int64)
    tv = im.val(np.asarray(t).astype(np.int64), like_i, target_name) if not isinstance(t, Val) else t
    tflat = Val(im.raw_reshape(tv.ssa, (1, rows), np.int32), (1, rows), np.int64)
    valid = None
    if ignore is not None:
        valid = im.binary_values("equal", tflat, np.array([ignore], np.int64), "", f"{out_name}.ignore", None)
        valid = Val(im.emit(g.NotOp(valid.ssa)), valid.shape, np.bool_)
    # the label clamped into [0, C): an ignored (or invalid) label reads some class, weighted 0
    lo = im.binary_values("max", tflat, np.array([0], np.int64), "", f"{out_name}.lo", None)
    safe = im.binary_values("min", lo, np.array([c - 1], np.int64), "", f"{out_name}.hi", None)
    safe = Val(safe.ssa, safe.shape, np.int64, (0, c - 1))
    col = Val(im.raw_reshape(safe.ssa, (rows, 1), np.int32), (rows, 1), np.int64, (0, c - 1))
    picked_row = im.raw_reshape(pick_in_rows(im, table, col, dt, out_name), (1, rows), dt)
    w = None  # [1, rows] per-sample weights
    if weight_name:
        wc = im.get(weight_name)
        if isinstance(wc, Val):
            wtab = im.raw_reshape(wc.ssa, (c, 1), dt)
        else:
            wtab = im.param(np.asarray(wc).astype(dt).reshape(c, 1), dt, (c, 1), weight_name)
        sid = im.raw_reshape(safe.ssa, (rows,), np.int32)
        w = im.raw_reshape(im.emit(g.GatherOp(wtab, sid, _tt((rows, 1), dt))), (1, rows), dt)
    if valid is not None:
        ones = im.param(np.array(1.0), dt, (1, rows), f"{out_name}.one")
        zero = im.param(np.array(0.0), dt, (1, rows), f"{out_name}.zero")
        w = im.emit(g.WhereOp(valid.ssa, w if w is not None else ones, zero))
    loss = im.emit(g.NegOp(picked_row))
    if w is not None:
        loss = im.emit(g.MulOp(loss, w, loss.type))
    if reduction == "none":
        im.vals[out_name] = Val(im.raw_reshape(loss, collapsed(lead), dt, out_name), lead, dt)
        return
    total = _reduce_rows(im, loss, "sum", dt, (1,), None)
    if reduction == "mean":
        den = (
            _reduce_rows(im, w, "sum", dt, (1,), None)
            if w is not None
            else im.param(np.array(float(rows)), dt, (1,), f"{out_name}.count")
        )
        total = im.emit(g.DivOp(total, den, total.type))
    im.vals[out_name] = Val(im.raw_reshape(total, (1,), dt, out_name), (), dt)


def _loss_attrs(im: _Importer, attrs: dict[str, object]) -> tuple[str, int | None]:
    _no_attrs(im, attrs, ("reduction", "ignore_index"))
    red = attrs.get("reduction", b"mean")
    red = red.decode() if isinstance(red, bytes) else str(red)
    if red not in ("none", "sum", "mean"):
        raise im.fail(f"reduction {red!r} is not one of none, sum, mean")
    ii = attrs.get("ignore_index")
    return red, None if ii is None else int(ii)  # type: ignore[call-overload]


@lowering("NegativeLogLikelihoodLoss", since=12)
def _nll_loss(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    red, ii = _loss_attrs(im, attrs)
    x = _val_input(im, node)
    if np.dtype(x.dtype).kind != "f":
        raise im.fail(f"input of {np.dtype(x.dtype)} values; floats expected")
    w = node.input[2] if len(node.input) > 2 and node.input[2] else None
    _nll(im, x, node.input[1], w, red, ii, node.output[0])


@lowering("SoftmaxCrossEntropyLoss", since=12)
def _sce_loss(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """The log-softmax over the class axis, then the negative log-likelihood; the optional
    second output is the log-probabilities themselves."""
    red, ii = _loss_attrs(im, attrs)
    x = _val_input(im, node)
    if np.dtype(x.dtype).kind != "f" or len(x.shape) < 2:
        raise im.fail(f"scores of {np.dtype(x.dtype)} {list(x.shape)}: floats [N, C, d...] expected")
    xl, perm = _rows_last(im, x)
    lp_last = _log_softmax_rows(im, xl, len(xl.shape) - 1, None)
    logp = (
        lp_last if len(x.shape) == 2 else transpose_value(im, lp_last, [perm.index(a) for a in range(len(perm))], None)
    )
    w = node.input[2] if len(node.input) > 2 and node.input[2] else None
    _nll(im, logp, node.input[1], w, red, ii, node.output[0])
    if len(node.output) > 1 and node.output[1]:
        name = node.output[1]
        im.vals[name] = Val(im.raw_reshape(logp.ssa, collapsed(logp.shape), x.dtype, name), logp.shape, x.dtype)
