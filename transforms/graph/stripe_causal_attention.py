"""`stripe-causal-attention`: a causal streamed attention gets its query rows striped over its query
blocks, so that the key windows skip the rows they all precede.

Streamed attention gives each of a head's P query blocks (one a tile) every key window in turn,
in lock step. Causal, the block of the last rows needs every window while the first block is
masked out of most of them, and a window costs what its busiest tile does: nothing is saved.
Striped, block i holds positions i, P + i, 2P + i, ...: every block has rows at every depth of
the sequence, and at window t0 the rows below t0 / P (the same count on every tile, give or take
one) precede all its keys. `plan.attention` skips them (`attention_skipped_rows`): the windows
cost less and less, about half the steps' work in all. (PopLibs pairs early with late query
blocks for the same end; the stripes also balance within a block.)

The rewrite is explicit graph IR a researcher can read: q padded to S' = P ceil(Sk / P) rows
(the padding rows are positions Sk and past, and are dropped), viewed [H, S'/P, P, D],
transposed to [H, P, S'/P, D] and viewed [H, S', D]; the attention marked `stripes = P`; its
result un-striped by the inverse view, transpose and view and sliced back to S rows. P is the
query blocks the planner gives each head, the target's tiles over the query heads. It is
applied only where the estimate says it pays: the striped attention's price plus four moves of
the query block (the stripe and the un-stripe, each about two exchanges) below the plain one's.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import IntegerAttr, TensorType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph
from ipu.dialects.ipu import target_attr_of
from ipu.dialects.value_names import DERIVED
from ipu.target import DEFAULT_TARGET, Target, load_target
from ipu.transforms.levels import expect_level
from ipu.transforms.plan.families.attention import choose_attention

MOVES = 4
"""The query block's moves a striping adds (stripe and un-stripe, about two exchanges each)."""


def stripes_for(op: graph.AttentionOp, t: Target) -> int | None:
    """The stripes `op` would take on `t` (its query blocks a head), or None when it does not
    qualify: not causal or not streamed, a bias, already striped, a pinned plan (its grid is the
    unstriped op's), or fewer than two blocks."""
    if op.causal is None or op.form.data != "streamed" or op.bias is not None or op.stripes is not None:
        return None
    if any(name.startswith("plan.") for name in op.attributes):
        return None
    hq, s, _ = op.q.type.get_shape()  # type: ignore[union-attr]
    p = min(t.tiles // hq, s // 2)
    return p if p >= 2 else None


def striping_gain(op: graph.AttentionOp, t: Target, p: int) -> int:
    """Estimated cycles striping `op` into `p` stripes saves (negative: it costs)."""
    (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()  # type: ignore[union-attr]
    es = op.q.type.element_type.bitwidth // 8  # type: ignore[union-attr]
    try:
        plain = choose_attention(hq, hkv, s, sk, d, es, "streamed", t).cycles
        rows = graph.striped_rows(sk, p)
        striped = choose_attention(hq, hkv, rows, sk, d, es, "streamed", t, stripes=p).cycles
    except DiagnosticException:  # does not fit one way or the other: leave it to the planner
        return -1
    words = -(-hq * rows * d * es // t.tiles) // 4
    return plain - striped - MOVES * (words + t.phase_overhead_cycles())


def _view(x: SSAValue, shape: list[int], el: builtin.AnyFloat) -> graph.ReshapeOp:
    return graph.ReshapeOp(x, TensorType(el, shape))


def stripe(op: graph.AttentionOp, p: int) -> None:
    """Rewrite `op` to take its queries in `p` stripes (the module docstring's ops)."""
    rw = Rewriter()
    q_t = op.q.type
    assert isinstance(q_t, TensorType)
    (hq, s, d), el = q_t.get_shape(), q_t.element_type
    sk = op.k.type.get_shape()[1]  # type: ignore[union-attr]
    rows = graph.striped_rows(sk, p)
    per = rows // p
    name = op.result.name_hint or "attn"
    ops: list[Operation] = []
    q: SSAValue = op.q
    if rows != s:
        pad = graph.PadOp(q, (0, 0, 0), TensorType(el, [hq, rows, d]))
        ops.append(pad)
        q = pad.result
    v4 = _view(q, [hq, per, p, d], el)
    tr = graph.TransposeOp(v4.result, (0, 2, 1, 3), TensorType(el, [hq, p, per, d]))
    qs = _view(tr.result, [hq, rows, d], el)
    qs.result.name_hint = f"{name}_q_striped"
    ops += [v4, tr, qs]
    att = graph.AttentionOp.create(
        operands=[qs.result, op.k, op.v],
        result_types=[TensorType(el, [hq, rows, d])],
        attributes={**op.attributes, "stripes": IntegerAttr(p, 64)},
    )
    att.result.name_hint = f"{name}_striped"
    a4 = _view(att.result, [hq, p, per, d], el)
    back = graph.TransposeOp(a4.result, (0, 2, 1, 3), TensorType(el, [hq, per, p, d]))
    out = _view(back.result, [hq, rows, d], el)
    ops += [att, a4, back, out]
    if rows != s:
        cut = graph.SliceOp(out.result, (0, 0, 0), q_t)
        ops.append(cut)
        out = cut
    for o in ops:  # none is a value of the model's reference but the last, the old result
        if o is not out:
            o.attributes[DERIVED] = UnitAttr()
        if "onnx.node" in op.attributes:
            o.attributes["onnx.node"] = op.attributes["onnx.node"]
    out.result.name_hint = op.result.name_hint
    rw.insert_op(ops, InsertPoint.before(op))
    op.result.replace_all_uses_with(out.results[0])
    rw.erase_op(op)


def stripe_function(f: func.FuncOp, t: Target) -> int:
    """Stripe every causal streamed attention of `f` (nested bodies included) where it pays; how many."""
    count = 0
    for op in [o for o in f.walk() if isinstance(o, graph.AttentionOp)]:
        p = stripes_for(op, t)
        if p is not None and striping_gain(op, t, p) > 0:
            stripe(op, p)
            count += 1
    return count


@dataclass(frozen=True)
class StripeCausalAttentionPass(ModulePass):
    """Causal streamed attention: query rows striped over the query blocks, masked windows skipped.
    `target`: the machine whose tiles set the stripes (default: the module's, else mk2)."""

    name = "stripe-causal-attention"
    target: str | None = None

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        attr = target_attr_of(op)
        if attr is not None and self.target and self.target != attr.target_name.data:
            raise DiagnosticException(
                f"{self.name}: target {self.target} contradicts the module's {attr.target_name.data}"
            )
        t = attr.target if attr is not None else load_target(self.target or DEFAULT_TARGET)
        for f in op.body.block.ops:
            if isinstance(f, func.FuncOp):
                stripe_function(f, t)


__all__ = ["StripeCausalAttentionPass", "stripe", "stripe_function", "stripes_for", "striping_gain"]
