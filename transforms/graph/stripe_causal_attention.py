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

A causal materialized attention (each tile a block of query rows by a block of keys, all at
once) gains nothing from query stripes alone: the tiles of the first key block are needed by
every row. Its keys and values are striped as well (`key_stripes = Pk`, the same view,
transpose and view over [Hkv, Sk, D], Pk dividing Sk into even blocks), so that every tile's
scores are a triangle of about half its block, which `attention_start` skips per key group.
The grid is the striped one the planner prices cheapest, P x Pk tiles a head (q then padded to
a multiple of P x Pk rows, so each query block is one stripe), where that price plus the query
block's four moves and two each for the key and value blocks is below the plain attention's.
The chains plan as rearranges of their own (and their buffers can move other ops' plans), so
the striping is kept only where the whole function's estimate, planned by the search with and
without it, falls. It is opt-in (`materialized=true`): the two plannings cost compile time, and
the gain is small where it comes (the transformer block example's attention alone falls 251,283
-> 201,245 cycles, the block emulated 1,966,723 -> 1,942,345 striped; transformer_stack's
estimate rises, and the pass declines it).
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
from ipu.transforms.plan.plan_ops import planned_cycles

MOVES = 4
"""The query block's moves a striping adds (stripe and un-stripe, about two exchanges each)."""


def stripes_for(op: graph.AttentionOp, t: Target) -> int | None:
    """The stripes `op` would take on `t` (its query blocks a head), or None when it does not
    qualify: not causal or not streamed, a bias, already striped, a pinned plan (its grid is the
    unstriped op's), or fewer than two blocks."""
    if op.form.data != "streamed" or not _may_stripe(op):
        return None
    hq, s, _ = op.q.type.get_shape()  # type: ignore[union-attr]
    p = min(t.tiles // hq, s // 2)
    return p if p >= 2 else None


def _may_stripe(op: graph.AttentionOp) -> bool:
    """Causal, no bias, not striped yet, and no pinned plan (its grid is the unstriped op's)."""
    if op.causal is None or op.bias is not None or op.stripes is not None:
        return False
    return not any(name.startswith("plan.") for name in op.attributes)


def _words(elements: int, es: int, t: Target) -> int:
    """A tile's even share of `elements` of `es` bytes, in words (a move's exchange)."""
    return -(-elements * es // t.tiles) // 4


def key_stripes_for(op: graph.AttentionOp, t: Target) -> tuple[int, int, int] | None:
    """(query stripes P, key stripes Pk, estimated cycles saved) of the best striped grid for a
    causal materialized `op` on `t`, or None when it does not qualify or no striped grid is
    cheaper than the plain attention with the moves the striping adds."""
    if op.form.data != "materialized" or not _may_stripe(op):
        return None
    (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()  # type: ignore[union-attr]
    es = op.q.type.element_type.bitwidth // 8  # type: ignore[union-attr]
    per = t.tiles // hq
    try:
        plain = choose_attention(hq, hkv, s, sk, d, es, "materialized", t).cycles
    except DiagnosticException:
        return None
    over = t.phase_overhead_cycles()
    best: tuple[int, int, int] | None = None
    for pk in range(2, per // 2 + 1):
        if sk % (2 * pk):
            continue
        p = per // pk
        rows = graph.striped_rows(sk, p * pk)
        try:
            striped = choose_attention(hq, hkv, rows, sk, d, es, "materialized", t, stripes=p, key_stripes=pk).cycles
        except DiagnosticException:
            continue
        moves = MOVES * (_words(hq * rows * d, es, t) + over) + 2 * 2 * (_words(hkv * sk * d, es, t) + over)
        gain = plain - striped - moves
        if gain > 0 and (best is None or gain > best[2]):
            best = (p, pk, gain)
    return best


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
    return plain - striped - MOVES * (_words(hq * rows * d, es, t) + t.phase_overhead_cycles())


def _view(x: SSAValue, shape: list[int], el: builtin.AnyFloat) -> graph.ReshapeOp:
    return graph.ReshapeOp(x, TensorType(el, shape))


def _striped(x: SSAValue, p: int, name: str | None = None) -> list[Operation]:
    """[H, R, D] viewed [H, R / p, p, D], transposed to [H, p, R / p, D], viewed [H, R, D]: row
    j of stripe i is row j p + i (the last op's result is the striped value). Striping in R / p
    stripes undoes it."""
    x_t = x.type
    assert isinstance(x_t, TensorType)
    (h, r, d), el = x_t.get_shape(), x_t.element_type
    v4 = _view(x, [h, r // p, p, d], el)
    tr = graph.TransposeOp(v4.result, (0, 2, 1, 3), TensorType(el, [h, p, r // p, d]))
    out = _view(tr.result, [h, r, d], el)
    out.result.name_hint = name
    return [v4, tr, out]


def stripe(op: graph.AttentionOp, p: int, pk: int | None = None) -> None:
    """Rewrite `op` to take its queries in `p` stripes, and (materialized) its keys and values in
    `pk` (the module docstring's ops)."""
    rw = Rewriter()
    q_t = op.q.type
    assert isinstance(q_t, TensorType)
    (hq, s, d), el = q_t.get_shape(), q_t.element_type
    sk = op.k.type.get_shape()[1]  # type: ignore[union-attr]
    rows = graph.striped_rows(sk, p * (pk or 1))
    name = op.result.name_hint or "attn"
    ops: list[Operation] = []
    q: SSAValue = op.q
    if rows != s:
        pad = graph.PadOp(q, (0, 0, 0), TensorType(el, [hq, rows, d]))
        ops.append(pad)
        q = pad.result
    ops += _striped(q, p, f"{name}_q_striped")
    qs = ops[-1].results[0]
    kv = [op.k, op.v]
    attrs = {**op.attributes, "stripes": IntegerAttr(p, 64)}
    if pk is not None:
        attrs["key_stripes"] = IntegerAttr(pk, 64)
        for i, (x, tag) in enumerate(((op.k, "k"), (op.v, "v"))):
            ops += _striped(x, pk, f"{name}_{tag}_striped")
            kv[i] = ops[-1].results[0]
    att = graph.AttentionOp.create(
        operands=[qs, *kv],
        result_types=[TensorType(el, [hq, rows, d])],
        attributes=attrs,
    )
    att.result.name_hint = f"{name}_striped"
    back = _striped(att.result, rows // p)  # un-striped
    ops += [att, *back]
    out: Operation = back[-1]
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


def _estimate(f: func.FuncOp, t: Target) -> int | None:
    """The planner's estimated cycles of `f` by its search's best plan (None: it cannot be planned)."""
    try:
        return planned_cycles(f, t)  # plans copies: `f` is left as it is
    except DiagnosticException:
        return None


def stripe_function(f: func.FuncOp, t: Target, materialized: bool = False) -> int:
    """Stripe every causal streamed attention of `f` (nested bodies included) where it pays, and
    with `materialized` every causal materialized one whose striping lowers the whole function's
    estimate (its chains' moves and their effect on the other ops' plans are not local); how many."""
    count = 0
    whole: int | None = None
    for i, op in enumerate([o for o in f.walk() if isinstance(o, graph.AttentionOp)]):
        p = stripes_for(op, t)
        if p is not None and striping_gain(op, t, p) > 0:
            stripe(op, p)
            count += 1
        elif materialized and (both := key_stripes_for(op, t)) is not None:
            whole = _estimate(f, t) if whole is None else whole
            trial = f.clone()
            stripe([o for o in trial.walk() if isinstance(o, graph.AttentionOp)][i], both[0], both[1])
            striped = _estimate(trial, t)
            if whole is not None and striped is not None and striped < whole:
                stripe(op, both[0], both[1])
                whole = striped
                count += 1
    return count


@dataclass(frozen=True)
class StripeCausalAttentionPass(ModulePass):
    """Causal attention: query rows (materialized: and keys) striped over the blocks, masked work skipped.
    `target`: the machine whose tiles set the stripes (default: the module's, else mk2);
    `materialized`: stripe causal materialized attentions too, where the function's estimate
    falls (opt-in: it plans the function twice)."""

    name = "stripe-causal-attention"
    target: str | None = None
    materialized: bool = False

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
                stripe_function(f, t, self.materialized)


__all__ = ["StripeCausalAttentionPass", "key_stripes_for", "stripe", "stripe_function", "stripes_for", "striping_gain"]
