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
from onnx import helper

from ipu.frontends.onnx_import import Val, _Importer, _no_attrs, lowering

REDUCTIONS = ("none", "add", "mul", "max", "min")


def _reduction(im: _Importer, attrs: dict[str, object]) -> str:
    r = attrs.get("reduction", b"none")
    r = r.decode() if isinstance(r, bytes) else str(r)
    if r not in REDUCTIONS:
        raise im.fail(f"reduction '{r}' is not one of {', '.join(REDUCTIONS)}")
    return r


def _checked(im: _Importer, idx: np.ndarray, sizes: np.ndarray, what: str) -> np.ndarray:
    """`idx` (..., k) within [-size, size) of each of the k axes, negatives counted back."""
    bad = (idx < -sizes) | (idx >= sizes)
    if bad.any():
        at = np.argwhere(bad)[0]
        axis = int(at[-1]) if idx.ndim > 1 else 0
        raise im.fail(
            f"{what} index {int(idx[tuple(at)])} out of range for axis {axis} of size {int(sizes.flat[axis])}"
        )
    return idx % sizes


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
    o = node.output[0]
    pre = f"{o}.scatter"
    consts = {
        f"{pre}.rows": np.array([r_count, c_count], np.int64),
        f"{pre}.upd": np.array([upd_rows, c_count], np.int64),
        f"{pre}.shape": np.array(like.shape if isinstance(data, Val) else np.shape(data), np.int64),
    }
    nodes = [
        helper.make_node("Reshape", [node.input[0], f"{pre}.rows"], [f"{pre}.d"], name=f"{pre}.d"),
        helper.make_node("Reshape", [node.input[2], f"{pre}.upd"], [f"{pre}.u"], name=f"{pre}.u"),
    ]
    # which updates land together: all at once for none (the last of a row kept) and add (summed);
    # for mul, max and min one level per occurrence, applied in order
    level = np.zeros(len(rows), np.int64)
    seen: dict[int, int] = {}
    for u, r in enumerate(rows.tolist()):
        level[u] = seen.get(r, 0)
        seen[r] = level[u] + 1
    if reduction in ("none", "add"):
        level[:] = 0
    acc = f"{pre}.d"
    for lv in range(int(level.max(initial=-1)) + 1):
        p = np.zeros((r_count, len(rows)), dt)
        for u in np.nonzero(level == lv)[0].tolist():
            if reduction == "none":
                p[rows[u]] = 0  # the last update of a row wins
            p[rows[u], u] = 1
        hit = p.any(axis=1, keepdims=True)
        tag = f"{pre}.{lv}"
        consts[f"{tag}.p"], consts[f"{tag}.hit"] = p, hit
        nodes.append(helper.make_node("MatMul", [f"{tag}.p", f"{pre}.u"], [f"{tag}.s"], name=f"{tag}.s"))
        if reduction == "add":
            nodes.append(helper.make_node("Add", [acc, f"{tag}.s"], [f"{tag}.y"], name=f"{tag}.y"))
        else:
            new = f"{tag}.s"
            if reduction != "none":
                op = {"mul": "Mul", "max": "Max", "min": "Min"}[reduction]
                nodes.append(helper.make_node(op, [acc, f"{tag}.s"], [f"{tag}.r"], name=f"{tag}.r"))
                new = f"{tag}.r"
            nodes.append(helper.make_node("Where", [f"{tag}.hit", new, acc], [f"{tag}.y"], name=f"{tag}.y"))
        acc = f"{tag}.y"
    nodes.append(helper.make_node("Reshape", [acc, f"{pre}.shape"], [o], name=f"{pre}.out"))
    im.lower_nodes(nodes, consts)


def _shape(v: Val | np.ndarray) -> tuple[int, ...]:
    return tuple(v.shape) if isinstance(v, Val) else tuple(np.shape(v))


@lowering("ScatterND", since=11)
def _scatter_nd(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("reduction",))
    reduction = _reduction(im, attrs)
    data, idx = im.get(node.input[0]), im.get(node.input[1])
    if isinstance(idx, Val):
        raise im.fail(f"indices '{node.input[1]}' are computed at run time; only constant positions are scattered")
    ds, ix = _shape(data), np.asarray(idx, np.int64)
    q = ix.shape[-1] if ix.ndim else 0
    if not 1 <= q <= len(ds):
        raise im.fail(f"index tuples of length {q} into a rank-{len(ds)} tensor")
    tuples = _checked(im, ix.reshape(-1, q), np.asarray(ds[:q], np.int64), "ScatterND")
    rows = np.ravel_multi_index(tuple(tuples.T), ds[:q]) if len(tuples) else np.zeros(0, np.int64)
    _scatter_rows(im, node, rows, (math.prod(ds[:q]), math.prod(ds[q:])), len(tuples), reduction)


@lowering("ScatterElements", "Scatter", since=9)
def _scatter_elements(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("axis", "reduction"))
    reduction = _reduction(im, attrs)
    data, idx, upd = (im.get(i) for i in node.input)
    if isinstance(idx, Val):
        raise im.fail(f"indices '{node.input[1]}' are computed at run time; only constant positions are scattered")
    ds, ix = _shape(data), np.asarray(idx, np.int64)
    if ix.shape != _shape(upd) or ix.ndim != len(ds):
        raise im.fail(
            f"indices {list(ix.shape)} and updates {list(_shape(upd))} must match, of the data's rank {len(ds)}"
        )
    axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
    if not -len(ds) <= axis < len(ds):
        raise im.fail(f"axis {axis} out of range for rank {len(ds)}")
    axis %= len(ds)
    along = _checked(im, ix, np.asarray(ds[axis], np.int64), node.op_type)
    coords = list(np.indices(ix.shape))
    coords[axis] = along
    rows = np.ravel_multi_index(tuple(c.reshape(-1) for c in coords), ds)
    _scatter_rows(im, node, rows, (math.prod(ds), 1), ix.size, reduction)
