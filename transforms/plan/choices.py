"""From a `#plan.choice<…>` on a graph op (recorded by plan-decide, or pinned by hand) back to
the priced implementation, or a diagnostic naming the op and why the choice cannot be planned."""

from __future__ import annotations

import math

from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.target import Target
from ipu.transforms.plan.candidates import (
    SERIAL_STEPS,
    WEIGHT_FRACTION,
    AttentionChoice,
    GatherChoice,
    GemmChoice,
    attention_candidates,
    choose_gather,
    gemm_candidate,
    gemm_grids,
    op_budget,
    serial_candidate,
)
from ipu.transforms.plan.state import CHOICE_ATTR, MatmulContext, MatmulPlan, describe


def _grid(g: tuple[int, ...]) -> str:
    return "x".join(map(str, g))


def recorded_choice(
    op: graph.MatmulOp | graph.AttentionOp | graph.GatherOp, index: int, impls: tuple[str, ...]
) -> plan.ChoiceAttr:
    attr = op.attributes.get(CHOICE_ATTR)
    if not isinstance(attr, plan.ChoiceAttr) or attr.impl.data not in impls:
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: {CHOICE_ATTR} must be a #plan.choice<…> of {' or '.join(impls)}"
        )
    return attr


def _check_tiles(where: str, grid: tuple[int, ...], t: Target) -> None:
    if math.prod(grid) > t.tiles:
        raise DiagnosticException(
            f"plan-ops: {where}: pinned grid {_grid(grid)} needs {math.prod(grid)} tiles; target {t.name} has {t.tiles}"
        )


def _check_fit(where: str, what: str, need: int, budget: float, t: Target, reserved: int) -> None:
    if need > budget:
        raise DiagnosticException(
            f"plan-ops: {where}: {what} needs {need} bytes per tile; the per-op budget is {int(budget)} of "
            f"{t.memory_size} bytes ({reserved} held by live values)"
        )


def resolve_matmul(ctx: MatmulContext, attr: plan.ChoiceAttr, t: Target) -> MatmulPlan:
    """The matmul implementation `attr` names, priced in the emitter's current state."""
    where = describe(ctx.op, ctx.index)
    grid = attr.grid_dims
    _check_tiles(where, grid, t)
    if attr.impl.data == "gemm_serial":
        pm, pn = grid
        if pm > ctx.m or pn > ctx.n:
            raise DiagnosticException(
                f"plan-ops: {where}: pinned serial grid {_grid(grid)} has more parts than the [{ctx.m}x{ctx.n}] output"
            )
        budget = op_budget(t, ctx.reserved)
        tries = (attr.k_steps.data,) if attr.k_steps.data else SERIAL_STEPS
        cands = [serial_candidate(ctx.m, ctx.k, ctx.n, ctx.esize, t, pm, pn, s) for s in tries]
        c = next((c for c in cands if c.bytes_per_tile <= budget), cands[-1])
        _check_fit(where, f"serial grid {_grid(grid)} in {c.steps} steps", c.bytes_per_tile, budget, t, ctx.reserved)
        return MatmulPlan(serial=c)
    grids = gemm_grids(ctx.m, ctx.k, ctx.n, t.tiles)
    if grid not in grids:
        raise DiagnosticException(
            f"plan-ops: {where}: grid {_grid(grid)} does not divide matmul [{ctx.m}x{ctx.k}] x [{ctx.k}x{ctx.n}] "
            f"on {t.name}; the grids the planner can emit are {', '.join(_grid(g) for g in grids)}"
        )

    def price(b_moves: bool) -> GemmChoice:
        return gemm_candidate(
            ctx.m, ctx.k, ctx.n, ctx.esize, ctx.a_moves, t, b_moves, 1, ctx.a_current, gemm, ctx.r_want
        )

    gemm = (grid[0], grid[1], grid[2])

    mode = attr.weight.data
    if mode and not ctx.weight:
        raise DiagnosticException(
            f"plan-ops: {where}: weight = {mode} applies only when the rhs is a parameter used here first"
        )
    c = price(ctx.b_moves)
    if not mode:
        fetch = ctx.weight and ctx.resident + c.weight_bytes > WEIGHT_FRACTION * t.memory_size
    else:
        fetch = mode == "fetched"
    reserved = ctx.reserved + (ctx.home_bytes if fetch else 0)
    if fetch:
        c = price(True)
    _check_fit(where, f"grid {_grid(grid)}", c.bytes_per_tile, op_budget(t, reserved), t, reserved)
    return MatmulPlan(gemm=c, fetch=fetch, weight=ctx.weight)


def resolve_attention(op: graph.AttentionOp, index: int, attr: plan.ChoiceAttr, t: Target) -> AttentionChoice:
    """The attention candidate `attr` names (grid, and key block when given)."""
    where = describe(op, index)
    (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
    grid = attr.grid_dims
    _check_tiles(where, grid, t)
    es = op.q.type.element_type.bitwidth // 8
    cands = attention_candidates(hq, hkv, s, sk, d, es, op.form.data, t, op.bias is not None)
    keys = attr.key_block.data
    match = [c for c in cands if c.grid == grid and (not keys or c.keys == keys)]
    if not match:
        known = ", ".join(f"{_grid(c.grid)} key_block {c.keys}" for c in cands)
        raise DiagnosticException(
            f"plan-ops: {where}: {op.form.data} attention has no candidate with grid {_grid(grid)}"
            + (f" and key_block {keys}" if keys else "")
            + f" on {t.name}; its candidates are {known}"
        )
    c = match[0]
    _check_fit(where, f"grid {_grid(grid)}", c.bytes_per_tile, op_budget(t), t, 0)
    return c


def resolve_gather(op: graph.GatherOp, index: int, attr: plan.ChoiceAttr, reserved: int, t: Target) -> GatherChoice:
    """The embedding lookup's (row blocks, column blocks) grid `attr` names, priced."""
    (v, d), s = op.table.type.get_shape(), op.result.type.get_shape()[0]
    pv, pd = attr.grid_dims
    es = op.table.type.element_type.bitwidth // 8
    return choose_gather(v, d, s, es, t, reserved, (pv, pd), describe(op, index))
