"""Selection by value and by run-time index, as mixture-of-experts routers and pooled heads
use them: TopK and GatherElements.

TopK of a small k (a router's top-2 of 8 experts) is k rounds of an arg reduction over the last
axis: each round's winner is read (its index by `graph.arg_reduce`, its value by a row
maximum), then hidden by the dtype's extreme at that index (a comparison of the column indices
with the winner's), so the next round finds the next one. Ties go to the lower index, as ONNX's
TopK orders them. GatherElements along the last axis reads element `idx` of each row: a
`graph.gather` of the rows of the [R C, 1] view of the data at r C + idx, whose range the
importer proves.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue

from ipu.dialects import graph as g
from ipu.frontends.onnx_import import (
    _Importer,
    _no_attrs,
    _val_input,
    lowering,
)
from ipu.frontends.value_builder import (
    Val,
    ValueBuilder,
    _reduce_rows,
    _transpose2d,
    _tt,
    collapsed,
    transpose_value,
)

MAX_TOPK = 64  # rounds of arg reduction; a larger k would want a sorting kernel


def _last_axis(im: _Importer, x: Val, axis: int) -> tuple[Val, list[int]]:
    """`x` with `axis` moved last, and the permutation (identity when it already is)."""
    rank = len(x.shape)
    perm = [i for i in range(rank) if i != axis] + [axis]
    return (x if axis == rank - 1 else transpose_value(im, x, perm, None)), perm


def _column_indices(im: _Importer, x: SSAValue, name: str) -> SSAValue:
    """The i32 column index of every element of the [rows, n] value `x` (a constant)."""
    rows, n = x.type.get_shape()
    cols = np.broadcast_to(np.arange(n, dtype=np.int32), (rows, n)).copy()
    return im.val(cols, Val(x, (rows, n), np.int32), f"{name}.cols").ssa


def _winner(im: _Importer, x: SSAValue, cols: SSAValue) -> tuple[SSAValue, SSAValue]:
    """Each row's first largest element of [rows, n] `x`: its i32 index [rows], and a bool
    [rows, n] true at it (the column indices `cols` compared with the index)."""
    rows, n = x.type.get_shape()
    idx = im.emit(
        g.ArgReduceOp.create(
            operands=[x], result_types=[_tt((rows,), np.int32)], attributes={"kind": StringAttr("max")}
        )
    )
    won = im.emit(g.EqualOp(cols, im.raw_reshape(idx, (rows, 1), np.int32), _tt((rows, n), np.bool_)))
    return idx, won


@lowering("TopK", since=10)
def _topk(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """The k largest (smallest) values of each row and their int64 indices, sorted."""
    _no_attrs(im, attrs, ("axis", "largest", "sorted"))
    x = _val_input(im, node)
    kc = im.const(node.input[1], "TopK's k").reshape(-1)
    rank = len(x.shape)
    axis = int(attrs.get("axis", -1))  # type: ignore[call-overload]
    if rank == 0 or not -rank <= axis < rank or kc.size != 1:
        raise im.fail(f"axis {axis} of rank {rank} with k of shape {list(kc.shape)}")
    axis %= rank
    k = int(kc[0])
    largest = bool(attrs.get("largest", 1))
    index_name = node.output[1] if len(node.output) > 1 and node.output[1] else None
    values, indices = top_k_values(im, x, k, axis, largest, node.output[0], index_name)
    im.vals[node.output[0]] = values
    if index_name is not None:
        im.vals[index_name] = indices


def top_k_values(
    im: ValueBuilder, x: Val, k: int, axis: int, largest: bool, name: str, index_name: str | None = None
) -> tuple[Val, Val]:
    """The k largest (smallest) values of x along `axis`, sorted, and their int64 indices: k
    rounds of an arg reduction, each winner hidden before the next."""
    rank = len(x.shape)
    n = x.shape[axis]
    if not 1 <= k <= min(n, MAX_TOPK):
        raise im.fail(f"k = {k} of {n}: supported 1 <= k <= {MAX_TOPK} (k rounds of arg reduction)")
    if np.dtype(x.dtype).kind != "f":
        raise im.fail(f"TopK of {np.dtype(x.dtype)} values; floats only")
    xl, perm = _last_axis(im, x, axis)
    rows = math.prod(xl.shape[:-1])
    cur = im.raw_reshape(xl.ssa, (rows, n), x.dtype)
    if not largest:  # the smallest of x are the largest of -x (ties still to the lower index)
        cur = im.emit(g.NegOp(cur))
    cols = Val(_column_indices(im, cur, name), (rows, n), np.int32)
    extreme = float(np.finfo(np.float16 if x.dtype == np.float16 else np.float32).min)
    hide = im.param(np.array(extreme), x.dtype, (rows, n), f"{name}.hidden")
    values, indices = [], []
    for j in range(k):
        idx, won = _winner(im, cur, cols.ssa)
        best = _reduce_rows(im, cur, "max", x.dtype, (rows,), None)
        values.append(best if largest else im.emit(g.NegOp(best)))
        indices.append(idx)
        if j + 1 < k:
            cur = im.emit(g.WhereOp(won, hide, cur))
    out_shape = tuple(k if i == axis else d for i, d in enumerate(x.shape))
    last_shape = (*xl.shape[:-1], k)

    def stack(parts: list, dtype: type, name: str | None, bounds: tuple[int, int] | None) -> Val:
        if k == 1:
            flat = im.raw_reshape(parts[0], (rows, 1), dtype)
        else:
            rowsk = [im.raw_reshape(p, (1, rows), dtype) for p in parts]
            kr = im.emit(g.ConcatOp(rowsk, 0, _tt((k, rows), dtype)))
            flat = _transpose2d(im, kr, dtype)  # [rows, k]
        v = Val(im.raw_reshape(flat, collapsed(last_shape), dtype), last_shape, dtype, bounds)
        if axis != rank - 1:
            v = transpose_value(im, v, [perm.index(i) for i in range(rank)], None)
            v.bounds = bounds
        r = im.raw_reshape(v.ssa, collapsed(out_shape), dtype, name)
        return Val(r, out_shape, dtype, bounds)

    return stack(values, x.dtype, name, None), stack(indices, np.int64, index_name, (0, n - 1))


def pick_in_rows(im: _Importer, table: SSAValue, ids: Val, dtype: type, name: str) -> SSAValue:
    """table[r, ids[r, j]] for a [rows, n] table and [rows, m] ids proven to lie in [0, n), as
    [rows m, 1]: a `graph.gather` of the rows of the table's [rows n, 1] view at r n + id."""
    rows, n = table.type.get_shape()
    m = ids.shape[-1]
    if rows * n >= 2**31:
        raise im.fail(f"a table of {rows * n} elements: the flat indices would not fit int32")
    base = np.broadcast_to((np.arange(rows, dtype=np.int64) * n).reshape(rows, 1), (rows, m)).copy()
    flat = im.binary_values("add", ids, base, "", f"{name}.base", None)
    view = im.raw_reshape(table, (rows * n, 1), dtype)
    return im.emit(g.GatherOp(view, im.raw_reshape(flat.ssa, (rows * m,), np.int32), _tt((rows * m, 1), dtype)))


@lowering("GatherElements", since=11)
def _gather_elements(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """out[.., j] = data[.., idx[.., j]] along the last axis (another axis moved last): rows of
    the data's [R C, 1] view gathered at r C + idx (negative indices wrapped)."""
    _no_attrs(im, attrs, ("axis",))
    data = _val_input(im, node)
    idx = im.get(node.input[1])
    rank = len(data.shape)
    axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
    if not -rank <= axis < rank:
        raise im.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    ishape = tuple(np.shape(idx)) if not isinstance(idx, Val) else idx.shape
    if len(ishape) != rank or any(a != b for i, (a, b) in enumerate(zip(ishape, data.shape, strict=True)) if i != axis):
        raise im.fail(
            f"indices {list(ishape)} against data {list(data.shape)}: only indices of the data's shape off the "
            "axis are supported"
        )
    if np.dtype(data.dtype).kind != "f":
        raise im.fail(f"GatherElements of {np.dtype(data.dtype)} values; floats only")
    n, m = data.shape[axis], ishape[axis]
    dl, perm = _last_axis(im, data, axis)
    rows = math.prod(dl.shape[:-1])
    if isinstance(idx, Val):
        il, _ = _last_axis(im, idx, axis)
        ids = Val(im.raw_reshape(il.ssa, (rows, m), np.int32), (rows, m), idx.dtype, il.bounds)
        if ids.bounds is None or ids.bounds[0] < 0:  # negative indices count from the end: wrap
            ids = im.binary_values("add", ids, np.array([n], np.int64), "", f"{node.output[0]}.n", None)
            ids = im.binary_values("mod", ids, np.array([n], np.int64), "", f"{node.output[0]}.n", None)
        ids = Val(ids.ssa, ids.shape, ids.dtype, (0, n - 1))
    else:
        c = np.asarray(idx).astype(np.int64)
        if c.size and (c.min() < -n or c.max() >= n):
            raise im.fail(f"indices in [{int(c.min())}, {int(c.max())}] outside [-{n}, {n})")
        cl = np.moveaxis(c % n, axis, -1).reshape(rows, m)
        ids = im.val(cl, Val(dl.ssa, (rows, m), np.int64), f"{node.output[0]}.ids")
        ids = Val(ids.ssa, (rows, m), np.int64, (0, n - 1))
    r = pick_in_rows(im, im.raw_reshape(dl.ssa, (rows, n), data.dtype), ids, data.dtype, node.output[0])
    last_shape = (*dl.shape[:-1], m)
    v = Val(im.raw_reshape(r, collapsed(last_shape), data.dtype), last_shape, data.dtype)
    if axis != rank - 1:
        v = transpose_value(im, v, [perm.index(i) for i in range(rank)], None)
    out_shape = tuple(ishape)
    im.out(node, Val(im.raw_reshape(v.ssa, collapsed(out_shape), data.dtype, node.output[0]), out_shape, data.dtype))


@lowering("Hardmax")
def _hardmax(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """1 at each row's first largest value along the axis, 0 elsewhere: an arg reduction, then
    the column indices compared with it."""
    _no_attrs(im, attrs, ("axis",))
    x = _val_input(im, node)
    rank = len(x.shape)
    axis = int(attrs.get("axis", -1 if im.opset >= 13 else 1))  # type: ignore[call-overload]
    if rank == 0 or not -rank <= axis < rank:
        raise im.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    if np.dtype(x.dtype).kind != "f":
        raise im.fail(f"Hardmax of {np.dtype(x.dtype)} values; floats only")
    if im.opset < 13:  # the axes from `axis` on, flattened: one row each
        view = Val(x.ssa, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])), x.dtype)
        xl, perm = view, [0, 1]
    else:
        xl, perm = _last_axis(im, x, axis)
    n = xl.shape[-1]
    rows = math.prod(xl.shape[:-1])
    flat = im.raw_reshape(xl.ssa, (rows, n), x.dtype)
    _, won = _winner(im, flat, _column_indices(im, flat, node.output[0]))
    y = im.emit(g.CastOp(won, _tt((rows, n), x.dtype)))
    v = Val(im.raw_reshape(y, collapsed(xl.shape), x.dtype), xl.shape, x.dtype)
    if im.opset >= 13 and axis != rank - 1:
        v = transpose_value(im, v, [perm.index(i) for i in range(rank)], None)
    im.out(node, Val(im.raw_reshape(v.ssa, collapsed(x.shape), x.dtype, node.output[0]), x.shape, x.dtype))
