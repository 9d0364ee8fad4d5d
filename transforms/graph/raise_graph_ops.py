"""`raise-graph-ops`: chains of primitive graph ops that one fused graph op computes, rewritten
into it. Frontends import op by op; exporters spell SiLU as `x * sigmoid(x)`, rsqrt as
`1 / sqrt(x)` and GeLU as `0.5 * x * (1 + erf(x / sqrt 2))` (or its tanh form), which the fused
op computes in one kernel and one pass over the data (SiLU and rsqrt with the same roundings);
SDPA without native grouping repeats each KV head for its query heads, which `graph.attention`
groups natively.

Each pattern matches the canonical graph form both frontends produce: scalar constants are
`graph.parameter`s holding one value (`splat`), a chain's interior values have no other reader
(`sole_use`), and the fused op takes the root's name, so its checkpoint compares with the
reference value of that name. A chain that does not match stays as it is: slower, never wrong.
Both importers run this pass (`ipu.frontends.onnx_import.import_model`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr
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
from ipu.transforms.graph.graph_match import (
    MAX_VIEW_ELEMENTS,
    VIEW_OPS,
    composite,
    erase_dead,
    mul_leaves,
    near,
    producer,
    replace_root,
    shape,
    shared_param,
    sole_use,
    splat,
    split_factors,
)
from ipu.transforms.graph.raise_attention import RaiseAttention
from ipu.transforms.levels import expect_level


def add_one(v: SSAValue) -> SSAValue | None:
    """The t of `1 + t` (either order)."""
    op = producer(v, graph.AddOp)
    if op is None or not sole_use(v):
        return None
    if near(splat(op.lhs), 1.0):
        return op.rhs
    if near(splat(op.rhs), 1.0):
        return op.lhs
    return None


def erf_arg(v: SSAValue) -> SSAValue | None:
    """The x of `erf(x / sqrt 2)` (a division by sqrt 2, or a product with 1 / sqrt 2)."""
    e = producer(v, graph.ErfOp)
    if e is None or not sole_use(v):
        return None
    u = e.input
    d = producer(u, graph.DivOp)
    if d is not None and sole_use(u) and near(splat(d.rhs), math.sqrt(2.0)):
        return d.lhs
    scale, rest = split_factors(mul_leaves(u))
    return rest[0] if len(rest) == 1 and near(scale, 1 / math.sqrt(2.0)) else None


def cube_of(v: SSAValue, x: SSAValue) -> bool:
    """`v` is x^3: a product x x x (times 1) or `pow(x, 3)`."""
    scale, rest = split_factors(mul_leaves(v))
    if near(scale, 1.0) and rest == [x, x, x]:
        return True
    p = producer(v, graph.PowOp)
    return p is not None and p.lhs is x and near(splat(p.rhs), 3.0) and sole_use(v)


def tanh_gelu_arg(v: SSAValue) -> SSAValue | None:
    """The x of `tanh(sqrt(2/pi) * (x + 0.044715 x^3))`."""
    t = producer(v, graph.TanhOp)
    if t is None or not sole_use(v):
        return None
    scale, rest = split_factors(mul_leaves(t.input))
    if len(rest) != 1 or not near(scale, math.sqrt(2.0 / math.pi)):
        return None
    s = producer(rest[0], graph.AddOp)
    if s is None or not sole_use(rest[0]):
        return None
    for x, cubic in ((s.lhs, s.rhs), (s.rhs, s.lhs)):
        c_scale, c_rest = split_factors(mul_leaves(cubic))
        if not near(c_scale, 0.044715):
            continue
        if c_rest == [x, x, x] or (len(c_rest) == 1 and cube_of(c_rest[0], x)):
            return x
    return None


@dataclass
class RaiseSilu(RewritePattern):
    """`x * sigmoid(x)` (either order) -> `graph.silu x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MulOp, rewriter: PatternRewriter) -> None:
        for x, s in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            sig = producer(s, graph.SigmoidOp)
            if sig is not None and sig.input is x and sole_use(s) and x.type == op.result.type:
                replace_root(rewriter, op, graph.SiluOp.create(operands=[x], result_types=[op.result.type]))
                return


@dataclass
class RaiseRelu(RewritePattern):
    """Float `max(x, 0)` (either order, the zero a constant of the result's shape) -> `graph.relu x`:
    JAX's `nn.relu` lowers to `stablehlo.maximum` with a zero constant. The same function
    (`graph.relu` computes max(x, 0)), one kernel without the constant's operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MaxOp, rewriter: PatternRewriter) -> None:
        for x, z in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if graph.is_float_type(op.result.type.element_type) and splat(z) == 0.0 and x.type == op.result.type:
                replace_root(rewriter, op, graph.ReluOp.create(operands=[x], result_types=[op.result.type]))
                return


@dataclass
class RaiseRsqrtReciprocal(RewritePattern):
    """`reciprocal(sqrt(x))` -> `graph.rsqrt x` (the same two roundings)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReciprocalOp, rewriter: PatternRewriter) -> None:
        sq = producer(op.input, graph.SqrtOp)
        if sq is not None and sole_use(op.input):
            replace_root(rewriter, op, graph.RsqrtOp.create(operands=[sq.input], result_types=[op.result.type]))


@dataclass
class RaiseRsqrtDivide(RewritePattern):
    """`1 / sqrt(x)` -> `graph.rsqrt x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.DivOp, rewriter: PatternRewriter) -> None:
        if splat(op.lhs) != 1.0 or op.lhs.type != op.result.type:
            return
        sq = producer(op.rhs, graph.SqrtOp)
        if sq is not None and sole_use(op.rhs):
            replace_root(rewriter, op, graph.RsqrtOp.create(operands=[sq.input], result_types=[op.result.type]))


@dataclass
class RaiseGelu(RewritePattern):
    """`0.5 * x * (1 + erf(x / sqrt 2))` -> `graph.gelu x {approximate = "none"}`, and the tanh
    form `0.5 * x * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))` -> `graph.gelu x`, factors in any
    order."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MulOp, rewriter: PatternRewriter) -> None:
        if op.lhs.type != op.result.type or op.rhs.type != op.result.type:
            return
        scale, rest = split_factors([f for v in (op.lhs, op.rhs) for f in mul_leaves(v)])
        if not near(scale, 0.5) or len(rest) != 2:
            return
        for x, t in (rest, rest[::-1]):
            inner = add_one(t)
            if inner is None:
                continue
            if erf_arg(inner) is x:
                new = graph.GeluOp.create(operands=[x], result_types=[op.result.type])
                new.attributes["approximate"] = StringAttr("none")
                replace_root(rewriter, op, new)
                return
            if tanh_gelu_arg(inner) is x:
                replace_root(rewriter, op, graph.GeluOp.create(operands=[x], result_types=[op.result.type]))
                return


def repeated_heads(v: SSAValue) -> tuple[SSAValue, int] | None:
    """(x, Hkv) when `v` [Hkv * r, S, D] is x's KV heads each repeated r times the way an
    imported `Expand` of `Unsqueeze(x, 2)` computes it: x flattened, multiplied by ones [r, N]
    (r copies), `split_heads` into [Hkv, r, N / Hkv] (absent when Hkv = 1), reshaped back."""
    top = producer(v, graph.ReshapeOp)
    if top is None or len(shape(v)) != 3:
        return None
    h, s, d = shape(v)
    inner = top.input
    split = producer(inner, graph.SplitHeadsOp)
    hkv = split.heads.value.data if split is not None else 1
    m = producer(split.input if split is not None else inner, graph.MulOp)
    if m is None:
        return None
    for ones, flat in ((m.lhs, m.rhs), (m.rhs, m.lhs)):
        if splat(ones) != 1.0 or len(shape(ones)) != 2 or len(shape(flat)) != 1:
            continue
        r, n = shape(ones)
        src = producer(flat, graph.ReshapeOp)
        if src is None or r <= 1 or n != hkv * s * d or h != hkv * r or shape(m.result) != (r, n):
            continue
        return src.input, hkv
    return None


@dataclass
class RaiseGroupedKV(RewritePattern):
    """`graph.attention` over KV heads repeated for the query heads (SDPA without native
    grouping: every KV head copied r times) -> the attention over the KV heads themselves,
    which groups them natively: r times less K and V to move, hold and multiply."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.AttentionOp, rewriter: PatternRewriter) -> None:
        k, v = repeated_heads(op.k), repeated_heads(op.v)
        if k is None or v is None or k[1] != v[1] or shape(op.k) != shape(op.v):
            return
        _, sk, d = shape(op.k)
        kv_type = builtin.TensorType(op.k.type.element_type, (k[1], sk, d))  # type: ignore[attr-defined]
        kv = []
        for src in (k[0], v[0]):
            if src.type == kv_type:
                kv.append(src)
                continue
            view = graph.ReshapeOp.create(operands=[src], result_types=[kv_type])
            rewriter.insert(view, InsertPoint.before(op))
            kv.append(view.result)
        rest = [op.bias] if op.bias is not None else []
        new = graph.AttentionOp.create(
            operands=[op.q, *kv, *rest], result_types=[op.result.type], attributes=dict(op.attributes)
        )
        replace_root(rewriter, op, new)


def _row_mean_of(v: SSAValue) -> SSAValue | None:
    """The x of `reduce(mean)` over x's last axis (read through a reshape that keeps that axis:
    the importer reduces a [rows, 1, C] view), giving one value per row of x."""
    red = producer(v, graph.ReduceOp)
    if red is None or red.kind.data != "mean" or not sole_use(v):
        return None
    x = red.input
    if red.axis_index() != len(shape(x)) - 1:
        return None
    rs = producer(x, graph.ReshapeOp)
    if rs is not None and sole_use(x) and shape(rs.input)[-1:] == shape(x)[-1:]:
        x = rs.input
    rows = math.prod(shape(x)[:-1])
    return x if math.prod(shape(red.result)) == rows else None


def _rows_source(v: SSAValue) -> SSAValue:
    """`v` before reshapes that keep its last axis (its rows, however the leading axes fold)."""
    while (rs := producer(v, graph.ReshapeOp)) is not None and shape(rs.input)[-1:] == shape(v)[-1:]:
        v = rs.input
    return v


def _square_of(v: SSAValue) -> SSAValue | None:
    """The t of `t * t` or `pow(t, 2)`."""
    m = producer(v, graph.MulOp)
    if m is not None and m.lhs is m.rhs and sole_use(v):
        return m.lhs
    pw = producer(v, graph.PowOp)
    if pw is not None and near(splat(pw.rhs), 2.0) and sole_use(v):
        return pw.lhs
    return None


def _norm_parts(op: Operation) -> tuple[SSAValue, SSAValue] | None:
    """(numerator, the statistic under the root) of `n * rsqrt(a)`, `n * reciprocal(sqrt(a))`
    (already rsqrt by RaiseRsqrtReciprocal) or `n / sqrt(a)`."""
    if isinstance(op, graph.MulOp):
        for n, r in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            rs = producer(r, graph.RsqrtOp)
            if rs is not None and sole_use(r):
                return n, rs.input
    if isinstance(op, graph.DivOp):
        sq = producer(op.rhs, graph.SqrtOp)
        if sq is not None and sole_use(op.rhs):
            return op.lhs, sq.input
    return None


def _splat_param(rewriter: PatternRewriter, op: Operation, value: float, c: int, dtype: Attribute) -> SSAValue:
    """`c` copies of `value` for a raised norm, one parameter per function, width and type."""
    name = f"norm_{'ones' if value == 1.0 else 'zeros'}_{c}_{dtype}"
    return shared_param(rewriter, op, name, np.full((c,), value, np.float32), dtype)


@dataclass
class RaiseNorm(RewritePattern):
    """`t / sqrt(mean(t^2) + eps)` over the last axis (or `t * rsqrt(...)`): `graph.rms_norm t`;
    when t = x - mean(x), `graph.layer_norm x` (unit scale, zero shift: an affine after it stays
    as the model wrote it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        parts = _norm_parts(op) if isinstance(op, graph.MulOp | graph.DivOp) else None
        if parts is None:
            return
        n, a = parts
        add = producer(a, graph.AddOp)
        if add is None or not sole_use(a) or shape(n) != shape(op.results[0]):
            return
        for var, e in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            eps = splat(e)
            if eps is None or eps < 0:
                continue
            mean_of = _row_mean_of(var)
            if mean_of is None or _square_of(mean_of) is not n:
                continue
            c, dt = shape(n)[-1], n.type.element_type  # type: ignore[attr-defined]
            sub = producer(n, graph.SubOp)
            x = sub.lhs if sub is not None else None
            gamma = _splat_param(rewriter, op, 1.0, c, dt)
            mu = _row_mean_of(sub.rhs) if sub is not None else None
            same = mu is not None and _rows_source(mu) is _rows_source(x)
            if same and len({u.operation for u in n.uses}) == 2 and shape(x) == shape(n):
                beta = _splat_param(rewriter, op, 0.0, c, dt)
                new = graph.LayerNormOp.create(operands=[x, gamma, beta], result_types=[op.results[0].type])
            else:
                new = graph.RmsNormOp.create(operands=[n, gamma], result_types=[op.results[0].type])
            new.attributes["epsilon"] = builtin.FloatAttr(eps, builtin.f64)
            replace_root(rewriter, op, new)
            return


def _last_axis_half(v: SSAValue, x: SSAValue | None, start: int) -> SSAValue | None:
    """x when `v` is `graph.slice x` of x's last-axis half from `start`, rows whole (x given:
    that x only)."""
    sl = producer(v, graph.SliceOp)
    if sl is None or not sole_use(v) or (x is not None and sl.input is not x):
        return None
    xs, rs = shape(sl.input), shape(v)
    if len(xs) < 1 or xs[-1] != 2 * rs[-1] or xs[:-1] != rs[:-1]:
        return None
    return sl.input if sl.offsets() == (*(0,) * (len(xs) - 1), start) else None


@dataclass
class RaiseRotateHalf(RewritePattern):
    """Rotary's `concat(-x[..., D/2:], x[..., :D/2])` over the last axis -> x times the signed
    permutation that computes it (every output one input times +-1: exact), one [D, D] constant
    per function, width and type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConcatOp, rewriter: PatternRewriter) -> None:
        r = shape(op.result)
        if len(op.inputs) != 2 or len(r) != 2 or op.axis.value.data != 1 or r[1] % 2:
            return
        neg = producer(op.inputs[0], graph.NegOp)
        if neg is None or not sole_use(op.inputs[0]):
            return
        d, h = r[1], r[1] // 2
        x = _last_axis_half(neg.input, None, h)
        if x is None or _last_axis_half(op.inputs[1], x, 0) is None:
            return
        m = np.zeros((d, d), np.float32)
        m[np.arange(h) + h, np.arange(h)] = -1.0
        m[np.arange(h), np.arange(h) + h] = 1.0
        dt = op.result.type.element_type  # type: ignore[attr-defined]
        w = shared_param(rewriter, op, f"rotate_half_{d}_{dt}", m, dt)
        replace_root(rewriter, op, graph.MatmulOp(x, w, op.result.type))


@dataclass
class FoldViewChain(RewritePattern):
    """A chain of transposes and reshapes that leaves every element where it was (a layout
    change and its inverse: NHWC -> NCHW around an imported conv and back) -> one reshape of its
    source, or the source itself. Matched at the chain's end, back to the furthest view whose
    composite is the identity (views other readers share stay for them)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, VIEW_OPS):
            return
        res = op.results[0]
        if res.has_one_use() and isinstance(next(iter(res.uses)).operation, VIEW_OPS):
            return  # not the chain's end
        chain, v = [op], op.operands[0]
        while isinstance(v.owner, VIEW_OPS):
            chain.insert(0, v.owner)
            v = v.owner.operands[0]
        for k in range(len(chain) - 1):  # the furthest source first
            src = chain[k].operands[0]
            n = math.prod(shape(src))
            if n > MAX_VIEW_ELEMENTS or not np.array_equal(composite(src, chain[k:]).reshape(-1), np.arange(n)):
                continue
            if shape(src) == shape(res):
                below = op.operands[0].owner
                rewriter.replace_all_uses_with(res, src)
                rewriter.erase(op)
                erase_dead(rewriter, [below])
                return
            replace_root(rewriter, op, graph.ReshapeOp.create(operands=[src], result_types=[res.type]))
            return


@dataclass
class ShareReshape(RewritePattern):
    """Two reshapes of one value to one type (the importer reshapes a value for each reader that
    wants a view of it; a raised op may leave two) -> the earlier one, read by both."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReshapeOp, rewriter: PatternRewriter) -> None:
        block = op.parent_block()
        for use in list(op.input.uses):
            other = use.operation
            if (
                other is not op
                and isinstance(other, graph.ReshapeOp)
                and other.result.type == op.result.type
                and other.parent_block() is block
                and block is not None
                and block.get_operation_index(other) < block.get_operation_index(op)
            ):
                rewriter.replace_all_uses_with(op.result, other.result)
                rewriter.erase(op)
                return


_SINK_BINARY = (graph.AddOp, graph.SubOp, graph.MulOp, graph.MaxOp, graph.MinOp, graph.DivOp)


def _channels_last(v: SSAValue, depth: int = 8) -> bool:
    """`v` is a convolution's or pool's [N, H, W, C] result, or an elementwise op's on one."""
    op = v.owner
    if isinstance(op, graph.ConvOp | graph.PoolOp):
        return True
    if depth and isinstance(op, (graph.ElementwiseUnaryOp, *_SINK_BINARY)):
        return any(shape(u) == shape(v) and _channels_last(u, depth - 1) for u in op.operands)
    return False


def _row_collapse_source(v: SSAValue) -> SSAValue | None:
    """The rank-4 value `v` is the row collapse of ([N, H, W, C] -> [N H W, C]), or None."""
    op = producer(v, graph.ReshapeOp)
    if op is None:
        return None
    a, r = shape(op.input), shape(v)
    if len(a) != 4 or len(r) != 2 or a[-1] != r[-1]:
        return None
    return op.input


@dataclass
class FoldReshapePair(RewritePattern):
    """A reshape of a reshape -> one reshape of the first's input, or that input itself when
    the shapes agree (`SinkRowCollapse` leaves a collapse right before the next expansion)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = producer(op.input, graph.ReshapeOp)
        if inner is None:
            return
        if shape(inner.input) != shape(op.result):
            replace_root(rewriter, op, graph.ReshapeOp(inner.input, op.result.type))
            return
        rewriter.replace_all_uses_with(op.result, inner.input)
        rewriter.erase(op)
        erase_dead(rewriter, [inner])


@dataclass
class SinkRowCollapse(RewritePattern):
    """An elementwise op on the row collapse of a channels-last value -> the op on the [N, H, W,
    C] value, collapsed after it. The ONNX importer computes a convolution's bias, norm, residual
    and activation on the [N H W, C] rows; moved below them, the collapse meets the next
    convolution's [N, H, W, C] view and the two fold away (`FoldViewChain`), so the chain stays
    in the convolution's own layout instead of being re-laid out around every op. A binary op
    sinks when its other operand is the collapse of a value of the same shape or a [C] row.
    Only a convolution's (or pool's) values sink: other rank-4 values stay as the importer
    shaped them."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, graph.ElementwiseUnaryOp):
            src = _row_collapse_source(op.operands[0])
            if src is None or not _channels_last(src):
                return
            operands = [src]
        elif isinstance(op, _SINK_BINARY):
            srcs = [_row_collapse_source(v) for v in op.operands]
            operands = []
            four = next((s for s in srcs if s is not None and _channels_last(s)), None)
            if four is None:
                return
            for v, s in zip(op.operands, srcs, strict=True):
                if s is not None and shape(s) == shape(four):
                    operands.append(s)
                elif s is None and shape(v) == (shape(four)[-1],) and v is not op.operands[0]:
                    operands.append(v)  # a row vector (a bias) broadcasts over any rank
                else:
                    return
        else:
            return
        res = op.results[0]
        four_t = builtin.TensorType(res.type.element_type, shape(operands[0]))  # type: ignore[attr-defined]
        new = op.create(operands=operands, result_types=[four_t], attributes=dict(op.attributes))
        new.results[0].name_hint = res.name_hint
        back = graph.ReshapeOp(new.results[0], res.type)
        rewriter.insert_op([new, back], InsertPoint.before(op))
        rewriter.replace_all_uses_with(res, back.result)
        rewriter.erase(op)


PATTERNS: tuple[type[RewritePattern], ...] = (
    RaiseGelu,
    RaiseSilu,
    RaiseRelu,
    RaiseRsqrtReciprocal,
    RaiseRsqrtDivide,
    RaiseAttention,
    RaiseGroupedKV,
    RaiseNorm,
    RaiseRotateHalf,
    FoldViewChain,
    ShareReshape,
    SinkRowCollapse,
    FoldReshapePair,
)
"""The raise patterns, in the order they are tried on an op."""


@dataclass(frozen=True)
class RaiseGraphOpsPass(ModulePass):
    """Rewrite chains of primitive graph ops into the fused ops that compute them."""

    name = "raise-graph-ops"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier([p() for p in PATTERNS]), apply_recursively=True, walk_reverse=True
        )
        walker.rewrite_module(op)


__all__ = ["PATTERNS", "RaiseGraphOpsPass", "splat"]
