"""The gather family: `graph.gather` (an embedding lookup) the PopLibs multiSlice way, the table
distributed over a (row blocks pv, column blocks pd) grid, each tile slicing its rows
(`plan.embedding_slice`) and, with pv > 1, `plan.reduce` summing the row blocks' partials. Its
decision point is the grid, recorded as `#plan.choice<gather, grid = [pv, pd]>`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects import builtin
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import KERNELS
from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.target import Target
from ipu.transforms.plan.budget import WEIGHT_FRACTION, divisor_like, op_budget
from ipu.transforms.plan.families.base import DecisionFamily, Decisions, OpCost
from ipu.transforms.plan.layouts import plan_type
from ipu.transforms.plan.pricing import esize_of
from ipu.transforms.plan.state import Planner, describe, value_attr, value_name

# ---------------------------------------------------------------- candidates


@dataclass(frozen=True)
class GatherChoice:
    """An embedding lookup's (row blocks pv, column blocks pd) grid, priced: the slice kernel,
    and when pv > 1 the exchange of the f32 partials and their reduce."""

    pv: int
    pd: int
    cycles: int
    bytes_per_tile: int
    table_bytes: int  # the table block per tile (resident)

    @property
    def grid(self) -> tuple[int, int]:
        return (self.pv, self.pd)


def gather_result_rows(s: int, pv: int) -> int:
    """Row parts of the reduced result: the partials are summed into row blocks of the S rows."""
    return max(1, min(pv, s))


def gather_candidate(v: int, d: int, s: int, esize: int, target: Target, pv: int, pd: int) -> GatherChoice:
    rb = math.ceil(v / pv)
    cb = math.ceil(math.ceil(d / pd) / 2) * 2
    table = rb * cb * esize
    out_e = 4 if pv > 1 else esize
    part = s * cb * out_e
    work = table + s * 4 + 8 + part
    cyc = target.multi_slice_cycles(s, cb * out_e)
    if pv > 1:
        rr = math.ceil(s / gather_result_rows(s, pv))
        stage, res = pv * rr * cb * 4, rr * cb * esize
        work = max(work, table + part + stage + res)
        exch = (part - part // pv) // 4 + target.phase_overhead_cycles()
        cyc += target.reduce_cycles(pv, rr * cb) + exch
    return GatherChoice(pv, pd, cyc, work, table)


def gather_grids(v: int, d: int, tiles: int) -> list[tuple[int, int]]:
    """(pv, pd) grids: column blocks of at least two elements (whole 32-bit words), row blocks
    of at least one row, over at most `tiles` tiles."""
    return [(pv, pd) for pd in divisor_like(max(d // 2, 1), tiles) for pv in divisor_like(v, tiles // pd)]


def choose_gather(
    v: int,
    d: int,
    s: int,
    esize: int,
    target: Target,
    reserved: int = 0,
    pin: tuple[int, int] | None = None,
    where: str = "graph.gather",
    rank: int = 0,
    counts: list[int] | None = None,
    prefer: tuple[int, int] | None = None,
) -> GatherChoice:
    """The `rank`-th cheapest grid (rank 0: the cheapest) whose working set fits beside
    `reserved` bytes and whose table block, a resident weight, stays within the weights' share of
    tile memory (the fewest bytes when no grid keeps it there); `counts` receives how many such
    grids there are. `prefer` (the grid the table already lives on, placed by an earlier lookup)
    ranks first when it fits: another grid would exchange the whole table on every run. A pinned
    grid is priced and refused when it does not fit."""
    budget = op_budget(target, reserved)
    if pin is not None:
        if pin[0] > v or pin[1] > max(d // 2, 1) or pin[0] * pin[1] > target.tiles:
            raise DiagnosticException(
                f"plan-ops: {where}: gather grid {pin[0]}x{pin[1]} does not fit table [{v}x{d}] on {target.name} "
                f"({target.tiles} tiles; at most {v} row blocks and {max(d // 2, 1)} column blocks of two columns)"
            )
        c = gather_candidate(v, d, s, esize, target, *pin)
        if c.bytes_per_tile > budget:
            raise DiagnosticException(
                f"plan-ops: {where}: gather grid {pin[0]}x{pin[1]} needs {c.bytes_per_tile} bytes per tile; "
                f"target {target.name}'s per-op budget is {int(budget)}"
            )
        return c
    grids = gather_grids(v, d, target.tiles)
    if prefer is not None and prefer not in grids:
        grids.append(prefer)  # the table's grid (a valid one: the emitter read it from its layout)
    cands = [gather_candidate(v, d, s, esize, target, pv, pd) for pv, pd in grids]
    fits = [c for c in cands if c.bytes_per_tile <= budget]
    if not fits:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {target.name}: gather from table [{v}x{d}] needs at least "
            f"{best.bytes_per_tile} bytes per tile (grid {best.pv}x{best.pd}); per-op budget is {int(budget)} of "
            f"{target.memory_size} bytes ({reserved} held by live values)"
        )
    share = WEIGHT_FRACTION * target.memory_size
    small = sorted((c for c in fits if c.table_bytes <= share), key=lambda c: (c.cycles, c.bytes_per_tile, c.pv))
    order = small or sorted(fits, key=lambda c: (c.table_bytes, c.cycles, c.pv))
    order.sort(key=lambda c: c.grid != prefer)  # stable: the rest keep their order
    if counts is not None:
        counts.append(len(order))
    return order[min(rank, len(order) - 1)]


@dataclass(frozen=True)
class GatherRequest:
    """An embedding lookup's decision point: the bytes per tile held elsewhere, and the grid the
    table already lives on (`current`, if an earlier lookup placed it)."""

    op: graph.GatherOp
    index: int
    reserved: int
    current: tuple[int, int] | None = None


# ---------------------------------------------------------------- emission


def _plan_gather(p: Planner, op: graph.GatherOp, index: int) -> None:
    """The embedding lookup the PopLibs multiSlice way: the table stays distributed over a
    (pv, pd) grid, the indices are replicated on it, each tile slices its rows (`plan.embedding_slice`)
    and, with pv > 1, `plan.reduce` sums the per-row-block partials into row blocks of the result."""
    (v, d), s = op.table.type.get_shape(), op.result.type.get_shape()[0]
    reserved = p.resident + p.live_bytes(exclude=(op.table, op.indices))
    current = None  # the grid an earlier lookup placed the table on: reusing it moves no table
    if p.has(op.table):
        t_l = p.current[op.table].type.layout
        if len(t_l.grid) == 2 and t_l.split == ((0,), (1,)) and t_l.partial < 0 and not t_l.align:
            current = (t_l.grid[0], t_l.grid[1])
    c = p.chooser.decide(GATHER, GatherRequest(op, index, reserved, current), p.target)
    grid = c.grid
    t_lay = Layout((v, d), grid, ((0,), (1,)))
    if p.is_weight(op.table) and not p.has(op.table):
        p.resident += c.table_bytes * p.weight_copies(op.table)
        esize = op.table.type.element_type.bitwidth // 8
        p.fixed_weight(t_lay, t_lay.block_elements * esize * p.weight_copies(op.table))
    table = p.get(op.table, plan_type(op.table.type, t_lay), op.name)
    ishape = tuple(op.indices.type.get_shape())
    ids = p.get(op.indices, plan_type(op.indices.type, Layout(ishape, grid, ((),) * len(ishape))), op.name)
    partial = c.pv > 1
    el = builtin.f32 if partial else op.result.type.element_type
    out_l = Layout((s, d), grid, ((), (1,)), 0 if partial else -1)
    r = plan.EmbeddingSliceOp.create(
        operands=[table, ids],
        result_types=[plan_type(TensorType(el, [s, d]), out_l)],
        attributes={} if partial else value_attr(op),  # a partial sum is checked after its reduce
    )
    g = p.emit(r).results[0]
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        grid=f"{c.pv}x{c.pd}",
        estimated_cycles=c.cycles,
        bytes_per_tile=c.bytes_per_tile,
        table_bytes_per_tile=c.table_bytes,
    )
    if partial:
        g.name_hint = f"{op.result.name_hint or 'gather'}_partial"
        res_l = Layout((s, d), (gather_result_rows(s, c.pv), c.pd), ((0,), (1,)))
        g = p.emit(plan.ReduceOp(g, plan_type(op.result.type, res_l), value_name(op))).results[0]
    p.set(op.result, g)


class GatherFamily(DecisionFamily):
    """`graph.gather` -> `plan.embedding_slice` (+ `plan.reduce`)."""

    name = "gather"
    graph_ops: ClassVar[tuple[type[Operation], ...]] = (graph.GatherOp,)
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (plan.EmbeddingSliceOp,)
    impls = ("gather",)

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        assert isinstance(op, graph.GatherOp)
        _plan_gather(p, op, index)

    def cost(self, op: Operation, t: Target) -> OpCost:
        assert isinstance(op, plan.EmbeddingSliceOp)
        r = op.result.type.layout
        p = {"indices": r.shape[0], "rows": op.table.type.layout.block[0], "cols": r.block[1]}
        return KERNELS["embedding_slice"].cycles(t, p, esize_of(op.result.type)), 0, 0, 0

    def choose(self, req: GatherRequest, t: Target, d: Decisions) -> GatherChoice:
        op = req.op
        (v, dd), s = op.table.type.get_shape(), op.result.type.get_shape()[0]
        es = op.table.type.element_type.bitwidth // 8
        counts: list[int] = []
        rank = d.ranks.get(req.index, 0)
        c = choose_gather(v, dd, s, es, t, req.reserved, None, describe(op, req.index), rank, counts, req.current)
        d.counts[req.index] = counts[0]
        return c

    def resolve(self, req: GatherRequest, attr: plan.ChoiceAttr, t: Target) -> GatherChoice:
        op = req.op
        (v, dd), s = op.table.type.get_shape(), op.result.type.get_shape()[0]
        pv, pd = attr.grid_dims
        es = op.table.type.element_type.bitwidth // 8
        return choose_gather(v, dd, s, es, t, req.reserved, (pv, pd), describe(op, req.index))

    def attr(self, choice: GatherChoice) -> plan.ChoiceAttr:
        return plan.ChoiceAttr("gather", choice.grid)


GATHER = GatherFamily()
FAMILY = GATHER

__all__ = [
    "FAMILY",
    "GATHER",
    "GatherChoice",
    "GatherFamily",
    "GatherRequest",
    "choose_gather",
    "gather_candidate",
    "gather_grids",
    "gather_result_rows",
]
