"""`fold-attention-scale`: an attention's score scale folded into the weights of the projection
that computes its queries (or keys), where that is exact.

softmax(q k^T s) v = softmax((s q) k^T) v, and when q = x W (+ b) the scaled queries are
x (s W) (+ s b): the weights absorb the scale once, at compile time, and the attention runs at
scale 1. Unfolded, the planner scales every query block before its key steps (a BinaryOp1D
MULTIPLY of its qr x d elements: GPT-2 small's 9 x 64 query blocks pay 941 cycles a layer for
it) or every score block inside them.

Only a scale that is a power of two is folded (1/sqrt(64) = 1/8 for GPT-2's and BERT's heads):
multiplying by it is exact in binary floating point, so x (s W) = s (x W) bit for bit and every
value after the attention is unchanged. The one exception is a scaled weight that falls below
its type's normal range (for half weights |w| < 2^-14 / s), which rounds to a multiple of
2^-24. Other scales (1/sqrt(128)) would round every weight once more and are left to the kernels.

The queries are traced from the attention back through single-use views (`split_heads`,
`reshape`, `transpose`), an optional column `slice` (the q part of a projection that
`fuse-sibling-matmuls` joined with k and v: only its columns are scaled, and every other reader
of the product must be a slice of other columns), an optional bias add of a parameter vector,
to a `graph.matmul` by a parameter (no transposed operand). If q has no such producer, k is
tried. The scaled parameters are new ones (a parameter read elsewhere keeps its values there);
every value between the weights and the attention now differs from the model's by the scale,
so each is marked `ipu.derived` (no checkpoint compares it with the reference), and the
attention's `scale` becomes 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, FloatAttr, TensorType, UnitAttr, f64
from xdsl.ir import Operation, SSAValue
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

_VIEWS = (graph.SplitHeadsOp, graph.ReshapeOp, graph.TransposeOp)


def exact_scale(s: float) -> bool:
    """`s` is a positive power of two: multiplying by it is exact (in the normal range)."""
    return s > 0 and math.isfinite(s) and math.frexp(s)[0] == 0.5


@dataclass
class _Producer:
    """How an attention operand is computed from a projection's weights."""

    matmul: graph.MatmulOp
    bias: graph.AddOp | None  # the bias add after the matmul, if any
    cols: tuple[int, int]  # the product's columns the operand reads
    path: list[Operation] = field(default_factory=list)  # the slice and views up to the attention


def _param(v: SSAValue) -> graph.ParameterOp | None:
    return v.owner if isinstance(v.owner, graph.ParameterOp) else None


def _bias_of(add: graph.AddOp, v: SSAValue) -> graph.ParameterOp | None:
    """The bias vector ([n] or [1, n], a parameter) `add` adds to `v`, the [m, n] product."""
    if add.lhs is add.rhs:
        return None
    b = add.rhs if add.lhs is v else add.lhs
    p, n = _param(b), v.type.get_shape()[-1]
    return p if p is not None and tuple(b.type.get_shape()) in ((n,), (1, n)) else None


def _others_apart(v: SSAValue, mine: graph.SliceOp, lo: int, hi: int) -> bool:
    """Every reader of `v` but `mine` is a slice of columns outside [lo, hi)."""
    for use in v.uses:
        o = use.operation
        if o is mine:
            continue
        if not isinstance(o, graph.SliceOp):
            return False
        start, width = o.offsets()[-1], o.result.type.get_shape()[-1]
        if start < hi and lo < start + width:
            return False
    return True


def trace(v: SSAValue) -> _Producer | None:
    """The projection `v` (an attention's q or k) is a view of, or None."""
    path: list[Operation] = []
    while isinstance(v.owner, _VIEWS) and v.has_one_use():
        path.append(v.owner)
        v = v.owner.input
    if not v.has_one_use() or not isinstance(v.type, TensorType) or len(v.type.get_shape()) != 2:
        return None
    src, cols = v, (0, v.type.get_shape()[1])
    if isinstance(v.owner, graph.SliceOp):
        sl = v.owner
        src = sl.input
        shape = src.type.get_shape()
        (r0, c0), (m, w) = sl.offsets(), v.type.get_shape()
        if len(shape) != 2 or r0 != 0 or m != shape[0] or not _others_apart(src, sl, c0, c0 + w):
            return None
        path.append(sl)
        cols = (c0, c0 + w)
    bias = None
    if isinstance(src.owner, graph.AddOp):
        bias = src.owner
        mm = next((x for x in (bias.lhs, bias.rhs) if isinstance(x.owner, graph.MatmulOp)), None)
        if mm is None or not mm.has_one_use() or _bias_of(bias, mm) is None:
            return None
        src = mm
    op = src.owner
    if not isinstance(op, graph.MatmulOp) or any(op.flags()) or _param(op.rhs) is None:
        return None
    return _Producer(op, bias, cols, path)


def _scaled(p: graph.ParameterOp, cols: tuple[int, int], s: float, taken: set[str]) -> graph.ParameterOp | None:
    """A copy of parameter `p` with columns [lo, hi) of its last axis times `s` (exact: a power
    of two), named as `p` when `p` has no other reader, else `<name>.scaled`; None when its
    values are not stored as a NumPy float type."""
    values, el = graph.stored_values(p)
    if not np.issubdtype(values.dtype, np.floating):
        return None
    data = np.array(values, dtype=values.dtype.newbyteorder("<"), copy=True)
    lo, hi = cols
    data[..., lo:hi] *= data.dtype.type(s)
    init = DenseIntOrFPElementsAttr(TensorType(el, list(data.shape)), BytesAttr(data.tobytes()))
    name = p.sym_name.data
    if not p.result.has_one_use():
        name = f"{name}.scaled"
        while name in taken:
            name += "_"
    taken.add(name)
    out = graph.ParameterOp(name, init, p.result.type)
    out.result.name_hint = p.result.name_hint
    return out


class FoldAttentionScale(RewritePattern):
    """One attention's power-of-two scale into its q (else k) projection's weights and bias."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.AttentionOp, rewriter: PatternRewriter) -> None:
        s = op.scale_value()
        if s == 1.0 or not exact_scale(s):
            return
        found = trace(op.q) or trace(op.k)
        if found is None:
            return
        targets: list[tuple[Operation, int]] = [(found.matmul, 1)]
        if found.bias is not None:
            targets.append((found.bias, 1 if found.bias.lhs is found.matmul.result else 0))
        olds = [user.operands[i].owner for user, i in targets]
        news = [_scaled(p, found.cols, s, self.taken) for p in olds if isinstance(p, graph.ParameterOp)]
        if len(news) != len(targets) or any(n is None for n in news):
            return
        for (user, i), old, new in zip(targets, olds, news, strict=True):
            assert isinstance(old, graph.ParameterOp) and new is not None
            rewriter.insert(new, InsertPoint.before(old))
            operands = list(user.operands)
            operands[i] = new.result
            user.operands = operands
            rewriter.handle_operation_modification(user)
            if not old.result.uses:
                rewriter.erase(old)
        for o in (found.matmul, found.bias, *found.path):
            if o is not None:
                o.attributes[DERIVED] = UnitAttr()  # the scaled value is not the model's: no checkpoint
        op.scale = FloatAttr(1.0, f64)
        rewriter.handle_operation_modification(op)


@dataclass(frozen=True)
class FoldAttentionScalePass(ModulePass):
    """Attention scales that are powers of two folded into the q (or k) projection's weights."""

    name = "fold-attention-scale"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        taken = {p.sym_name.data for p in op.walk() if isinstance(p, graph.ParameterOp)}
        PatternRewriteWalker(FoldAttentionScale(taken), apply_recursively=False).rewrite_module(op)


__all__ = ["FoldAttentionScalePass", "exact_scale", "trace"]
