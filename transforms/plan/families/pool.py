"""The pool family: a `graph.pool` max pool (`value_range.max_pool_planned`: its input is
non-negative, or it has no padding) as `plan.pool` on the vector path, laid out as a depthwise
convolution is: the grid splits the batch, the output rows and the channels (in blocks of 4),
each tile receives the zero-filled input rows its output rows reach, halo included, and takes
the running max over the kernel positions (`max_pool`, PopLibs' MaxPooling vertex). Its decision
point is the grid, `#plan.choice<pool, grid = [gn, gh, gc, 1]>`. Average pools and the max pools
whose padding could win are expanded into windows first (`expand-windows`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects import builtin
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import KERNELS, pack_conv_window
from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout, conv_patch
from ipu.target import Target
from ipu.transforms.graph.value_range import max_pool_planned
from ipu.transforms.plan.budget import TargetMemo, op_budget
from ipu.transforms.plan.families.base import DecisionFamily, Decisions, OpCost, check_tiles, grid_text
from ipu.transforms.plan.families.conv import (
    Grid,
    channel_grids,
    cheapest_first,
    cheapest_fitting,
    patch_fill_cycles,
    window_op_cost,
)
from ipu.transforms.plan.layouts import plan_type
from ipu.transforms.plan.state import Planner, describe, value_name


@dataclass(frozen=True)
class PoolChoice:
    grid: Grid
    cycles: int
    exchange_cycles: int
    bytes_per_tile: int


def pool_layout(geo: graph.ConvGeometry, grid: Grid) -> Layout:
    """The result [N, OH, OW, C] of one grid: batch, rows and channels over dimensions 0, 1 and 2."""
    return Layout((geo.n, geo.out_h, geo.out_w, geo.c), grid, ((0,), (1,), (), (2,)), -1, 0)


def pool_candidate(geo: graph.ConvGeometry, esize: int, target: Target, grid: Grid) -> PoolChoice:
    """One grid priced: the patch received (its words, at the exchange rate) and the kernel."""
    result = pool_layout(geo, grid)
    x_shape = (geo.n, geo.h, geo.w, geo.c)
    patch, windows = conv_patch(x_shape, result, (geo.kh, geo.kw), geo.strides, geo.dilations, geo.pads, 2)
    x_bytes = patch.block_elements * esize
    p = {"n": patch.block[0], "c": patch.block[3], "oh": result.block[1], "ow": geo.out_w, "kh": geo.kh,
         "kw": geo.kw, "window": pack_conv_window(geo.strides, geo.dilations)}  # fmt: skip
    comp = KERNELS["max_pool"].cycles(target, p, esize) + patch_fill_cycles(x_shape, patch, windows, esize, target)
    exch = x_bytes // 4 + target.phase_overhead_cycles()
    return PoolChoice(grid, comp + exch, exch, x_bytes + result.block_elements * esize)


POOL_MEMO: TargetMemo[tuple[PoolChoice, ...]] = TargetMemo(64)


def pool_candidates(geo: graph.ConvGeometry, esize: int, target: Target) -> tuple[PoolChoice, ...]:
    found, hit = POOL_MEMO.get((geo, esize), target)
    if found and hit is not None:
        return hit
    grids = channel_grids(geo.n, geo.out_h, geo.c, target.tiles)
    out = cheapest_first(pool_candidate(geo, esize, target, g) for g in grids)
    POOL_MEMO.put((geo, esize), target, out)
    return out


@dataclass(frozen=True)
class PoolRequest:
    """A max pool's decision point: its geometry and the bytes per tile held elsewhere."""

    op: graph.PoolOp
    index: int
    geo: graph.ConvGeometry
    esize: int
    reserved: int


def _plan_pool(p: Planner, op: graph.PoolOp, index: int) -> None:
    if not max_pool_planned(op):
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: a {op.kind.data} pool whose padding could win (or with strides or "
            "dilations of 256 or more) is planned through expand-windows (the pool family takes a max pool of a "
            "non-negative value, or without padding)"
        )
    geo = op.geometry()
    esize = op.input.type.element_type.bitwidth // 8
    reserved = p.resident + p.live_bytes(exclude=(op.input,))
    c = p.chooser.decide(POOL, PoolRequest(op, index, geo, esize, reserved), p.target)
    x = p.get(op.input, None, op.name)
    pool = plan.PoolOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, pool_layout(geo, c.grid))],
        attributes={
            "kernel": DenseArrayBase.from_list(i64, (geo.kh, geo.kw)),
            "strides": DenseArrayBase.from_list(i64, geo.strides),
            "dilations": DenseArrayBase.from_list(i64, geo.dilations),
            "pads": DenseArrayBase.from_list(i64, geo.pads),
            plan.VALUE_ATTR: builtin.StringAttr(value_name(op)),
        },
    )
    p.set(op.result, p.emit(pool).results[0])
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        grid=grid_text(c.grid),
        estimated_cycles=c.cycles,
        estimated_exchange_cycles=c.exchange_cycles,
        bytes_per_tile=c.bytes_per_tile,
    )


class PoolFamily(DecisionFamily):
    """`graph.pool` (max, non-negative input or no padding) -> `plan.pool`."""

    name = "pool"
    graph_ops: ClassVar[tuple[type[Operation], ...]] = (graph.PoolOp,)
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (plan.PoolOp,)
    impls = ("pool",)

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        assert isinstance(op, graph.PoolOp)
        _plan_pool(p, op, index)

    def cost(self, op: Operation, t: Target) -> OpCost:
        """The kernel, and the patches' exchange (the busiest tile's words received)."""
        assert isinstance(op, plan.PoolOp)
        return window_op_cost(op, "max_pool", t)

    def choose(self, req: PoolRequest, t: Target, d: Decisions) -> PoolChoice:
        budget = op_budget(t, req.reserved)
        return cheapest_fitting(req, pool_candidates(req.geo, req.esize, t), lambda c: c.bytes_per_tile <= budget, t, d)

    def resolve(self, req: PoolRequest, attr: plan.ChoiceAttr, t: Target) -> PoolChoice:
        where = describe(req.op, req.index)
        grid = attr.grid_dims
        check_tiles(where, grid, t)
        if grid not in channel_grids(req.geo.n, req.geo.out_h, req.geo.c, t.tiles):
            raise DiagnosticException(
                f"plan-ops: {where}: pool grid {grid_text(grid)} is not one the planner can emit: batch parts of "
                f"{req.geo.n}, row blocks of {req.geo.out_h} output rows, channels in blocks of 4 of {req.geo.c} "
                "and 1 part in dimension 3"
            )
        c = pool_candidate(req.geo, req.esize, t, (grid[0], grid[1], grid[2], grid[3]))
        budget = op_budget(t, req.reserved)
        if c.bytes_per_tile > budget:
            raise DiagnosticException(
                f"plan-ops: {where}: pool grid {grid_text(grid)} needs {c.bytes_per_tile} bytes per tile; the "
                f"per-op budget is {int(budget)} of {t.memory_size} bytes"
            )
        return c

    def attr(self, choice: PoolChoice) -> plan.ChoiceAttr:
        return plan.ChoiceAttr("pool", choice.grid)


POOL = PoolFamily()
FAMILY = POOL

__all__ = [
    "FAMILY",
    "POOL",
    "PoolChoice",
    "PoolFamily",
    "PoolRequest",
    "pool_candidate",
    "pool_candidates",
    "pool_layout",
]
