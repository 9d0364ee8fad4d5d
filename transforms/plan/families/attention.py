"""The attention family: `graph.attention` over a (kv heads, group, query blocks, key blocks)
tile grid, materialized (each tile's key block at once) or streamed (key windows moved in turn,
an online softmax), as `plan.attention` and `plan.attention_combine`; and the head split and
merge around it (`graph.split_heads`, `graph.merge_heads`). Its decision point is the grid and
the key block, recorded as `#plan.choice<attention, grid = […], key_block = K>`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import KERNELS, ONE_BITS
from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.target import Target
from ipu.transforms.plan.budget import MEMORY_FRACTION, TargetMemo, op_budget
from ipu.transforms.plan.families.base import DecisionFamily, Decisions, OpCost, check_fit, check_tiles, grid_text
from ipu.transforms.plan.layouts import attention_bias_layout, attention_layouts, plan_type, row_layout
from ipu.transforms.plan.pricing import conversion_cost, esize_of
from ipu.transforms.plan.state import Planner, describe, value_attr

# ---------------------------------------------------------------- candidates


@dataclass(frozen=True)
class AttentionChoice:
    form: str
    grid: tuple[int, int, int, int]
    rows: int  # query rows per tile (state block)
    out_rows: int  # rows per tile after the combine
    keys: int  # keys per update call (materialized: the tile's key block; streamed: the window)
    cycles: int
    bytes_per_tile: int
    interleaved_bytes: int  # of bytes_per_tile, those the AMP streams (query, key and value blocks)


def streamed_steps_cycles(
    t: Target, qr: int, kb: int, d: int, esize: int, sk: int, bias: bool = False, stripes: int | None = None
) -> int:
    """A streamed attention's kernel calls over its windows of `kb` of `sk` keys, each priced as
    the kernel is: the first starts the state, later ones update it; with `stripes`, a window
    skips the rows that precede its keys (`attention_skipped_rows`). Memoized per target: the
    search prices each candidate key block and each planned attention many times."""
    key = (qr, kb, d, esize, sk, bias, stripes)
    found, hit = STEPS_MEMO.get(key, t)
    if found and hit is not None:
        return hit
    total = 0
    for t0 in range(0, sk, kb):
        name = ("attention_start" if t0 == 0 else "attention_update") + ("_bias" if bias else "")
        kr = min(kb, sk - t0)
        p = {"qr": qr, "kr": kr, "d": d, "causal": stripes or 0, "scale_bits": ONE_BITS, "k_base": t0, "k_step": 1}
        total += KERNELS[name].cycles(t, p, in_esize=esize)
    STEPS_MEMO.put(key, t, total)
    return total


STEPS_MEMO: TargetMemo[int] = TargetMemo(256)


def materialized_cycles(
    t: Target, qr: int, kr: int, d: int, esize: int, bias: bool = False, stripes: tuple[int, int] | None = None
) -> int:
    """A materialized attention's one `attention_start` over the tile's [qr, kr] block, priced
    as the kernel is; with `stripes` (query stripes, key stripes) it skips, per key group, the
    rows that precede all its keys (`attention_skipped_rows`)."""
    if stripes is None:
        return t.attention_steps_cycles(qr, kr, d, esize, 1, bias)
    p = {"qr": qr, "kr": kr, "d": d, "causal": stripes[0], "scale_bits": ONE_BITS, "k_base": 0, "k_step": stripes[1]}
    return KERNELS["attention_start"].cycles(t, p, in_esize=esize)


CANDIDATES_MEMO: TargetMemo[tuple[AttentionChoice, ...]] = TargetMemo(64)


def attention_candidates(
    hq: int,
    hkv: int,
    s: int,
    sk: int,
    d: int,
    esize: int,
    form: str,
    target: Target,
    bias: bool = False,
    stripes: int | None = None,
    key_stripes: int | None = None,
) -> tuple[AttentionChoice, ...]:
    """Grids (kv heads, group, query blocks, key blocks) and block sizes with estimated cycles
    (memoized per target: the search plans every attention once per plan it tries).
    With an additive `bias`, each tile also holds its bias block, laid out like its scores
    (materialized: [qr, kr]; streamed: [qr, Sk], all keys), and adds it in every update.
    Candidates are priced as map-tiles builds them: the query block scaled once, the first key
    block starting the state (`attention_start`), every update at scale 1. (With fp32 scores,
    ranking so had moved the transformer block's attention to a grid whose neighbours cost
    more; with the scores in the inputs' dtype it picks the same grids as ranking by scaled
    updates on every mk2 example.) With `stripes` (streamed only), q comes as that many query
    blocks a head, whose windows skip the rows they all precede; with `key_stripes` too
    (materialized only), the one grid of `stripes` query blocks by `key_stripes` key blocks, each
    tile skipping per key group the rows that precede its keys."""
    key = (hq, hkv, s, sk, d, esize, form, bias, stripes, key_stripes)
    found, hit = CANDIDATES_MEMO.get(key, target)
    if found and hit is not None:
        return hit
    g = hq // hkv
    per = target.tiles // hq
    if per < 1:
        raise DiagnosticException(
            f"plan-ops: {hq} query heads need at least {hq} tiles; {target.name} has {target.tiles}"
        )
    if stripes is not None and stripes > per:
        raise DiagnosticException(
            f"plan-ops: attention with {stripes} stripes needs {stripes} tiles for each of its {hq} query heads; "
            f"{target.name} has {target.tiles} tiles"
        )
    over = target.phase_overhead_cycles()
    cands: list[AttentionChoice] = []
    if form == "materialized":
        for pk in range(1, per + 1) if key_stripes is None else (key_stripes,):
            pq = min(per // pk, s) if stripes is None else stripes
            if key_stripes is not None and pq * pk > per:
                raise DiagnosticException(
                    f"plan-ops: attention with {pq} x {pk} stripes needs {pq * pk} tiles for each of its {hq} query "
                    f"heads; {target.name} has {target.tiles} tiles"
                )
            ob = math.ceil(s / (pq * pk))
            qr, kr = ob * pk, math.ceil(sk / pk)
            kr += kr % 2
            mem = (
                qr * d * esize
                + 2 * kr * d * esize
                + qr * kr * esize
                + qr * (d + 2) * 4
                + pk * ob * (d + 2) * 4
                + ob * d * esize
                + 16
                + (qr * kr * esize if bias else 0)
            )
            exch = (qr * d * esize + 2 * kr * d * esize + (pk - 1) * ob * (d + 2) * 4) // 4 + 2 * over
            cyc = (
                target.attention_prescale_cycles(qr, d, esize)
                + materialized_cycles(target, qr, kr, d, esize, bias, None if stripes is None else (pq, pk))
                + target.attention_combine_cycles(pk, ob, d)
                + exch
            )
            inter = (qr + 2 * kr) * d * esize
            cands.append(AttentionChoice(form, (hkv, g, pq, pk), qr, ob, kr, cyc, mem, inter))
    else:
        pq = stripes or min(per, s)
        qr = math.ceil(s / pq)
        for kb in (32, 64, 128, 256, 512, 1024):
            if kb > max(sk, 32):
                break
            steps = math.ceil(sk / kb)
            # the windows' source tiles (`attention_window`) also keep their key and value blocks
            inter = (qr + 4 * kb) * d * esize
            mem = qr * d * esize + 4 * kb * d * esize + qr * kb * esize + 2 * qr * (d + 2) * 4 + qr * d * esize + 16
            mem += qr * (sk + sk % 2) * esize if bias else 0
            moves = steps * ((2 * kb * d + (qr * kb if bias else 0)) * esize // 4 + over)
            cyc = (
                target.attention_prescale_cycles(qr, d, esize)
                + streamed_steps_cycles(target, qr, kb, d, esize, sk, bias, stripes)
                + moves
                + target.attention_combine_cycles(1, qr, d)
            )
            cands.append(AttentionChoice(form, (hkv, g, pq, 1), qr, qr, kb, cyc, mem, inter))
    out = tuple(cands)
    CANDIDATES_MEMO.put(key, target, out)
    return out


def choose_attention(
    hq: int,
    hkv: int,
    s: int,
    sk: int,
    d: int,
    esize: int,
    form: str,
    target: Target,
    rank: int = 0,
    counts: list[int] | None = None,
    bias: bool = False,
    stripes: int | None = None,
    key_stripes: int | None = None,
) -> AttentionChoice:
    """The `rank`-th cheapest attention candidate that fits (rank 0: the cheapest)."""
    cands = attention_candidates(hq, hkv, s, sk, d, esize, form, target, bias, stripes, key_stripes)
    budget = op_budget(target)
    inter_cap = MEMORY_FRACTION * sum(r.size for r in target.regions if r.interleaved)
    fits = [c for c in cands if c.bytes_per_tile <= budget and c.interleaved_bytes <= inter_cap]
    if not fits:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {target.name}: {form} attention [{hq}x{s}x{d}] over {sk} keys needs at "
            f"least {best.bytes_per_tile} bytes per tile (grid {'x'.join(map(str, best.grid))}); per-op budget is "
            f"{int(budget)} of {target.memory_size} bytes"
            + ('; try form = "streamed"' if form == "materialized" else "")
        )
    fits.sort(key=lambda c: (c.cycles, c.bytes_per_tile))
    if counts is not None:
        counts.append(len(fits))
    return fits[min(rank, len(fits) - 1)]


@dataclass(frozen=True)
class AttentionRequest:
    """An attention op's decision point."""

    op: graph.AttentionOp
    index: int


# ---------------------------------------------------------------- emission


def _check_head_dim(op: Operation, d: int, index: int) -> None:
    """A head split or merge moves whole head rows between [S, H*D] and [H, S, D]; rows are stored
    padded to whole 32-bit words, so an odd head_dim would move each head's pad as data."""
    if d % 2:
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: head_dim {d} is odd; {op.name} is planned for even head_dim only "
            "(a graph.transpose of the [S, H, D] view is planned for any)"
        )


def _plan_split_heads(p: Planner, op: graph.SplitHeadsOp, index: int) -> None:
    h, s, d = op.result.type.get_shape()
    _check_head_dim(op, d, index)
    want = p.desired.get(op.result)
    if want is None or want.layout.split[2]:  # head_dim stays whole (the consumer converts)
        want = plan_type(op.result.type, row_layout((h, s, d), p.target.tiles))
    # one head a block: the split moves the input as it is into the result's 2-D twin (one
    # exchange); else the input first in the 2-D layout whose head view is the result, and the
    # split then moves whole blocks
    x = p.get(op.input, None, op.name) if plan.one_head_blocks(want.layout) else None
    if x is None or x.type.layout.partial >= 0:
        x = p.get(op.input, plan_type(op.input.type, plan.heads_2d(want.layout)), op.name)
    r = plan.SplitHeadsOp.create(operands=[x], result_types=[want], attributes=value_attr(op))
    p.set(op.result, p.emit(r).results[0])


def _plan_merge_heads(p: Planner, op: graph.MergeHeadsOp, index: int) -> None:
    _check_head_dim(op, op.input.type.get_shape()[2], index)
    x = p.get(op.input, None, op.name)
    if x.type.layout.partial >= 0 or x.type.layout.split[2]:  # whole heads, no partial sums
        x = p.get(op.input, plan_type(op.input.type, row_layout(x.type.layout.shape, p.target.tiles)), op.name)
    r = plan.MergeHeadsOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, plan.heads_2d(x.type.layout))],
        attributes=value_attr(op),
    )
    p.set(op.result, p.emit(r).results[0])


def _plan_attention(p: Planner, op: graph.AttentionOp, index: int) -> None:
    c = p.attention[op]
    (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
    lays = attention_layouts(c.grid, c.rows, hq, hkv, s, sk, d)
    q = p.get(op.q, plan_type(op.q.type, lays["q"], "interleaved"), op.name)
    if c.form == "materialized":
        k = p.get(op.k, plan_type(op.k.type, lays["kv"], "interleaved"), op.name)
        v = p.get(op.v, plan_type(op.v.type, lays["kv"], "interleaved"), op.name)
    else:
        k, v = p.get(op.k, None, op.name), p.get(op.v, None, op.name)
        for x, val in ((k, op.k), (v, op.v)):
            if x.type.layout.partial >= 0:
                raise DiagnosticException("plan-ops: streamed attention keys/values must not be partial sums")
            del val
    operands = [q, k, v]
    if op.bias is not None:
        hb = op.bias.type.get_shape()[0]
        b_lay = attention_bias_layout(c.grid, c.rows, hq, hb, s, sk, c.form)
        operands.append(p.get(op.bias, plan_type(op.bias.type, b_lay), op.name))
    st_t = TensorType(builtin.f32, [hq, s, d + 2])
    attrs: dict[str, Attribute] = {
        "form": StringAttr(c.form),
        "scale": builtin.FloatAttr(op.scale_value(), builtin.f64),
        "key_block": builtin.IntegerAttr(c.keys, 64),
    }
    if op.causal is not None:
        attrs["causal"] = builtin.UnitAttr()
    if op.stripes is not None:
        attrs["stripes"] = op.stripes
    if op.key_stripes is not None:
        attrs["key_stripes"] = op.key_stripes
    attrs |= value_attr(op)  # for the scores checkpoint
    st = plan.AttentionOp.create(operands=operands, result_types=[plan_type(st_t, lays["state"])], attributes=attrs)
    sv = p.emit(st).results[0]
    sv.name_hint = f"{op.result.name_hint or 'attn'}_state"
    comb = plan.AttentionCombineOp.create(
        operands=[sv],
        result_types=[plan_type(op.result.type, lays["out"])],
        attributes=value_attr(op),
    )
    p.set(op.result, p.emit(comb).results[0])
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        form=c.form,
        grid="x".join(map(str, c.grid)),
        rows_per_tile=c.rows,
        keys_per_update=c.keys,
        estimated_cycles=c.cycles,
        bytes_per_tile=c.bytes_per_tile,
    )


class AttentionFamily(DecisionFamily):
    """`graph.attention` -> `plan.attention` + `plan.attention_combine`; head split and merge."""

    name = "attention"
    graph_ops: ClassVar[tuple[type[Operation], ...]] = (graph.SplitHeadsOp, graph.MergeHeadsOp, graph.AttentionOp)
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (
        plan.SplitHeadsOp,
        plan.MergeHeadsOp,
        plan.AttentionOp,
        plan.AttentionCombineOp,
    )
    impls = ("attention",)

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        if isinstance(op, graph.SplitHeadsOp):
            _plan_split_heads(p, op, index)
        elif isinstance(op, graph.MergeHeadsOp):
            _plan_merge_heads(p, op, index)
        else:
            assert isinstance(op, graph.AttentionOp)
            _plan_attention(p, op, index)

    def cost(self, op: Operation, t: Target) -> OpCost:
        if isinstance(op, plan.SplitHeadsOp | plan.MergeHeadsOp):
            r_l = op.result.type.layout
            if op.is_view():  # the input's buffer, as it is
                return 0, 0, 0, 0
            if op.copies_block():  # a copy on each tile
                return KERNELS["copy"].cycles(t, {"elements": r_l.block_elements}, esize_of(op.result.type)), 0, 0, 0
            if isinstance(op, plan.MergeHeadsOp):
                view = plan.heads_view(r_l, op.input.type.shape[2])
                x, f = conversion_cost(op.input.type, op.result.type, t, (1, 0, 2), d_l=view)
            elif plan.one_head_blocks(r_l):
                x, f = conversion_cost(op.input.type, op.result.type, t, d_l=plan.heads_2d(r_l))
            else:
                view = plan.heads_view(op.input.type.layout, op.result.type.shape[2])
                x, f = conversion_cost(op.input.type, op.result.type, t, (1, 0, 2), s_l=view)
            return 0, x, 1, f
        if isinstance(op, plan.AttentionCombineOp):
            src = op.input.type.layout
            full = Layout(src.shape, src.grid, (src.split[0], src.split[1] + (src.partial,), ()), -1, src.first_tile)
            x, f = conversion_cost(op.input.type, op.input.type, t, d_l=full)
            r = op.result.type.layout
            return t.attention_combine_cycles(src.partials, r.block[1], r.shape[2], esize_of(op.result.type)), x, 1, f
        assert isinstance(op, plan.AttentionOp)
        st = op.result.type.layout
        qr, d = st.block[1], st.shape[2] - 2
        e = esize_of(op.q.type)  # the scores' dtype
        scaled = op.scale.value.data != 1.0  # then the query block is scaled once, not the scores
        pre = t.attention_prescale_cycles(qr, d, e) if scaled else 0
        bias = op.bias is not None
        if op.form.data == "materialized":  # one attention_start over the tile's key block
            kr = op.k.type.layout.block_size(1)
            p, pk = op.stripes_value(), op.key_stripes_value()
            stripes = None if p is None or pk is None else (p, pk)
            return pre + materialized_cycles(t, qr, kr, d, e, bias, stripes), 0, 0, 0
        kb, sk = op.key_block.value.data, op.k.type.shape[1]
        steps = math.ceil(sk / kb)
        win_words = 2 * kb * d * esize_of(op.k.type) // 4
        if op.bias is not None:  # each window's bias columns of the tile's rows move in too
            win_words += qr * kb * esize_of(op.bias.type) // 4
        exch = steps * (win_words + t.phase_overhead_cycles() + t.exchange["fragment_cycles"])
        return pre + streamed_steps_cycles(t, qr, kb, d, e, sk, bias, op.stripes_value()), exch, 2 * steps, 2

    def choose(self, req: AttentionRequest, t: Target, d: Decisions) -> AttentionChoice:
        op = req.op
        (hq, s, dh), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
        es = op.q.type.element_type.bitwidth // 8
        counts: list[int] = []
        c = choose_attention(
            hq,
            hkv,
            s,
            sk,
            dh,
            es,
            op.form.data,
            t,
            d.ranks.get(req.index, 0),
            counts,
            op.bias is not None,
            op.stripes_value(),
            op.key_stripes_value(),
        )
        d.counts[req.index] = counts[0]
        return c

    def resolve(self, req: AttentionRequest, attr: plan.ChoiceAttr, t: Target) -> AttentionChoice:
        return _resolve(req.op, req.index, attr, t)

    def attr(self, choice: AttentionChoice) -> plan.ChoiceAttr:
        return plan.ChoiceAttr("attention", choice.grid, key_block=choice.keys)


def _resolve(op: graph.AttentionOp, index: int, attr: plan.ChoiceAttr, t: Target) -> AttentionChoice:
    """The attention candidate `attr` names (grid, and key block when given)."""
    where = describe(op, index)
    (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
    grid = attr.grid_dims
    check_tiles(where, grid, t)
    es = op.q.type.element_type.bitwidth // 8
    cands = attention_candidates(
        hq, hkv, s, sk, d, es, op.form.data, t, op.bias is not None, op.stripes_value(), op.key_stripes_value()
    )
    keys = attr.key_block.data
    match = [c for c in cands if c.grid == grid and (not keys or c.keys == keys)]
    if not match:
        known = ", ".join(f"{grid_text(c.grid)} key_block {c.keys}" for c in cands)
        raise DiagnosticException(
            f"plan-ops: {where}: {op.form.data} attention has no candidate with grid {grid_text(grid)}"
            + (f" and key_block {keys}" if keys else "")
            + f" on {t.name}; its candidates are {known}"
        )
    c = match[0]
    check_fit(where, f"grid {grid_text(grid)}", c.bytes_per_tile, op_budget(t), t, 0)
    return c


ATTENTION = AttentionFamily()
FAMILY = ATTENTION

__all__ = [
    "ATTENTION",
    "FAMILY",
    "AttentionChoice",
    "AttentionFamily",
    "AttentionRequest",
    "attention_candidates",
    "choose_attention",
    "materialized_cycles",
]
