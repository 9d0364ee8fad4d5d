"""`RaiseAttention`: the attention chain both exporters spell op by op, raised into one
`graph.attention` on graph IR.

Imported op by op, eager attention is

    batch_matmul(softmax(terms(batch_matmul(Q, K^T))), V)

over heads `[H, S, D]` (a batch folded into the heads), where `terms` are, in any order, scalar
scales (a multiplication or division by a constant), additive terms (a constant position bias or
mask, or a tensor computed at run time) and `graph.where` masks on a constant condition, the
softmax optionally guarded against NaN (`where(isnan(p), 0, p)`, the dynamo exporter's guard for
fully masked rows). Q, K^T and V are read through the views the importer made (reshapes and
transposes, a `split_heads` of `[S, H*D]` rows, a scale on Q or K folded into the attention's);
KV heads repeated for the query heads stay repeated here and `RaiseGroupedKV` groups them.

A constant mask that hides no key is dropped, a causal one becomes `causal`, and every other
constant term (scaled by the factors between it and the softmax) is summed into the additive
bias, shared by all heads when every head's is the same; a run-time term becomes a bias operand.
A chain this does not recognise stays op by op (batched matmuls, softmax, where): slower, and
computed exactly as the model says, a fully masked row's NaN included.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, StringAttr, UnitAttr, f64, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from ipu.dialects import graph
from ipu.transforms.graph.graph_match import (
    MAX_VIEW_ELEMENTS,
    VIEW_OPS,
    composite,
    producer,
    replace_root,
    shape,
    shared_param,
    sole_use,
    splat,
)

MASKED = -1e4
"""A mask value at or below this (after the scale) removes the key (float16's and float32's most
negative finite values and -inf all qualify)."""


def mask_kind(m: np.ndarray, s: int, sk: int, visible_is_true: bool | None) -> str | None:
    """ "none" | "causal" for a constant mask broadcast over [.., s, sk]; None when neither.

    `visible_is_true` None: an additive mask (0 visible, <= MASKED hidden); True/False: a bool
    condition whose true entries are the visible (True) or the hidden (False) keys."""
    try:
        full = np.broadcast_to(m, (*m.shape[:-2], s, sk)).reshape(-1, s, sk)
    except ValueError:
        return None
    if not (full == full[:1]).all():
        return None  # differs between heads or batches
    m2 = full[0]
    if visible_is_true is None:
        visible = m2 == 0
        if not (visible | (m2 <= MASKED)).all():
            return None  # a bias, not a mask
    else:
        visible = m2.astype(bool) if visible_is_true else ~m2.astype(bool)
    if visible.all():
        return "none"
    if s == sk and (visible == np.tri(s, sk, dtype=bool)).all():
        return "causal"
    return None


def constant(v: SSAValue) -> np.ndarray | None:
    """The values of a dense `graph.parameter`, broadcast to its type's shape (None otherwise)."""
    op = v.owner
    if not isinstance(op, graph.ParameterOp) or not isinstance(op.init, DenseIntOrFPElementsAttr):
        return None
    if math.prod(shape(v)) > MAX_VIEW_ELEMENTS:
        return None
    arr = np.asarray(graph.dense_values(op.init), np.float32) if shape(v) else np.asarray(op.init.get_values())
    return np.broadcast_to(arr.reshape(op.init.get_shape() or ()), shape(v))


def _scale_of(op: Operation) -> float | None:
    """The factor of `x * c`, `c * x` or `x / c` by a scalar constant c, keeping x's shape."""
    if isinstance(op, graph.MulOp):
        for x, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            f = splat(c)
            if f is not None and shape(x) == shape(op.result) and splat(x) is None:
                return f
    if isinstance(op, graph.DivOp):
        f = splat(op.rhs)
        if f is not None and f != 0.0 and shape(op.lhs) == shape(op.result):
            return 1.0 / f
    return None


def _data(op: Operation) -> SSAValue:
    """The operand a view or a scalar scale carries through."""
    if isinstance(op, graph.MulOp) and splat(op.lhs) is not None:
        return op.rhs
    return op.operands[0]


def _heads_map(h: int, s: int, d: int) -> np.ndarray:
    """Where `split_heads` takes each element of [h, s, d] from its [s, h * d] rows."""
    return np.arange(s * h * d).reshape(s, h, d).transpose(1, 0, 2)


@dataclass
class Heads:
    """An operand `[H, S, D]` as its source and how to read it: `view` (a reshape) or `split`
    (`split_heads` of `[S, H*D]` rows), with the scalar factor met on the way."""

    src: SSAValue
    kind: str
    factor: float


def trace_heads(v: SSAValue, want: tuple[int, int, int], transposed: bool = False) -> Heads | None:
    """Read `v` (or, `transposed`, its transpose on the last two axes) as `want` = [H, S, D]:
    back through reshapes, transposes and scalar scales to the furthest value it is a plain view
    of, or the `[S, H*D]` rows it splits into heads."""
    chain: list[Operation] = []
    cur = v
    while isinstance(cur.owner, VIEW_OPS) or (
        isinstance(cur.owner, (graph.MulOp, graph.DivOp)) and _scale_of(cur.owner) is not None
    ):
        chain.insert(0, cur.owner)
        cur = _data(cur.owner)
    h, s, d = want
    n = h * s * d
    if n > MAX_VIEW_ELEMENTS:
        return None
    for k in range(len(chain) + 1):  # the furthest source first
        src = _data(chain[k]) if k < len(chain) else v
        if math.prod(shape(src)) != n:
            continue
        factor = math.prod(_scale_of(o) or 1.0 for o in chain[k:] if not isinstance(o, VIEW_OPS))
        a = composite(src, chain[k:]).reshape((h, d, s) if transposed else want)
        if transposed:
            a = a.transpose(0, 2, 1)
        if np.array_equal(a.reshape(-1), np.arange(n)):
            return Heads(src, "view", factor)
        if len(shape(src)) == 2 and shape(src) == (s, h * d) and np.array_equal(a, _heads_map(h, s, d)):
            return Heads(src, "split", factor)
    return None


def _make_heads(rewriter: PatternRewriter, at: Operation, x: Heads, want: tuple[int, int, int]) -> SSAValue:
    et = x.src.type.element_type  # type: ignore[attr-defined]
    t = builtin.TensorType(et, want)
    if x.kind == "split":
        heads = {"heads": IntegerAttr(want[0], i64)}
        op = graph.SplitHeadsOp.create(operands=[x.src], result_types=[t], attributes=heads)
    elif shape(x.src) == want:
        return x.src
    else:
        op = graph.ReshapeOp(x.src, t)
    rewriter.insert(op, InsertPoint.before(at))
    return op.results[0]


def _through_views(v: SSAValue) -> SSAValue:
    """`v` before the reshapes that keep its last axis (the importer's row views of the scores)."""
    while isinstance(v.owner, graph.ReshapeOp) and sole_use(v) and shape(v.owner.input)[-1:] == shape(v)[-1:]:
        v = v.owner.input
    return v


def _nan_guard(p: SSAValue) -> SSAValue | None:
    """The p of `where(isnan(p), 0, p)` (IsNaN imported as `not(equal(p, p))`)."""
    w = producer(p, graph.WhereOp)
    if w is None or splat(w.lhs) != 0.0:
        return None
    n = producer(w.condition, graph.NotOp)
    e = producer(n.input, graph.EqualOp) if n is not None else None
    if e is None or not (e.lhs is e.rhs is w.rhs):
        return None
    return w.rhs


def _broadcast_source(w: SSAValue) -> SSAValue:
    """A run-time term the importer broadcast over the heads (`ones [r, N]` times its flat
    values, viewed back): its values once; else `w`."""
    x = w
    while isinstance(x.owner, graph.ReshapeOp):
        x = x.owner.input
    m = producer(x, graph.MulOp)
    if m is None:
        return w
    for ones, flat in ((m.lhs, m.rhs), (m.rhs, m.lhs)):
        if splat(ones) == 1.0 and len(shape(flat)) == 1 and len(shape(ones)) == 2 and shape(ones)[1] == shape(flat)[0]:
            while isinstance(flat.owner, graph.ReshapeOp):
                flat = flat.owner.input
            return flat
    return w


@dataclass
class Scores:
    """What stands between `q k^T` and the softmax, read back from the softmax."""

    qk: graph.BatchMatmulOp
    scale: float = 1.0
    causal: bool = False
    consts: list[tuple[np.ndarray, float, SSAValue | None]] = field(default_factory=list)  # (term, scale after, param)
    runtime: list[tuple[SSAValue, float]] = field(default_factory=list)  # (term, scale after)


def _leads_to_qk(v: SSAValue, depth: int = 32) -> bool:
    """Whether `v` leads back to a batch matmul through the scores' views, scales, additive
    terms and masks (which operand of an add is the scores, which the term)."""
    for _ in range(depth):
        op = v.owner
        if isinstance(op, graph.BatchMatmulOp):
            return True
        if isinstance(op, graph.ReshapeOp) or (isinstance(op, Operation) and _scale_of(op) is not None):
            v = _data(op)
        elif isinstance(op, graph.AddOp):
            return _leads_to_qk(op.lhs, depth - 1) or _leads_to_qk(op.rhs, depth - 1)
        elif isinstance(op, graph.WhereOp):
            v = op.lhs if constant(op.rhs) is not None else op.rhs
        else:
            return False
    return False


def read_scores(x: SSAValue, nh: int, s: int, sk: int) -> Scores | None:
    """The scale, masks and additive terms between the softmax input `x` and `q k^T`."""
    scale, causal = 1.0, False
    consts: list[tuple[np.ndarray, float, SSAValue | None]] = []
    runtime: list[tuple[SSAValue, float]] = []
    cur = x
    for _ in range(64):
        if not sole_use(cur) and cur is not x:
            return None
        op = cur.owner
        if not isinstance(op, Operation):
            return None
        if isinstance(op, graph.BatchMatmulOp):
            if shape(op.result) != (nh, s, sk):
                return None
            return Scores(op, scale, causal, consts, runtime)
        if isinstance(op, graph.ReshapeOp):
            if shape(op.input)[-1:] != (sk,):
                return None
            cur = op.input
            continue
        f = _scale_of(op)
        if f is not None:
            scale *= f
            cur = _data(op)
            continue
        if isinstance(op, graph.AddOp):
            a, b = op.lhs, op.rhs
            if constant(a) is not None or (constant(b) is None and not _leads_to_qk(a)):
                a, b = b, a  # a: the scores, b: the term added to them
            term = constant(b)
            if term is not None:
                full = np.asarray(np.broadcast_to(term, shape(op.result)), np.float32).reshape(nh, s, sk)
                kind = mask_kind(full, s, sk, None)
                if kind is None:
                    consts.append((full, scale, b))
                causal = causal or kind == "causal"
            elif _leads_to_qk(a):
                runtime.append((b, scale))
            else:
                return None
            cur = a
            continue
        if isinstance(op, graph.WhereOp):
            cond = constant(op.condition)
            if cond is None:
                return None
            full_cond = np.broadcast_to(cond, shape(op.result)).reshape(nh, s, sk).astype(bool)
            fill_t, fill_f = splat(op.lhs), splat(op.rhs)
            if fill_f is not None and fill_f <= MASKED and constant(op.lhs) is None:
                cur, visible, fill = op.lhs, full_cond, fill_f
            elif fill_t is not None and fill_t <= MASKED and constant(op.rhs) is None:
                cur, visible, fill = op.rhs, ~full_cond, fill_t
            else:
                return None
            kind = mask_kind(visible, s, sk, True)
            if kind is None:  # the replaced scores as an additive mask: 0 visible, the fill hidden
                consts.append((np.where(visible, np.float32(0), np.float32(fill)), scale, None))
            causal = causal or kind == "causal"
            continue
        return None
    return None


@dataclass
class RaiseAttention(RewritePattern):
    """`batch_matmul(softmax(terms(batch_matmul(Q, K^T))), V)` -> `graph.attention` (see the
    module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.BatchMatmulOp, rewriter: PatternRewriter) -> None:
        nh, s, sk = shape(op.lhs)
        d = shape(op.rhs)[2]
        p = _through_views(op.lhs)
        guarded = _nan_guard(p)
        if guarded is not None:
            guard_uses = {u.operation for u in guarded.uses}
            if len(guard_uses) != 2 or not sole_use(p):  # read by the guard's equal and where only
                return
            p = guarded
        elif not sole_use(p):
            return
        sm = producer(p, graph.SoftmaxOp)
        if sm is None or shape(p)[-1] != sk:
            return
        sc = read_scores(sm.input, nh, s, sk)
        if sc is None:
            return
        dq = shape(sc.qk.lhs)[2]
        q = trace_heads(sc.qk.lhs, (nh, s, dq))
        k = trace_heads(sc.qk.rhs, (nh, sk, dq), transposed=True)
        v = trace_heads(op.rhs, (nh, sk, d))
        if q is None or k is None or v is None or v.factor != 1.0 or dq != d:
            return
        scale = sc.scale * q.factor * k.factor
        if scale <= 0:
            return
        total = np.zeros((nh, s, sk), np.float32)
        for term, after, _ in sc.consts:
            total = total + np.float32(after) * term
        hidden = np.isneginf(total) | (np.triu(np.ones((s, sk), bool), 1) if sc.causal else False)
        if sc.consts and guarded is None and hidden.all(axis=-1).any():
            return  # a fully masked row: its softmax is NaN, which op by op keeps
        et = op.result.type.element_type  # type: ignore[attr-defined]
        bias = self.bias(rewriter, op, sc, total, et, nh, s, sk)
        if bias is False:
            return
        qv = _make_heads(rewriter, op, q, (nh, s, d))
        kv = _make_heads(rewriter, op, k, (nh, sk, d))
        vv = _make_heads(rewriter, op, v, (nh, sk, d))
        attrs: dict[str, Attribute] = {"form": StringAttr("materialized")}
        if sc.causal:
            attrs["causal"] = UnitAttr()
        attrs["scale"] = FloatAttr(scale, f64)
        operands = [qv, kv, vv] if bias is None else [qv, kv, vv, bias]
        new = graph.AttentionOp.create(operands=operands, result_types=[op.result.type], attributes=attrs)
        replace_root(rewriter, op, new)

    @staticmethod
    def bias(
        rewriter: PatternRewriter,
        at: Operation,
        sc: Scores,
        total: np.ndarray,
        et: object,
        nh: int,
        s: int,
        sk: int,
    ) -> SSAValue | None | bool:
        """The additive bias operand: the constant terms' sum and the run-time terms; None when
        there is none, False when a term cannot be one."""
        sources = [(_broadcast_source(w), after) for w, after in sc.runtime]
        sizes = {math.prod(shape(src)) for src, _ in sources}
        if len(sizes) > 1 or not sizes <= {s * sk, nh * s * sk}:
            return False  # not one [heads or 1, S, Sk] bias (or shared and per-head terms mixed)
        if any(src.type.element_type != et for src, _ in sources):  # type: ignore[attr-defined]
            return False
        per_head = sizes == {nh * s * sk} and nh > 1
        if sc.consts and sources and not per_head and not bool((total == total[:1]).all()):
            return False  # a per-head constant beside a shared run-time term
        terms: list[SSAValue] = []
        for src, after in sources:
            t = builtin.TensorType(et, (nh if per_head else 1, s, sk))  # type: ignore[arg-type]
            r = graph.ReshapeOp(src, t)
            rewriter.insert(r, InsertPoint.before(at))
            y = r.result
            if after != 1.0:
                full = np.full(shape(y), after, np.float32)
                k = shared_param(rewriter, at, f"attention_bias_scale_{after:g}", full, et)  # type: ignore[arg-type]
                m = graph.MulOp(y, k, t)
                rewriter.insert(m, InsertPoint.before(at))
                y = m.result
            terms.append(y)
        if sc.consts:
            shared = bool((total == total[:1]).all())
            hb = 1 if shared and not per_head else nh
            t = builtin.TensorType(et, (hb, s, sk))  # type: ignore[arg-type]
            lone = sc.consts[0] if len(sc.consts) == 1 and sc.consts[0][1] == 1.0 else None
            if lone is not None and lone[2] is not None and math.prod(shape(lone[2])) == hb * s * sk:
                c = graph.ReshapeOp(lone[2], t)  # the model's own constant, shared by every layer that adds it
                rewriter.insert(c, InsertPoint.before(at))
                terms.insert(0, c.result)
            else:  # one constant per distinct bias, shared by every attention that adds the same
                values = np.ascontiguousarray(total[:hb])
                name = f"attention_bias_{hashlib.sha256(values.tobytes()).hexdigest()[:12]}"
                if lone is not None and lone[2] is not None and isinstance(lone[2].owner, graph.ParameterOp):
                    name = f"{lone[2].owner.sym_name.data}_{'shared' if hb == 1 else 'per_head'}"
                terms.insert(0, shared_param(rewriter, at, name, values, et))  # type: ignore[arg-type]
        if not terms:
            return None
        acc = terms[0]
        for x in terms[1:]:
            a = graph.AddOp(acc, x, acc.type)
            rewriter.insert(a, InsertPoint.before(at))
            acc = a.result
        return acc


__all__ = ["MASKED", "RaiseAttention", "mask_kind", "read_scores", "trace_heads"]
