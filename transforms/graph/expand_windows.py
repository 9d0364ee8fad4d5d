"""`expand-windows`: each `graph.conv` and `graph.pool` rewritten into the graph ops that plan
today — pads, windows of the input per kernel position, matmuls, multiplies, maxima and adds —
in the manner of PopLibs' `expandDims` transform (a kernel position folded into the
contraction) and its `combineConvGroups` (grouped filters as one block-diagonal matrix).

For kernel position (i, j) the input window X_ij is a range of rows of the zero-padded input
viewed as [N Hp Wp, C] (a stride s first moves the s x s phases of the padded image to the
front, so a strided window is a plain range of its phase): the windows are taken over a "wide"
output whose rows are Wp / s wide, and the columns and rows past the real output are cropped at
the end (see `_Wide`). Then, by the channels:

- **depthwise** (one input and one output channel a group): Y = sum_ij X_ij * w_ij, each w_ij
  a row vector of the C channels — the vector path, since one channel a group gives the AMP
  nothing to contract;
- **few channels** (C < 16, a network's stem such as ResNet's 7x7/2 or MobileNet's 3x3/2 on
  RGB): PopLibs' `expandDims` of the kernel width. The channels are padded (`pixel_channels`:
  even, whole exchange words, and KW x C' >= 16: 3 -> 4 for a 7-wide kernel, 3 -> 6 for a
  3-wide one), the KW column windows of the padded image joined on the channel axis
  ([N, Hp, OW, KW C']: one exchange of whole pixels per window, a row of pixels at the
  stride's step for each image row), and the result is a KH x 1 convolution with stride
  (sh, 1) over KW C' channels, which the conv plan family takes on the AMP (its rows' halo
  received from neighbours);
- **few channels, a one-column kernel**: im2col, the windows stacked on a leading axis,
  permuted and reshaped to [N OH OW, KH KW C] and one matmul by the [KH KW C, O] filters, so
  the AMP contracts one 16-deep group instead of KH KW shallow ones;
- **otherwise**: Y = sum_ij X_ij @ W_ij, one matmul a position, each contracting C (fp32
  accumulation inside a matmul; the positions' partials add in the value's dtype).

Grouped filters (1 < groups, not depthwise) are placed into a block-diagonal [C, O] per
position by pads and adds of the groups' slices. The result keeps the conv's name, so its
checkpoint compares with the reference's `graph.conv`.

A pool takes the same windows: their running `graph.max` (the padding the dtype's lowest value,
joined on by `graph.concat`, so it never wins), or their sum times each output's reciprocal
count (a column of constants: the input elements under the window, or the padded extent's).
A max pool of a non-negative value (a ReLU's) or without padding is left to the pool plan
family (`value_range.max_pool_planned`: its windows on the tile, the zero padding never wins).
The constants the expansion makes are `graph.parameter`s named after the op.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType, UnitAttr, f16
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ipu.dialects import graph
from ipu.dialects.graph import initializer_values
from ipu.dialects.value_names import DERIVED
from ipu.transforms.graph.value_range import max_pool_planned
from ipu.transforms.levels import expect_level

ROW_GRAIN = 64
"""The wide output's rows are a multiple of this, or of 8 below 8 grains (cut evenly over tiles,
whatever the image: an awkward row count has few divisors)."""

IM2COL_BELOW = 16
"""Input channels under which the kernel positions fold into the contraction (one matmul)."""


class _Names:
    """The parameter symbols of each function, gathered once per pass run and kept up to date as
    the expansion adds its constants (a walk of the function per constant would be quadratic)."""

    def __init__(self) -> None:
        self.taken: dict[Operation, set[str]] = {}

    def of(self, op: Operation) -> set[str]:
        f = op.parent_op()
        while f is not None and not isinstance(f, func.FuncOp):
            f = f.parent_op()
        assert f is not None, "a graph op lies in a function"
        if f not in self.taken:
            self.taken[f] = {o.sym_name.data for o in f.walk() if isinstance(o, graph.ParameterOp)}
        return self.taken[f]


class _Emitter:
    """Graph ops inserted before the expanded op, all of its element type."""

    def __init__(self, rewriter: PatternRewriter, root: graph.ConvOp | graph.PoolOp, names: _Names):
        self.rewriter, self.root, self.names = rewriter, root, names
        self.el: Attribute = root.result.type.element_type

    def emit(self, op: Operation) -> SSAValue:
        op.attributes[DERIVED] = UnitAttr()  # not in the model's reference: no checkpoint
        self.rewriter.insert(op, InsertPoint.before(self.root))
        return op.results[0]

    def constant(self, values: np.ndarray, shape: tuple[int, ...], what: str) -> SSAValue:
        """A `graph.parameter` of `values` (one value: a splat) named `<op's value>.<what>`."""
        v = np.asarray(values, dtype=np.float16 if self.el == f16 else np.float32)
        raw = v.reshape(-1)[:1] if v.size == 1 else v.reshape(shape)
        data = BytesAttr(raw.astype(raw.dtype.newbyteorder("<")).tobytes())
        init = DenseIntOrFPElementsAttr(TensorType(self.el, list(raw.shape)), data)
        taken = self.names.of(self.root)
        base = f"{self.root.result.name_hint or 'window'}.{what}"
        sym = next(n for n in (base, *(f"{base}_{k}" for k in range(1, len(taken) + 2))) if n not in taken)
        taken.add(sym)
        return self.emit(graph.ParameterOp(sym, init, self.ty(shape)))

    def ty(self, shape: tuple[int, ...]) -> TensorType:
        return TensorType(self.el, list(shape))

    def reshape(self, v: SSAValue, shape: tuple[int, ...]) -> SSAValue:
        if tuple(v.type.get_shape()) == shape:
            return v
        return self.emit(graph.ReshapeOp(v, self.ty(shape)))

    def slice(self, v: SSAValue, starts: tuple[int, ...], shape: tuple[int, ...]) -> SSAValue:
        if tuple(v.type.get_shape()) == shape:
            return v
        return self.emit(graph.SliceOp(v, starts, self.ty(shape)))

    def pad(self, v: SSAValue, low: tuple[int, ...], shape: tuple[int, ...]) -> SSAValue:
        if tuple(v.type.get_shape()) == shape:
            return v
        return self.emit(graph.PadOp(v, low, self.ty(shape)))

    def add(self, a: SSAValue | None, b: SSAValue) -> SSAValue:
        return b if a is None else self.emit(graph.AddOp(a, b, b.type))


def _padded(e: _Emitter, x: SSAValue, low: tuple[int, int], shape: tuple[int, ...], fill: float | None) -> SSAValue:
    """`x` [N, h, w, C] at (top, left) = `low` in a tensor of `shape`: zeros (`fill` None) by
    `graph.pad`, else blocks of `fill` joined on by `graph.concat`, rows then columns."""
    if fill is None:
        return e.pad(x, (0, *low, 0), shape)
    n, h, w, c = x.type.get_shape()
    (t, left), (_, hp, wp, _) = low, shape
    for axis, (before, size, full) in ((1, (t, h, hp)), (2, (left, w, wp))):
        after = full - before - size
        if before == after == 0:
            continue
        cur = tuple(x.type.get_shape())
        parts = []
        for k, extent in (("lo", before), ("x", 0), ("hi", after)):
            if k == "x":
                parts.append(x)
            elif extent:
                blk = tuple(extent if i == axis else d for i, d in enumerate(cur))
                parts.append(e.constant(np.array(fill), blk, f"pad{axis}{k}"))
        out = tuple(full if i == axis else d for i, d in enumerate(cur))
        x = e.emit(graph.ConcatOp(parts, axis, e.ty(out)))
    return x


@dataclass(frozen=True)
class _Wide:
    """The windows of one op as row ranges of one 2-D tensor: output row q = n Hb Wb + oh Wb + ow
    of the "wide" output [L, .] (each image's rows Wb wide, the stride phase's width) reads input
    row q + offset of its kernel position's phase block. The columns past OW and the rows past OH
    are computed and dropped (`crop`): every window is a contiguous range of rows, one exchange
    of whole rows rather than one message per pixel or per output row."""

    windows: list[SSAValue]  # [L, C] per kernel position, in (i, j) order
    length: int  # L
    hb: int  # rows of an image in its stride phase
    wb: int  # columns of an image in its stride phase


def _windows(e: _Emitter, geo: graph.ConvGeometry, fill: float | None = None) -> _Wide:
    """Each kernel position's input window over the wide output; the padding zeros or `fill`."""
    (sh, sw), (t, left, _, _) = geo.strides, geo.pads
    oh, ow, n, c = geo.out_h, geo.out_w, geo.n, geo.c
    # the padded extent each window reaches, rounded up to whole strides (extra rows are padding)
    last_r, last_c = geo.window(geo.kh - 1, geo.kw - 1)
    hp = -(-max(geo.h + t, last_r[1]) // sh) * sh
    wp = -(-max(geo.w + left, last_c[1]) // sw) * sw
    x = e.root.input
    # rows and columns the windows never reach are cut first (a stride past the input's end)
    keep_h, keep_w = min(geo.h, hp - t), min(geo.w, wp - left)
    x = e.slice(x, (0, 0, 0, 0), (n, keep_h, keep_w, c))
    xp = _padded(e, x, (t, left), (n, hp, wp, c), fill)
    hb, wb = hp // sh, wp // sw
    block = n * hb * wb  # rows of one stride phase
    # a stride's phases moved to the front once (one exchange): phase (a, b) is rows
    # [(a sw + b) block, ...) of the 2-D view
    if sh > 1 or sw > 1:
        view = e.reshape(xp, (n, hb, sh, wb, sw, c))
        view = e.emit(graph.TransposeOp(view, (2, 4, 0, 1, 3, 5), e.ty((sh, sw, n, hb, wb, c))))
    else:
        view = xp
    flat = e.reshape(view, (sh * sw * block, c))
    length = (n - 1) * hb * wb + (oh - 1) * wb + ow
    if (hb, wb) != (oh, ow):  # rounded up to whole row groups: an awkward length cuts over few tiles
        grain = ROW_GRAIN if length >= 8 * ROW_GRAIN else 8
        length = -(-length // grain) * grain
    starts = []
    for i in range(geo.kh):
        for j in range(geo.kw):
            (r0, _, _), (c0, _, _) = geo.window(i, j)
            starts.append(((r0 % sh) * sw + c0 % sw) * block + (r0 // sh) * wb + c0 // sw)
    rows = sh * sw * block
    if max(starts) + length > rows:  # the last window runs past the phases: zero rows after them
        flat = e.pad(flat, (0, 0), (max(starts) + length, c))
    return _Wide([e.slice(flat, (st, 0), (length, c)) for st in starts], length, hb, wb)


def _crop(e: _Emitter, geo: graph.ConvGeometry, wide: _Wide, y: SSAValue) -> SSAValue:
    """The wide output [L, K] cut to the real one, [N OH OW, K]."""
    k = y.type.get_shape()[1]
    n, oh, ow = geo.n, geo.out_h, geo.out_w
    if (wide.hb, wide.wb) == (oh, ow):
        return y  # nothing computed past the output (a 1x1 kernel, no pads)
    rows = n * wide.hb * wide.wb
    full = e.pad(y, (0, 0), (rows, k)) if wide.length <= rows else e.slice(y, (0, 0), (rows, k))
    grid = e.reshape(full, (n, wide.hb, wide.wb, k))
    return e.reshape(e.slice(grid, (0, 0, 0, 0), (n, oh, ow, k)), (n * oh * ow, k))


def _position_filters(e: _Emitter, geo: graph.ConvGeometry, i: int, j: int) -> SSAValue:
    """The [C, O] filters of kernel position (i, j), block-diagonal over the groups."""
    f = e.root.filters
    cg, o, g = geo.c // geo.groups, geo.o, geo.groups
    w = e.reshape(e.slice(f, (i, j, 0, 0), (1, 1, cg, o)), (cg, o))
    if g == 1:
        return w
    og = o // g
    acc = None
    for k in range(g):
        part = e.slice(w, (0, k * og), (cg, og))
        acc = e.add(acc, e.pad(part, (k * cg, k * og), (geo.c, o)))
    assert acc is not None
    return acc


def pixel_channels(c: int, kw: int) -> int:
    """The channels a few-channel image is padded to before its kernel's KW columns fold into
    them: even (whole 32-bit exchange words of half-precision pixels) and enough that the folded
    KW x channels reach the AMP's 16 (RGB: 4 for a 7-wide kernel, 6 for a 3-wide one)."""
    need = max(c, -(-IM2COL_BELOW // kw))
    return need + need % 2


def folds_width(geo: graph.ConvGeometry) -> bool:
    """Whether `_fold_width` takes the conv: one group of few channels and a kernel more than one
    column wide (strides and dilations under 256 keep the folded conv planned)."""
    return geo.groups == 1 and geo.c < IM2COL_BELOW and geo.kw > 1 and geo.byte_steps


def _fold_width(e: _Emitter, geo: graph.ConvGeometry) -> SSAValue:
    """expandDims(W): the conv as a KH x 1 conv over the KW column windows joined on the channels
    (see the module docstring); returns its [N, OH, OW, O] result."""
    (t, left, b, _), (sh, sw), (dh, dw) = geo.pads, geo.strides, geo.dilations
    n, h, w, c, ow = geo.n, geo.h, geo.w, geo.c, geo.out_w
    c4 = pixel_channels(c, geo.kw)
    reach = (geo.kw - 1) * dw + sw * (ow - 1) + 1  # padded columns any window reads
    wp = -(-max(reach, left + 1) // sw) * sw
    keep_w = min(w, wp - left)
    hp = h + t + b
    x = e.slice(e.root.input, (0, 0, 0, 0), (n, h, keep_w, c))
    xp = e.pad(x, (0, t, left, 0), (n, hp, wp, c4))
    # a stride's phases side by side on the last axis: window j is columns [c0 // sw, + OW) of
    # that view, channels [(c0 % sw) C4, + C4): rows of whole pixels at a stride of sw pixels
    view = e.reshape(xp, (n, hp, wp // sw, sw * c4))
    cols = [e.slice(view, (0, 0, j * dw // sw, j * dw % sw * c4), (n, hp, ow, c4)) for j in range(geo.kw)]
    k = geo.kw * c4
    folded = e.emit(graph.ConcatOp(cols, 3, e.ty((n, hp, ow, k))))
    shape = (geo.kh, 1, k, geo.o)
    w = e.root.filters.owner
    if isinstance(w, graph.ParameterOp):  # a weight: its padded, regrouped filters made here, once
        vals = initializer_values(w.init, w.result.type)
        vals = np.pad(vals, ((0, 0), (0, 0), (0, c4 - c), (0, 0))).reshape(shape)
        f = e.constant(vals, shape, "filters")
    else:
        f = e.reshape(e.pad(e.root.filters, (0, 0, 0, 0), (geo.kh, geo.kw, c4, geo.o)), shape)
    conv = graph.ConvOp(folded, f, e.root.result.type, (sh, 1), (dh, 1), (0, 0, 0, 0))
    return e.emit(conv)


def _expand(e: _Emitter, geo: graph.ConvGeometry) -> SSAValue:
    """The conv's result as [N OH OW, O]."""
    wide = _windows(e, geo)
    xs, m = wide.windows, wide.length
    positions = [(i, j) for i in range(geo.kh) for j in range(geo.kw)]
    f = e.root.filters
    acc: SSAValue | None = None
    if geo.groups == geo.c == geo.o:  # depthwise: a per-channel multiply-accumulate
        for x, (i, j) in zip(xs, positions, strict=True):
            w = e.reshape(e.slice(f, (i, j, 0, 0), (1, 1, 1, geo.o)), (geo.o,))
            acc = e.add(acc, e.emit(graph.MulOp(x, w, x.type)))
    elif geo.c < IM2COL_BELOW and len(xs) > 1:  # im2col: one matmul over KH KW C
        kk = len(xs)
        stacked = e.emit(graph.ConcatOp([e.reshape(x, (1, m, geo.c)) for x in xs], 0, e.ty((kk, m, geo.c))))
        cols = e.emit(graph.TransposeOp(stacked, (1, 0, 2), e.ty((m, kk, geo.c))))
        lhs = e.reshape(cols, (m, kk * geo.c))
        ws = [e.reshape(_position_filters(e, geo, i, j), (1, geo.c, geo.o)) for i, j in positions]
        rhs = e.reshape(e.emit(graph.ConcatOp(ws, 0, e.ty((kk, geo.c, geo.o)))), (kk * geo.c, geo.o))
        acc = e.emit(graph.MatmulOp(lhs, rhs, e.ty((m, geo.o))))
    else:
        for x, (i, j) in zip(xs, positions, strict=True):
            acc = e.add(acc, e.emit(graph.MatmulOp(x, _position_filters(e, geo, i, j), e.ty((m, geo.o)))))
    assert acc is not None
    return _crop(e, geo, wide, acc)


def _pool(e: _Emitter, geo: graph.ConvGeometry, kind: str, include_pad: bool) -> SSAValue:
    """The pool's result as [N OH OW, C]."""
    lowest = float(np.finfo(np.float16 if e.el == f16 else np.float32).min)
    wide = _windows(e, geo, lowest if kind == "max" else None)
    xs = wide.windows
    acc = xs[0]
    for x in xs[1:]:
        acc = e.emit((graph.MaxOp if kind == "max" else graph.AddOp)(acc, x, x.type))
    acc = _crop(e, geo, wide, acc)
    if kind == "max":
        return acc
    m = geo.n * geo.out_h * geo.out_w
    recip = np.tile((1.0 / geo.counts(include_pad)).reshape(-1), geo.n)
    col = e.constant(recip if np.ptp(recip) else recip[:1], (m, 1), "divisors")
    return e.emit(graph.MulOp(acc, col, acc.type))


def _replace(rewriter: PatternRewriter, op: graph.ConvOp | graph.PoolOp, e: _Emitter, y: SSAValue) -> None:
    """`op` by the reshape of its [N OH OW, C] expansion, keeping its name and provenance. A
    reader that views the result as [N OH OW, C] again (the importers' row collapse) reads the
    expansion itself: the 4-D view, cut over tiles only by its batch axis, never materializes."""
    for use in list(op.result.uses):
        u = use.operation
        if isinstance(u, graph.ReshapeOp) and u.result.type == y.type:
            rewriter.replace_all_uses_with(u.result, y)
            rewriter.erase(u)
    if not op.result.uses:
        rewriter.erase(op)
        return
    res = graph.ReshapeOp(y, op.result.type)  # [N OH OW, C] is rank 2: always a reshape
    if "onnx.node" in op.attributes:
        res.attributes["onnx.node"] = op.attributes["onnx.node"]
    name = op.result.name_hint
    rewriter.replace(op, res)
    res.results[0].name_hint = name


@dataclass
class ExpandConv(RewritePattern):
    """One `graph.conv` into windows, matmuls (or multiplies) and adds; see the module docstring."""

    names: _Names = field(default_factory=_Names)
    expand_all: bool = False  # also the convolutions the conv plan family takes (`ConvGeometry.planned`)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvOp, rewriter: PatternRewriter) -> None:
        if op.geometry().planned and not self.expand_all:
            return
        e = _Emitter(rewriter, op, self.names)
        geo = op.geometry()
        if folds_width(geo):
            y = _fold_width(e, geo)
            del y.owner.attributes[DERIVED]  # the model's conv, by its name: checked like the conv it replaces
            if "onnx.node" in op.attributes:
                y.owner.attributes["onnx.node"] = op.attributes["onnx.node"]
            name = op.result.name_hint
            rewriter.replace_all_uses_with(op.result, y)
            rewriter.erase(op)
            y.name_hint = name
            return
        _replace(rewriter, op, e, _expand(e, geo))


@dataclass
class ExpandPool(RewritePattern):
    """One `graph.pool` into windows and their running max, or their sum over its counts (not a
    max pool the pool plan family takes, `max_pool_planned`, unless `expand_all`)."""

    names: _Names = field(default_factory=_Names)
    expand_all: bool = False

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.PoolOp, rewriter: PatternRewriter) -> None:
        if max_pool_planned(op) and not self.expand_all:
            return
        e = _Emitter(rewriter, op, self.names)
        _replace(rewriter, op, e, _pool(e, op.geometry(), op.kind.data, op.count_include_pad is not None))


@dataclass(frozen=True)
class ExpandWindowsPass(ModulePass):
    """Rewrite each `graph.pool` and `graph.conv` the pool and conv plan families do not take
    (average pools, max pools whose zero padding could win; grouped but not depthwise
    convolutions, fewer than 16 input channels) into ops the planner has families for;
    `expand_all` rewrites every convolution and pool (the families then plan none)."""

    name = "expand-windows"
    expand_all: bool = False

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        names = _Names()  # shared: one pass run's view of each function's parameter symbols
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier([ExpandConv(names, self.expand_all), ExpandPool(names, self.expand_all)]),
            apply_recursively=False,
        )
        walker.rewrite_module(op)
