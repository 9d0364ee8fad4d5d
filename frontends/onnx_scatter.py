"""`ScatterND`, `ScatterElements` and `Scatter` at constant indices, spelled with operators the
importer lowers. The positions written are known at compile time, so the data is viewed as rows
([positions of the indexed axes, the rest] for ScatterND, one element a row for the others)
and the updates reach their rows through a constant 0/1 matrix: `where(hit, P @ updates, data)`
(`none`: the last update of a row wins, as ONNX's reference applies them in order),
`data + P @ updates` (`add`: duplicates sum) or `where(hit, data <op> P @ updates, data)` (`mul`,
`max`, `min`: a row's repeated updates applied in turn, one such step per occurrence).

Indices computed at run time (a KV cache written at a run-time position: the dynamo exporter's
`index_copy_` is a ScatterND of index tuples of length 1, the classic exporter's a
ScatterElements) are compared with every position at run time: the 0/1 matrix is
`Equal(positions, indices)` (a negative index counting back from the axis' end), so
`where(hit, P @ updates, data)` again (a ScatterElements' rows summed per element instead of a
matmul). Reductions `none` and `add` only; an index out of range writes nothing (ONNX leaves
it undefined), and two updates of one position under `none` add (ONNX leaves that undefined too).
`TensorScatter` (opset 24's KV cache update, linear or circular) is the same where, its hits a
comparison of the write index with a constant table of positions less update rows.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from ipu.frontends.onnx_compose import Composer
from ipu.frontends.onnx_import import (
    _Importer,
    _no_attrs,
    checked_indices,
    lowering,
)
from ipu.frontends.value_builder import (
    Val,
    value_shape,
)

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
        _scatter_nd_runtime(im, node, idx, reduction)
        return
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
        _scatter_elements_runtime(im, node, idx, int(attrs.get("axis", 0)), reduction)  # type: ignore[call-overload]
        return
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


def _runtime_reduction(im: _Importer, node: onnx.NodeProto, reduction: str, data: Val | np.ndarray) -> np.dtype:
    if reduction not in ("none", "add"):
        raise im.fail(f"reduction '{reduction}' at run-time indices '{node.input[1]}': only none and add are scattered")
    if np.dtype(data.dtype).kind != "f":
        raise im.fail(f"data of element type {np.dtype(data.dtype)}: only float data is scattered")
    return np.dtype(data.dtype)


def _hits(c: Composer, idx: str, positions: np.ndarray, extent: int) -> str:
    """1.0 where an index names a position (directly, or counted back from the end), else 0.0."""
    direct = c.node("Equal", [idx, c.const(positions)])
    back = c.node("Equal", [idx, c.const(positions - extent)])
    return c.node("Or", [direct, back])


def _write(
    im: _Importer, c: Composer, reduction: str, view: str, rows: str, p: str, axis: int, keep: int, dt, shape
) -> None:
    """Lower `c` with the scattered `rows` added to the data `view` (`add`), or written where
    some index hit (the max of the 0/1 hits `p` over the updates' `axis` is 1), viewed back as
    the data's `shape`."""
    if reduction == "add":
        out = c.node("Add", [view, rows])
    else:
        written = c.node("ReduceMax", [p], axes=[axis], keepdims=keep)
        out = c.node("Where", [c.node("Greater", [written, c.const(np.array(0, dt))]), rows, view])
    c.lower(im, c.node("Reshape", [out, c.const(np.array(shape, np.int64))]))


def _scatter_nd_runtime(im: _Importer, node: onnx.NodeProto, idx: Val, reduction: str) -> None:
    """ScatterND at run-time index tuples of length 1 (rows of the data's leading axis)."""
    data = im.get(node.input[0])
    dt = _runtime_reduction(im, node, reduction, data)
    ds, ix = value_shape(data), idx.shape
    if not ix or ix[-1] != 1:
        raise im.fail(
            f"index tuples of length {ix[-1] if ix else 0} computed at run time: only single positions "
            "(tuples of length 1, rows of the leading axis) are scattered at run-time indices"
        )
    r, cols, u = ds[0], math.prod(ds[1:]), math.prod(ix[:-1])
    c = Composer(node)
    flat = c.node("Reshape", [node.input[1], c.const(np.array([1, u], np.int64))])
    hit = _hits(c, flat, np.arange(r, dtype=np.int64).reshape(r, 1), r)  # [R, U]
    p = c.node("Cast", [hit], to=onnx.helper.np_dtype_to_tensor_dtype(dt))
    rows = c.node("MatMul", [p, c.node("Reshape", [node.input[2], c.const(np.array([u, cols], np.int64))])])
    d = c.node("Reshape", [node.input[0], c.const(np.array([r, cols], np.int64))])
    _write(im, c, reduction, d, rows, p, 1, 1, dt, ds)


def _scatter_elements_runtime(im: _Importer, node: onnx.NodeProto, idx: Val, axis: int, reduction: str) -> None:
    """ScatterElements at run-time indices: along `axis`, element (.., u, ..) of the updates is
    written at position idx[.., u, ..]; each position's hits summed over u."""
    data, upd = im.get(node.input[0]), im.get(node.input[2])
    dt = _runtime_reduction(im, node, reduction, data)
    ds, ix = value_shape(data), idx.shape
    if ix != value_shape(upd) or len(ix) != len(ds):
        raise im.fail(
            f"indices {list(ix)} and updates {list(value_shape(upd))} must match, of the data's rank {len(ds)}"
        )
    if not -len(ds) <= axis < len(ds):
        raise im.fail(f"axis {axis} out of range for rank {len(ds)}")
    axis %= len(ds)
    if any(a != b for k, (a, b) in enumerate(zip(ix, ds, strict=True)) if k != axis):
        raise im.fail(
            f"indices {list(ix)} cover only part of the data {list(ds)} off the axis: not scattered at run time"
        )
    pre, n, u, post = math.prod(ds[:axis]), ds[axis], ix[axis], math.prod(ds[axis + 1 :])
    c = Composer(node)
    i4 = c.node("Reshape", [node.input[1], c.const(np.array([pre, 1, u, post], np.int64))])
    u4 = c.node("Reshape", [node.input[2], c.const(np.array([pre, 1, u, post], np.int64))])
    hit = _hits(c, i4, np.arange(n, dtype=np.int64).reshape(1, n, 1, 1), n)  # [pre, N, U, post]
    p = c.node("Cast", [hit], to=onnx.helper.np_dtype_to_tensor_dtype(dt))
    rows = c.node("ReduceSum", [c.node("Mul", [p, u4]), c.const(np.array([2], np.int64))], keepdims=0)
    d = c.node("Reshape", [node.input[0], c.const(np.array([pre, n, post], np.int64))])
    _write(im, c, reduction, d, rows, p, 2, 0, dt, ds)


@lowering("TensorScatter", since=24)
def _tensor_scatter(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """A KV cache update (opset 24): batch b's `update` rows written into `past_cache` along `axis`
    from position write_indices[b] (0 without the input), wrapping around the axis in `circular`
    mode. Position p of batch b takes update row i when write_indices[b] == p - i (circular:
    (p - i) mod S), a comparison with a constant table: no index arithmetic at run time."""
    _no_attrs(im, attrs, ("axis", "mode"))
    cache, upd = im.get(node.input[0]), im.get(node.input[1])
    if not isinstance(cache, Val) and not isinstance(upd, Val):
        raise im.fail("constant TensorScatter could not be folded")
    dt = _runtime_reduction(im, node, "none", cache)
    cs, us = value_shape(cache), value_shape(upd)
    mode = attrs.get("mode", b"linear")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("linear", "circular"):
        raise im.fail(f"mode '{mode}' is not linear or circular")
    axis = int(attrs.get("axis", -2))  # type: ignore[call-overload]
    if len(cs) < 2 or not -len(cs) <= axis < len(cs) or axis % len(cs) == 0:
        raise im.fail(f"axis {axis} of a rank-{len(cs)} cache: a sequence axis after the batch")
    axis %= len(cs)
    if len(us) != len(cs) or any(a != b for k, (a, b) in enumerate(zip(cs, us, strict=True)) if k != axis):
        raise im.fail(f"update {list(us)} must match the cache {list(cs)} off axis {axis}")
    b, s, u = cs[0], cs[axis], us[axis]
    if u > s:
        raise im.fail(f"{u} update rows do not fit the cache's {s} positions")
    pre, post = math.prod(cs[1:axis]), math.prod(cs[axis + 1 :])
    c = Composer(node)
    diff = np.arange(s).reshape(s, 1) - np.arange(u).reshape(1, u)  # p - i
    if mode == "circular":
        diff %= s
    if len(node.input) > 2 and node.input[2]:
        w = c.node("Reshape", [node.input[2], c.const(np.array([b, 1, 1, 1, 1], np.int64))])
    else:
        w = c.const(np.zeros((1, 1, 1, 1, 1), np.int64))
    hit = c.node("Equal", [w, c.const(diff.reshape(1, 1, s, u, 1).astype(np.int64))])  # [B, 1, S, U, 1]
    p = c.node("Cast", [hit], to=onnx.helper.np_dtype_to_tensor_dtype(dt))
    u5 = c.node("Reshape", [node.input[1], c.const(np.array([b, pre, 1, u, post], np.int64))])
    rows = c.node("ReduceSum", [c.node("Mul", [p, u5]), c.const(np.array([3], np.int64))], keepdims=0)
    d = c.node("Reshape", [node.input[0], c.const(np.array([b, pre, s, post], np.int64))])
    _write(im, c, "none", d, rows, p, 3, 0, dt, cs)
