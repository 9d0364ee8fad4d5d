"""`ScatterND`, `ScatterElements` and `Scatter` at constant indices, spelled with operators the
importer lowers. The positions written are known at compile time, so the data is viewed as rows
([positions of the indexed axes, the rest] for ScatterND, one element a row for the others)
and the updates reach their rows through a constant 0/1 matrix: `where(hit, P @ updates, data)`
(`none`: the last update of a row wins, as ONNX's reference applies them in order),
`data + P @ updates` (`add`: duplicates sum) or `where(hit, data <op> P @ updates, data)` (`mul`,
`max`, `min`: a row's repeated updates applied in turn, one such step per occurrence). Indices
computed at run time (a KV cache written at a run-time position) are refused by name.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from ipu.frontends.onnx_compose import Composer
from ipu.frontends.onnx_import import Val, _Importer, _no_attrs, checked_indices, lowering, value_shape

REDUCTIONS = ("none", "add", "mul", "max", "min")


def _reduction(im: _Importer, attrs: dict[str, object]) -> str:
    r = attrs.get("reduction", b"none")
    r = r.decode() if isinstance(r, bytes) else str(r)
    if r not in REDUCTIONS:
        raise im.fail(f"reduction '{r}' is not one of {', '.join(REDUCTIONS)}")
    return r


def _scatter_rows(
    im: _Importer, node: onnx.NodeProto, rows: np.ndarray, shape: tuple[int, int], upd_rows: int, reduction: str
) -> None:
    """`node`'s output: its data viewed as `shape` [R, C] with update row u written to row
    rows[u] (the updates viewed as [len(rows), C])."""
    r_count, c_count = shape
    data, upd = im.get(node.input[0]), im.get(node.input[2])
    like = next((v for v in (data, upd) if isinstance(v, Val)), None)
    if like is None:
        raise im.fail("constant scatter could not be folded")
    if np.dtype(like.dtype).kind != "f":
        raise im.fail(f"data of element type {np.dtype(like.dtype)}: only float data is scattered")
    dt = np.dtype(like.dtype)
    c = Composer(node)
    d = c.node("Reshape", [node.input[0], c.const(np.array([r_count, c_count], np.int64))])
    u = c.node("Reshape", [node.input[2], c.const(np.array([upd_rows, c_count], np.int64))])
    # which updates land together: all at once for none (the last of a row kept) and add (summed);
    # for mul, max and min one level per occurrence, applied in order
    level = np.zeros(len(rows), np.int64)
    seen: dict[int, int] = {}
    for k, r in enumerate(rows.tolist()):
        level[k] = seen.get(r, 0)
        seen[r] = level[k] + 1
    if reduction in ("none", "add"):
        level[:] = 0
    acc = d
    for lv in range(int(level.max(initial=-1)) + 1):
        p = np.zeros((r_count, len(rows)), dt)
        for k in np.nonzero(level == lv)[0].tolist():
            if reduction == "none":
                p[rows[k]] = 0  # the last update of a row wins
            p[rows[k], k] = 1
        s = c.node("MatMul", [c.const(p), u])
        if reduction == "add":
            acc = c.node("Add", [acc, s])
            continue
        if reduction != "none":
            s = c.node({"mul": "Mul", "max": "Max", "min": "Min"}[reduction], [acc, s])
        acc = c.node("Where", [c.const(p.any(axis=1, keepdims=True)), s, acc])
    c.lower(im, c.node("Reshape", [acc, c.const(np.array(value_shape(data), np.int64))]))


@lowering("ScatterND", since=11)
def _scatter_nd(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("reduction",))
    reduction = _reduction(im, attrs)
    data, idx = im.get(node.input[0]), im.get(node.input[1])
    if isinstance(idx, Val):
        raise im.fail(f"indices '{node.input[1]}' are computed at run time; only constant positions are scattered")
    ds, ix = value_shape(data), np.asarray(idx, np.int64)
    q = ix.shape[-1] if ix.ndim else 0
    if not 1 <= q <= len(ds):
        raise im.fail(f"index tuples of length {q} into a rank-{len(ds)} tensor")
    tuples = checked_indices(im, ix.reshape(-1, q), ds[:q], range(q), "ScatterND ")
    rows = np.ravel_multi_index(tuple(tuples.T), ds[:q]) if len(tuples) else np.zeros(0, np.int64)
    _scatter_rows(im, node, rows, (math.prod(ds[:q]), math.prod(ds[q:])), len(tuples), reduction)


@lowering("ScatterElements", "Scatter", since=9)
def _scatter_elements(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("axis", "reduction"))
    reduction = _reduction(im, attrs)
    data, idx, upd = (im.get(i) for i in node.input)
    if isinstance(idx, Val):
        raise im.fail(f"indices '{node.input[1]}' are computed at run time; only constant positions are scattered")
    ds, ix = value_shape(data), np.asarray(idx, np.int64)
    if ix.shape != value_shape(upd) or ix.ndim != len(ds):
        raise im.fail(
            f"indices {list(ix.shape)} and updates {list(value_shape(upd))} must match, of the data's rank {len(ds)}"
        )
    axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
    if not -len(ds) <= axis < len(ds):
        raise im.fail(f"axis {axis} out of range for rank {len(ds)}")
    axis %= len(ds)
    along = checked_indices(im, ix[..., None], [ds[axis]], [axis], f"{node.op_type} ")[..., 0]
    coords = list(np.indices(ix.shape))
    coords[axis] = along
    rows = np.ravel_multi_index(tuple(c.reshape(-1) for c in coords), ds)
    _scatter_rows(im, node, rows, (math.prod(ds), 1), ix.size, reduction)
