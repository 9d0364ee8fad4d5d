"""`expand-conv`: each `graph.conv` rewritten into the graph ops that plan today — pads, windows
of the input per kernel position, matmuls and adds — in the manner of PopLibs' `expandDims`
transform (a kernel position folded into the contraction) and its `combineConvGroups`
(grouped filters as one block-diagonal matrix).

For kernel position (i, j) the input window X_ij is a `graph.slice` of the zero-padded input
(a stride s first views the padded axis as [H / s, s], so the strided window is a plain slice
of a phase) collapsed to [N OH OW, C]. Then, by the channels:

- **depthwise** (one input and one output channel a group): Y = sum_ij X_ij * w_ij, each w_ij
  a row vector of the C channels — the vector path, since one channel a group gives the AMP
  nothing to contract;
- **few channels** (C < 16, a network's stem): im2col, the windows stacked on a leading axis,
  permuted and reshaped to [N OH OW, KH KW C] and one matmul by the [KH KW C, O] filters, so
  the AMP contracts one 16-deep group instead of KH KW shallow ones;
- **otherwise**: Y = sum_ij X_ij @ W_ij, one matmul a position, each contracting C (fp32
  accumulation inside a matmul; the positions' partials add in the value's dtype).

Grouped filters (1 < groups, not depthwise) are placed into a block-diagonal [C, O] per
position by pads and adds of the groups' slices. The result keeps the conv's name, so its
checkpoint compares with the reference's `graph.conv`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import TensorType, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ipu.dialects import graph
from ipu.dialects.value_names import DERIVED
from ipu.transforms.levels import expect_level

IM2COL_BELOW = 16
"""Input channels under which the kernel positions fold into the contraction (one matmul)."""


class _Emitter:
    """Graph ops inserted before the conv, all of its element type."""

    def __init__(self, rewriter: PatternRewriter, conv: graph.ConvOp):
        self.rewriter, self.conv = rewriter, conv
        self.el: Attribute = conv.result.type.element_type

    def emit(self, op: Operation) -> SSAValue:
        op.attributes[DERIVED] = UnitAttr()  # not in the model's reference: no checkpoint
        self.rewriter.insert(op, InsertPoint.before(self.conv))
        return op.results[0]

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


def _windows(e: _Emitter, geo: graph.ConvGeometry) -> list[SSAValue]:
    """Each kernel position's input window, [N OH OW, C], in (i, j) order."""
    (sh, sw), (t, left, _, _) = geo.strides, geo.pads
    oh, ow, n, c = geo.out_h, geo.out_w, geo.n, geo.c
    # the padded extent each window reaches, rounded up to whole strides (extra rows are zeros)
    last_r, last_c = geo.window(geo.kh - 1, geo.kw - 1)
    hp = -(-max(geo.h + t, last_r[1]) // sh) * sh
    wp = -(-max(geo.w + left, last_c[1]) // sw) * sw
    x = e.conv.input
    # rows and columns the windows never reach are cut first (a stride past the input's end)
    keep_h, keep_w = min(geo.h, hp - t), min(geo.w, wp - left)
    x = e.slice(x, (0, 0, 0, 0), (n, keep_h, keep_w, c))
    xp = e.pad(x, (0, t, left, 0), (n, hp, wp, c))
    view = e.reshape(xp, (n, hp // sh, sh, wp // sw, sw, c))
    out = []
    for i in range(geo.kh):
        for j in range(geo.kw):
            (r0, _, _), (c0, _, _) = geo.window(i, j)
            w = e.slice(view, (0, r0 // sh, r0 % sh, c0 // sw, c0 % sw, 0), (n, oh, 1, ow, 1, c))
            out.append(e.reshape(w, (n * oh * ow, c)))
    return out


def _position_filters(e: _Emitter, geo: graph.ConvGeometry, i: int, j: int) -> SSAValue:
    """The [C, O] filters of kernel position (i, j), block-diagonal over the groups."""
    f = e.conv.filters
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


def _expand(e: _Emitter, geo: graph.ConvGeometry) -> SSAValue:
    """The conv's result as [N OH OW, O]."""
    m = geo.n * geo.out_h * geo.out_w
    xs = _windows(e, geo)
    positions = [(i, j) for i in range(geo.kh) for j in range(geo.kw)]
    f = e.conv.filters
    if geo.groups == geo.c == geo.o:  # depthwise: a per-channel multiply-accumulate
        acc = None
        for x, (i, j) in zip(xs, positions, strict=True):
            w = e.reshape(e.slice(f, (i, j, 0, 0), (1, 1, 1, geo.o)), (geo.o,))
            acc = e.add(acc, e.emit(graph.MulOp(x, w, x.type)))
        assert acc is not None
        return acc
    if geo.c < IM2COL_BELOW and len(xs) > 1:  # im2col: one matmul over KH KW C
        kk = len(xs)
        stacked = e.emit(graph.ConcatOp([e.reshape(x, (1, m, geo.c)) for x in xs], 0, e.ty((kk, m, geo.c))))
        cols = e.emit(graph.TransposeOp(stacked, (1, 0, 2), e.ty((m, kk, geo.c))))
        lhs = e.reshape(cols, (m, kk * geo.c))
        ws = [e.reshape(_position_filters(e, geo, i, j), (1, geo.c, geo.o)) for i, j in positions]
        rhs = e.reshape(e.emit(graph.ConcatOp(ws, 0, e.ty((kk, geo.c, geo.o)))), (kk * geo.c, geo.o))
        return e.emit(graph.MatmulOp(lhs, rhs, e.ty((m, geo.o))))
    acc = None
    for x, (i, j) in zip(xs, positions, strict=True):
        acc = e.add(acc, e.emit(graph.MatmulOp(x, _position_filters(e, geo, i, j), e.ty((m, geo.o)))))
    assert acc is not None
    return acc


class ExpandConv(RewritePattern):
    """One `graph.conv` into windows, matmuls (or multiplies) and adds; see the module docstring."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvOp, rewriter: PatternRewriter) -> None:
        geo = op.geometry()
        e = _Emitter(rewriter, op)
        y = _expand(e, geo)
        shape = (geo.n, geo.out_h, geo.out_w, geo.o)
        res = graph.ReshapeOp(y, e.ty(shape))  # [N OH OW, O] is rank 2: always a reshape
        if "onnx.node" in op.attributes:
            res.attributes["onnx.node"] = op.attributes["onnx.node"]
        rewriter.replace(op, res)
        res.results[0].name_hint = op.result.name_hint


@dataclass(frozen=True)
class ExpandConvPass(ModulePass):
    """Rewrite every `graph.conv` into ops the planner has families for."""

    name = "expand-conv"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        PatternRewriteWalker(ExpandConv(), apply_recursively=False).rewrite_module(op)
