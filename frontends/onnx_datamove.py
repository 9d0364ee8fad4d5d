"""ONNX lowerings that move data of computed tensors: Slice, Split, Concat and Pad become
`graph.slice` / `graph.concat` / `graph.pad` (planned as exchanges, `plan.window`), and a
MatMul of two computed (or batched constant) operands becomes one 2-D matmul per batch.

Graph values are row-collapsed (`onnx_import.collapsed`); a window is taken on the coarsest view
of the ONNX shape that keeps it a box (untouched inner axes merged into the axis outside them,
the last axis kept on its own), so most windows need no reshape at all."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue

from ipu.dialects import graph as g
from ipu.frontends.onnx_import import (
    _column_window,
    _lower_window,
    _no_attrs,
    _split_sizes,
    _val_input,
    lowering,
    matmul2_values,
)
from ipu.frontends.value_builder import (
    BROADCASTERS,
    Val,
    ValueBuilder,
    _matmul_core,
    _reduce_rows,
    _tt,
    collapsed,
    transpose_value,
    value_shape,
)

MAX_BATCHED_GEMMS = 256  # a batched MatMul is unrolled into this many 2-D matmuls at most
VECTOR_BATCHES = 8  # a vector per batch beyond this many batches: a broadcast multiply and a sum, not matmuls
MAX_STRIDED_PICKS = 64  # a slice with a step other than 1 is joined from this many unit windows at most


def box_view(
    big: Sequence[int], off: Sequence[int], small: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The coarsest (big, offset, small) describing the same box: an axis the box spans whole
    (offset 0, full size) merges into the axis outside it (not the last axis), and axes of size
    1 in both drop (one axis at least stays)."""
    b, o, s = [list(big)], [list(off)], [list(small)]
    bb, oo, ss = b[0], o[0], s[0]
    i = len(bb) - 2
    while i >= 0:
        j = i + 1
        if j != len(bb) - 1 and oo[j] == 0 and ss[j] == bb[j]:
            bb[i], oo[i], ss[i] = bb[i] * bb[j], oo[i] * bb[j], ss[i] * bb[j]
            del bb[j], oo[j], ss[j]
        i -= 1
    keep = [k for k in range(len(bb)) if not (bb[k] == 1 and ss[k] == 1)] or [len(bb) - 1]
    return tuple(bb[k] for k in keep), tuple(oo[k] for k in keep), tuple(ss[k] for k in keep)


def _view(im: ValueBuilder, x: Val, shape: tuple[int, ...]) -> SSAValue:
    """`x`'s graph value reshaped to `shape`, one reshape per value and shape (a split's parts
    and a batched matmul's batches read one view)."""
    key = (x.ssa, shape)
    if key not in im.views:
        im.views[key] = im.raw_reshape(x.ssa, shape, x.dtype)
    return im.views[key]


def slice_val(im: ValueBuilder, x: Val, starts: Sequence[int], sizes: Sequence[int], hint: str | None) -> Val:
    """The box of `x` at `starts` of `sizes` (stride 1), as one `graph.slice`."""
    sizes = tuple(sizes)
    if tuple(starts) == (0,) * len(starts) and sizes == x.shape:
        return x
    big, off, small = box_view(x.shape, starts, sizes)
    v = _view(im, x, big)
    r = im.emit(g.SliceOp(v, off, _tt(small, x.dtype)), hint)
    return Val(im.raw_reshape(r, collapsed(sizes), x.dtype, hint), sizes, x.dtype)


def pad_val(im: ValueBuilder, x: Val, low: Sequence[int], shape: Sequence[int], hint: str | None) -> Val:
    """`x` placed at `low` in zeros of `shape`, as one `graph.pad`."""
    shape = tuple(shape)
    if shape == x.shape:
        return x
    big, off, small = box_view(shape, low, x.shape)
    v = im.raw_reshape(x.ssa, small, x.dtype)
    r = im.emit(g.PadOp(v, off, _tt(big, x.dtype)), hint)
    return Val(im.raw_reshape(r, collapsed(shape), x.dtype, hint), shape, x.dtype)


def concat_vals(im: ValueBuilder, parts: list[Val], axis: int, hint: str | None) -> Val:
    """`parts` joined along `axis`, as one `graph.concat` on the coarsest common view."""
    like = parts[0]
    if len(parts) == 1:
        return like
    out = list(like.shape)
    out[axis] = sum(p.shape[axis] for p in parts)
    views = [box_view(out, [0] * len(out), p.shape) for p in parts]
    big = views[0][0]
    if any(v[0] != big for v in views):  # the merged views must agree (they do: parts differ on one axis)
        raise im.fail(f"concatenation of {[list(p.shape) for p in parts]} has no common view")
    ax = next(i for i in range(len(big)) if views[0][2][i] != big[i])  # the joined axis, in the view
    ins = [im.raw_reshape(p.ssa, v[2], p.dtype) for p, v in zip(parts, views, strict=True)]
    r = im.emit(g.ConcatOp(ins, ax, _tt(big, like.dtype)), hint)
    shape = tuple(out)
    return Val(im.raw_reshape(r, collapsed(shape), like.dtype, hint), shape, like.dtype)


def broadcast_val(im: ValueBuilder, x: Val, shape: Sequence[int], hint: str | None) -> Val | None:
    """`x` NumPy-broadcast to `shape` by copies joined with `graph.concat` (consecutive
    broadcast axes as one), None when it does not broadcast or would take over
    `MAX_BATCHED_GEMMS` copies."""
    shape = tuple(shape)
    try:
        if tuple(np.broadcast_shapes(x.shape, shape)) != shape:
            return None
    except ValueError:
        return None
    src = (1,) * (len(shape) - len(x.shape)) + x.shape
    if math.prod(shape) // max(math.prod(src), 1) > MAX_BATCHED_GEMMS:
        return None
    # group axes into runs that are all broadcast (1 -> n) or all kept
    groups: list[tuple[bool, list[int]]] = []
    for i, (d, n) in enumerate(zip(src, shape, strict=True)):
        b = d == 1 and n > 1
        if groups and groups[-1][0] == b:
            groups[-1][1].append(i)
        else:
            groups.append((b, [i]))
    view = tuple(math.prod(src[i] for i in axes) for _, axes in groups)
    y = im.reshape(x, view)
    for k, (b, axes) in enumerate(groups):
        if b:
            n = math.prod(shape[i] for i in axes)
            y = concat_vals(im, [y] * n, k, None)
    return im.reshape(y, shape, hint)


BROADCASTERS.append(broadcast_val)


def _as_val(im: ValueBuilder, x: Val | np.ndarray, like: Val, name: str) -> Val:
    return im.val(x, like, name)


# --- Slice ---------------------------------------------------------------------------------------


def _slice_spec(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object], rank: int):
    if im.opset < 10:
        starts = [int(v) for v in attrs["starts"]]  # type: ignore[union-attr]
        ends = [int(v) for v in attrs["ends"]]  # type: ignore[union-attr]
        axes = [int(v) for v in attrs.get("axes", range(len(starts)))]  # type: ignore[union-attr]
        steps = [1] * len(starts)
    else:

        def ints(i: int, what: str) -> list[int] | None:
            if len(node.input) <= i or not node.input[i]:
                return None
            return [int(v) for v in im.const(node.input[i], what).reshape(-1)]

        starts = ints(1, "the slice starts") or []
        ends = ints(2, "the slice ends") or []
        axes = ints(3, "the slice axes") or list(range(len(starts)))
        steps = ints(4, "the slice steps") or [1] * len(starts)
    return starts, ends, [a % rank for a in axes], steps


@lowering("Slice")
def _slice(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """A stride-1 window of a computed tensor (or a column range of a matmul's output, computed
    directly by the matching weight columns)."""
    _no_attrs(im, attrs, ("starts", "ends", "axes"))
    x = _val_input(im, node)
    window = _column_window(im, node.output[0])
    if window is not None and node.output[0] in im.static_shapes:
        im.out(node, _lower_window(im, node.output[0], im.static_shapes[node.output[0]], window))
        return
    starts, ends, axes, steps = _slice_spec(im, node, attrs, len(x.shape))
    im.out(node, slice_values(im, x, starts, ends, axes, steps, node.output[0]))


def slice_values(
    im: ValueBuilder,
    x: Val,
    starts: Sequence[int],
    ends: Sequence[int],
    axes: Sequence[int],
    steps: Sequence[int],
    hint: str | None,
) -> Val:
    """x[starts:ends:steps] along `axes` (Python's slice rules): one `graph.slice` of the box,
    then each strided axis's picks joined in order (at most `MAX_STRIDED_PICKS` of them)."""
    lo, size = [0] * len(x.shape), list(x.shape)
    strided: list[tuple[int, range]] = []
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        if st == 0:
            raise im.fail(f"slice step 0 (axis {a})")
        idx = range(x.shape[a])[slice(s, e, st)]
        if len(idx) == 0:
            raise im.fail(f"an empty slice (axis {a}) is not supported")
        if idx.step != 1 and len(idx) > 1:
            if len(idx) > MAX_STRIDED_PICKS:
                raise im.fail(
                    f"a slice with step {st} (axis {a}) picking {len(idx)} elements is not supported "
                    f"(step 1, or at most {MAX_STRIDED_PICKS} picks)"
                )
            strided.append((a, idx))
            continue
        lo[a], size[a] = idx[0], len(idx)
    y = slice_val(im, x, lo, size, None if strided else hint)
    for k, (a, idx) in enumerate(strided):  # each strided axis: its picks joined in order
        last = k == len(strided) - 1
        one = [1 if i == a else d for i, d in enumerate(y.shape)]
        picks = [slice_val(im, y, [j if i == a else 0 for i in range(len(y.shape))], one, None) for j in idx]
        y = concat_vals(im, picks, a, hint if last else None)
    return y


# --- Split ---------------------------------------------------------------------------------------


@lowering("Split")
def _split(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Each part a column range of a matmul's output (the fused QKV projection: one matmul per
    part by those weight columns, no data moved) or else a `graph.slice` of the input."""
    _no_attrs(im, attrs, ("axis", "split", "num_outputs"))
    x = _val_input(im, node)
    axis = int(attrs.get("axis", 0)) % len(x.shape)  # type: ignore[arg-type]
    sizes = _zero_split_sizes(im, node, attrs, x.shape[axis])
    at = 0
    for out, n in zip(node.output, sizes, strict=True):
        window = _column_window(im, out) if out in im.static_shapes and n else None
        if n == 0:  # an empty part: an empty constant (a concatenation skips it)
            im.consts[out] = np.zeros([0 if i == axis else d for i, d in enumerate(x.shape)], x.dtype)
        elif window is not None:
            im.vals[out] = _lower_window(im, out, im.static_shapes[out], window)
        elif out:
            lo = [at if i == axis else 0 for i in range(len(x.shape))]
            size = [n if i == axis else d for i, d in enumerate(x.shape)]
            im.vals[out] = slice_val(im, x, lo, size, out)
        at += n


def _zero_split_sizes(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object], d: int) -> list[int]:
    """`_split_sizes`, where explicit sizes may include empty parts."""
    if "split" in attrs or (len(node.input) > 1 and node.input[1]):
        if "split" in attrs:
            sizes = [int(v) for v in attrs["split"]]  # type: ignore[union-attr]
        else:
            sizes = [int(v) for v in im.const(node.input[1], "the split sizes").reshape(-1)]
        if sum(sizes) == d and len(sizes) == len(node.output) and all(z >= 0 for z in sizes) and any(sizes):
            return sizes
    return _split_sizes(im, node, attrs, d)


# --- Tile --------------------------------------------------------------------------------------


@lowering("Tile", since=6)
def _tile(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Copies of a computed tensor joined by one `graph.concat` per repeated axis."""
    _no_attrs(im, attrs)
    x = _val_input(im, node)
    reps = [int(v) for v in im.const(node.input[1], "the repeats").reshape(-1)]
    if len(reps) != len(x.shape) or any(r < 1 for r in reps):
        raise im.fail(f"repeats {reps} for a rank-{len(x.shape)} input (one positive count per axis)")
    if max(reps) > MAX_BATCHED_GEMMS:
        raise im.fail(f"a tiling into {max(reps)} copies along one axis is not supported (at most {MAX_BATCHED_GEMMS})")
    y = x
    last = max((a for a, r in enumerate(reps) if r > 1), default=-1)
    for a, r in enumerate(reps):
        if r > 1:
            y = concat_vals(im, [y] * r, a, node.output[0] if a == last else None)
    im.out(node, y)


# --- Shape ---------------------------------------------------------------------------------------


@lowering("Shape")
def _shape(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """The (static) shape of a computed tensor: a constant, so what is computed from it folds."""
    _no_attrs(im, attrs, ("start", "end"))
    x = _val_input(im, node)
    r = len(x.shape)
    start, end = int(attrs.get("start", 0)), int(attrs.get("end", r))  # type: ignore[arg-type]
    im.consts[node.output[0]] = np.array(x.shape[slice(start, end)], np.int64)


# --- Concat --------------------------------------------------------------------------------------


@lowering("Concat")
def _concat(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """One `graph.concat`; constant parts become parameters."""
    _no_attrs(im, attrs, ("axis",))
    parts = [im.get(i) for i in node.input]
    like = next((p for p in parts if isinstance(p, Val)), None)
    if like is None:
        raise im.fail("all inputs are constants")
    axis = int(attrs["axis"]) % len(like.shape)  # type: ignore[arg-type]
    im.out(node, concat_values(im, parts, list(node.input), axis, node.output[0]))


def concat_values(
    im: ValueBuilder, parts: list[Val | np.ndarray], names: list[str], axis: int, hint: str | None
) -> Val:
    """`parts` (computed or constant: parameters) joined along `axis`, one `graph.concat`."""
    like = next((p for p in parts if isinstance(p, Val)), None)
    if like is None:
        raise im.fail("all inputs are constants")
    rank = len(like.shape)
    vals = []
    for p, name in zip(parts, names, strict=True):
        if isinstance(p, np.ndarray) and p.size == 0:
            continue  # an empty part adds nothing
        v = _as_val(im, p, like, name)
        if len(v.shape) != rank:
            raise im.fail(f"input '{name}' {list(v.shape)} has another rank than {list(like.shape)}")
        if v.dtype != like.dtype:
            raise im.fail("input element types differ")
        vals.append(v)
    return concat_vals(im, vals, axis, hint)


# --- Pad -----------------------------------------------------------------------------------------


@lowering("Pad", since=2)
def _pad(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Constant padding of a computed tensor: a `graph.pad` (zeros), plus the constant where it
    is not 0; negative pads crop (a `graph.slice` first)."""
    _no_attrs(im, attrs, ("mode", "pads", "value"))
    mode = attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode != "constant":
        raise im.fail(f"pad mode '{mode}' is not supported (only constant)")
    x = _val_input(im, node)
    r = len(x.shape)
    if im.opset < 11:
        pads = [int(v) for v in attrs["pads"]]  # type: ignore[union-attr]
        value = float(attrs.get("value", 0.0))  # type: ignore[arg-type]
        axes = list(range(r))
    else:
        pads = [int(v) for v in im.const(node.input[1], "the pads").reshape(-1)]
        value = 0.0
        if len(node.input) > 2 and node.input[2]:
            cv = im.const(node.input[2], "the pad value").reshape(-1)
            value = float(cv[0]) if cv.size else 0.0
        axes = list(range(r))
        if len(node.input) > 3 and node.input[3]:
            axes = [int(a) % r for a in im.const(node.input[3], "the pad axes").reshape(-1)]
    if len(pads) != 2 * len(axes):
        raise im.fail(f"{len(pads)} pads for {len(axes)} axes")
    low, high = [0] * r, [0] * r
    for k, a in enumerate(axes):
        low[a], high[a] = pads[k], pads[k + len(axes)]
    im.out(node, pad_values(im, x, low, high, value, node.output[0]))


def pad_values(im: ValueBuilder, x: Val, low: list[int], high: list[int], value: float, hint: str | None) -> Val:
    """x padded by `low` / `high` per axis with the constant `value`: a `graph.pad` (zeros),
    plus the constant where it is not 0; negative pads crop (a `graph.slice` first)."""
    if any(d + lo + hi <= 0 for d, lo, hi in zip(x.shape, low, high, strict=True)):
        raise im.fail("padding that leaves an empty tensor is not supported")
    crop_lo = [max(-v, 0) for v in low]
    crop_size = [d - max(-lo, 0) - max(-hi, 0) for d, lo, hi in zip(x.shape, low, high, strict=True)]
    y = slice_val(im, x, crop_lo, crop_size, None)
    lo = [max(v, 0) for v in low]
    shape = tuple(d + max(a, 0) + max(b, 0) for d, a, b in zip(crop_size, low, high, strict=True))
    if value != 0.0 and shape != y.shape:
        z = pad_val(im, y, lo, shape, None)
        fill = np.full(shape, value, np.float32)
        fill[tuple(slice(a, a + d) for a, d in zip(lo, y.shape, strict=True))] = 0.0
        return im.binary_values("add", z, fill.astype(x.dtype), "", f"{hint}.fill", hint)
    return pad_val(im, y, lo, shape, hint)


# --- batched MatMul ------------------------------------------------------------------------------


@lowering("MatMul")
def _batched_matmul(im: ValueBuilder, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """ONNX MatMul with broadcasting: a rank-2 right operand (or one whose batch axes are all 1,
    shared by every batch: folded into the rows) is one matmul; otherwise one 2-D matmul per
    batch of the broadcast batch shape, each reading its operands' rows by `graph.slice`, the
    results joined by `graph.concat`. A rank-1 right operand is a [K, 1] matrix."""
    _no_attrs(im, attrs)
    a, b = im.get(node.input[0]), im.get(node.input[1])
    im.out(node, matmul_values(im, a, b, node.input[0], node.input[1], node.output[0]))


def matmul_values(
    im: ValueBuilder, a: Val | np.ndarray, b: Val | np.ndarray, a_name: str, b_name: str, hint: str | None
) -> Val:
    """`a @ b` with NumPy's matmul rules (batch broadcasting, vectors): a rank-2 right operand
    is one `graph.matmul` of a's rows, equal batches one `graph.batch_matmul`, other batch
    shapes one 2-D matmul per batch joined by `graph.concat`."""
    sa, sb = value_shape(a), value_shape(b)
    if len(sb) == 2 or (len(sa) < 3 and len(sb) < 3 and len(sb) != 1):
        return matmul2_values(im, a, b, a_name, b_name, hint)
    like = a if isinstance(a, Val) else b
    if not isinstance(like, Val):
        raise im.fail("both operands are constants")
    if len(sb) == 1:  # [.., K] x [K]: a column vector, the result drops the last axis
        bv = im.reshape(b, (sb[0], 1)) if isinstance(b, Val) else np.reshape(b, (sb[0], 1))
        y = _mm2(im, a, bv, like, a_name, b_name, None)
        return im.reshape(y, y.shape[:-1], hint)
    if len(sa) == 1:  # [K] x [.., K, N]: a row vector, the result drops the row axis
        a2 = im.reshape(a, (1, sa[0])) if isinstance(a, Val) else np.reshape(a, (1, sa[0]))
        y = _batched(im, a2, b, (1, sa[0]), sb, like, a_name, b_name)
        return im.reshape(y, (*y.shape[:-2], y.shape[-1]), hint)
    y = _batched(im, a, b, sa, sb, like, a_name, b_name, hint)
    return im.reshape(y, _out_shape(sa, sb), hint)


def _out_shape(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...]:
    return (*np.broadcast_shapes(sa[:-2], sb[:-2]), sa[-2], sb[-1])


def _batched(
    im: ValueBuilder,
    a: Val | np.ndarray,
    b: Val | np.ndarray,
    sa: tuple[int, ...],
    sb: tuple[int, ...],
    like: Val,
    a_name: str,
    b_name: str,
    hint: str | None = None,
) -> Val:
    """`a @ b` for rank-2+ `a` and rank-3+ `b`, with ONNX batch broadcasting: one
    `graph.batch_matmul` (named `hint`) when both are computed with the same batch shape."""
    if math.prod(sb[:-2]) == 1:  # one rhs shared by every batch
        b2 = im.reshape(b, sb[-2:]) if isinstance(b, Val) else np.reshape(b, sb[-2:])
        y = _mm2(im, a, b2, like, a_name, b_name, None)
        return im.reshape(y, _out_shape(sa, sb))
    if sa[-1] != sb[-2]:
        raise im.fail(f"contraction sizes differ ({sa[-1]} vs {sb[-2]})")
    try:
        batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    except ValueError:
        raise im.fail(f"batch shapes {list(sa[:-2])} and {list(sb[:-2])} do not broadcast") from None
    count = math.prod(batch)
    if count > MAX_BATCHED_GEMMS:
        raise im.fail(f"a batched MatMul of {count} batches is not supported (at most {MAX_BATCHED_GEMMS})")
    m, k, n = sa[-2], sa[-1], sb[-1]
    if 1 in (m, n) and count > VECTOR_BATCHES and sa[:-2] == sb[:-2]:
        return _vector_batched(im, a, b, batch, (m, k, n), like, a_name, b_name)
    if isinstance(a, Val) and isinstance(b, Val) and sa[:-2] == sb[:-2]:  # one graph.batch_matmul
        a3 = im.raw_reshape(a.ssa, (count, m, k), like.dtype)
        b3 = im.raw_reshape(b.ssa, (count, k, n), like.dtype)
        y = im.emit(g.BatchMatmulOp(a3, b3, _tt((count, m, n), like.dtype)), hint)
        return Val(im.raw_reshape(y, collapsed((*batch, m, n)), like.dtype), (*batch, m, n), like.dtype)
    ia = np.broadcast_to(np.arange(math.prod(sa[:-2])).reshape(sa[:-2]), batch).reshape(-1)
    ib = np.broadcast_to(np.arange(math.prod(sb[:-2])).reshape(sb[:-2]), batch).reshape(-1)
    a3 = _rows(im, a, (math.prod(sa[:-2]), m, k), like, a_name)
    b3 = _rows(im, b, (math.prod(sb[:-2]), k, n), like, b_name)
    parts = []
    for i, j in zip(ia.tolist(), ib.tolist(), strict=True):
        ai = _batch(im, a3, i, like, a_name)
        bj = _batch(im, b3, j, like, b_name)
        parts.append(im.reshape(_mm2(im, ai, bj, like, a_name, b_name, None), (1, m, n)))
    return im.reshape(concat_vals(im, parts, 0, None), (*batch, m, n))


def _vector_batched(
    im: ValueBuilder,
    a: Val | np.ndarray,
    b: Val | np.ndarray,
    batch: tuple[int, ...],
    mkn: tuple[int, int, int],
    like: Val,
    a_name: str,
    b_name: str,
) -> Val:
    """A batched MatMul whose every batch is a vector times a matrix (m = 1) or a matrix times a
    vector (n = 1): a token times the weights of the expert it was routed to, gathered per token.
    One broadcast multiply and one row sum over k, instead of a matmul per batch (whose code
    grows with the batch count): `sum_k a[i, k] b[i, k, n]` with a's values a column of b's rows,
    or `sum_k a[i, m, k] b[i, k]` with b's vector broadcast over a's rows."""
    count, (m, k, n) = math.prod(batch), mkn
    if m == 1:
        vec = im.val(_rows(im, a, (count, k, 1), like, a_name), like, a_name)
        mat = im.val(_rows(im, b, (count, k, n), like, b_name), like, b_name)
        prod = im.binary_values("mul", mat, vec, b_name, a_name, None)
        prod = transpose_value(im, prod, [0, 2, 1], None)  # [count, n, k]: k last, summed per row
        rows, shape = n, (*batch, 1, n)
    else:
        mat = im.val(_rows(im, a, (count, m, k), like, a_name), like, a_name)
        vec = im.val(_rows(im, b, (count, 1, k), like, b_name), like, b_name)
        prod = im.binary_values("mul", mat, vec, a_name, b_name, None)
        rows, shape = m, (*batch, m, 1)
    flat = im.raw_reshape(prod.ssa, (count * rows, k), like.dtype)
    r = _reduce_rows(im, flat, "sum", like.dtype, (count, rows), None)
    return im.reshape(Val(r, (count, rows), like.dtype), shape)


def _rows(im: ValueBuilder, x: Val | np.ndarray, shape: tuple[int, ...], like: Val, name: str) -> Val | np.ndarray:
    return im.reshape(x, shape) if isinstance(x, Val) else np.reshape(x, shape)


def _batch(im: ValueBuilder, x3: Val | np.ndarray, i: int, like: Val, name: str) -> Val | np.ndarray:
    """Batch `i` of a [batches, rows, cols] operand as [rows, cols]."""
    if not isinstance(x3, Val):
        return np.ascontiguousarray(x3[i])
    _, r, c = x3.shape
    return im.reshape(slice_val(im, x3, (i, 0, 0), (1, r, c), None), (r, c))


def _mm2(
    im: ValueBuilder, a: Val | np.ndarray, b: Val | np.ndarray, like: Val, a_name: str, b_name: str, hint: str | None
) -> Val:
    """`a @ b`, b rank 2, a of any rank >= 2 (its batch folded into the rows)."""
    av = im.val(a, like, a_name)
    if len(av.shape) != 2 and not isinstance(a, Val):
        raise im.fail("a constant left operand must be rank 2")
    sb = value_shape(b)
    if av.shape[-1] != sb[0]:
        raise im.fail(f"contraction sizes differ ({av.shape[-1]} vs {sb[0]})")
    bv = im.val(b, av, b_name)
    return _matmul_core(im, av, bv.ssa, sb[1], hint)
