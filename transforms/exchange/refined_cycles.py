"""Refined cycle estimates of a scheduled tilemap/exchange function, in the machine's
bulk-synchronous order: per superstep (between exchange phases) the busiest tile range's kernel
cycles from the kernels' own cycle models (`Kernel.cycles`, also the emulator's), a phase's
zero fill of its destination and a loop's copies of its carried values included, plus per phase
its scheduled horizon, its longest route under the function's tile mapping, and sync; loop
bodies count once per iteration.

Shared by select-finalist (ranking mapped finalists before their exchange is scheduled) and
lower-to-tasm (the package's estimate).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import kernel_cycles
from ipu.abi.transfers import split_start
from ipu.dialects import exchange, tilemap
from ipu.dialects.table import table_of
from ipu.dialects.tilemap import zero_span
from ipu.target import Target
from ipu.transforms.exchange.join_phases import JoinRule, group_route
from ipu.transforms.exchange.schedulers import PhaseCache, attainable_horizon
from ipu.transforms.exchange.slots import address, carried_in_place
from ipu.transforms.tilemap.mapping_screen import move_route_cycles


def refined_cycles(f: func.FuncOp, t: Target, attainable: bool = False, joins: bool = False) -> tuple[int, int]:
    """(total cycles, scheduled exchange cycles) of a scheduled tilemap/exchange function; with
    `attainable`, each phase counts the horizon a full-effort schedule reaches from its quick one;
    with `joins`, a phase `join-phases` would join to the one before it pays no sync (select-finalist
    ranks finalists before join-phases runs)."""
    price = lambda op: phase_cycles(op, t, _horizon(op, t, attainable))  # noqa: E731
    return _block(f.body.block, t, exchange.PhaseOp, price, joins)


def previewed_cycles(f: func.FuncOp, t: Target, joins: bool = False) -> tuple[int, int]:
    """(total cycles, exchange cycles) of a mapped tilemap function whose moves are not scheduled
    yet: each move is list-scheduled (as `schedule-exchange{effort=1}` would) and counted at the
    horizon a full-effort schedule attains from that, plus sync and its route under `f`'s tile
    mapping. The figure `refined_cycles(…, attainable=True)` gives after a quick schedule; `joins`
    as there."""
    cache = PhaseCache()
    mapping = tilemap.mapping_of(f)

    def price(op: Operation) -> int:
        assert isinstance(op, tilemap.MoveOp)
        logical = table_of(op.transfers)
        table, s = cache.schedule(logical, t.tiles, effort=1)
        h = attainable_horizon(table, t.tiles, s.horizon, s.lower_bound)
        return h + t.exchange["sync_cycles"] + move_route_cycles(logical, mapping, t)

    return _block(f.body.block, t, tilemap.MoveOp, price, joins)


def phase_cycles(op: exchange.PhaseOp, t: Target, horizon: int) -> int:
    """Horizon plus sync plus the phase's route (the worst route if it was never mapped). A
    phase of a joined group (`join-phases`) waits its group's longest route, and only the
    group's first pays the sync."""
    sync = 0 if op.joined is not None else t.exchange["sync_cycles"]
    return horizon + sync + group_route(op, t)


def _horizon(op: exchange.PhaseOp, t: Target, attainable: bool) -> int:
    h = op.horizon.value.data
    if not attainable:
        return h
    moves = split_start(table_of(op.transfers))[1]
    return attainable_horizon(moves, t.tiles, h, op.lower_bound.value.data)


def _copies(values, rep: tilemap.RepeatOp, t: Target, seg: dict[tuple[int, int], int]) -> None:
    """Add to `seg` the `copy` calls lower-to-tasm makes of `values` into `rep`'s carried slots:
    each value not already in its slot (before storage is placed, every one)."""
    for v, arg in zip(values, rep.body.block.args, strict=True):
        if _placed(v) and _placed(arg) and address(v) == address(arg):
            continue
        if isinstance(v.owner, tilemap.RunOp) and carried_in_place(v.owner, arg):
            continue  # written into the carried slot itself (place-storage keeps it there)
        b = v.type
        key = (b.first.data, b.first.data + b.count.data)
        n = int(np.prod(b.shape))
        seg[key] = seg.get(key, 0) + kernel_cycles(t, "copy", {"elements": n}, b.esize)


def _placed(v: SSAValue) -> bool:
    try:
        address(v)
    except DiagnosticException:
        return False
    return True


def _block(
    block: Block, t: Target, kind: type[Operation], price: Callable[[Operation], int], joins: bool = False
) -> tuple[int, int]:
    """Kernel cycles per superstep (the busiest tile range) plus `price` of each exchange (an op of
    type `kind`: scheduled phases, or moves still to schedule); with `joins`, less the sync of each
    exchange `join-phases` would join to the one before it (`JoinRule`) and has not joined yet."""
    total = exch = 0
    seg: dict[tuple[int, int], int] = {}
    rule = JoinRule()

    def flush() -> int:
        if not seg:
            return 0
        edges = sorted({b for lo, hi in seg for b in (lo, hi)})
        best = 0
        for a, b in zip(edges[:-1], edges[1:], strict=False):
            best = max(best, sum(c for (lo, hi), c in seg.items() if lo <= a and b <= hi))
        seg.clear()
        return best

    for op in block.ops:
        if isinstance(op, tilemap.RunOp):
            r = op.result.type
            names = list(op.params.data)
            p = {k: op.param(k) for k in names}
            key = (r.first.data, r.first.data + r.count.data)
            in_esize = op.call_in_buffer().esize
            seg[key] = seg.get(key, 0) + kernel_cycles(t, op.kernel.data, p, r.esize, in_esize)
        elif isinstance(op, kind):
            span = zero_span(op)
            if span is not None:  # the destination's `zero` call, run in the superstep before the phase
                r = op.result.type
                key = (r.first.data, r.first.data + r.count.data)
                seg[key] = seg.get(key, 0) + kernel_cycles(t, "zero", {"elements": span[1]}, r.esize)
            total += flush()
            cost = price(op)
            if rule.exchange(op, span is not None) and joins and op.attributes.get("joined") is None:
                cost -= t.exchange["sync_cycles"]  # join-phases will join it
            total += cost
            exch += cost
            continue
        rule.other(op)
        if isinstance(op, tilemap.RepeatOp):
            _copies(op.inits, op, t, seg)  # the initial values into the carried slots
            total += flush()
            body, bx = _block(op.body.block, t, kind, price, joins)
            total += op.count.value.data * body
            exch += op.count.value.data * bx
        elif isinstance(op, tilemap.YieldOp):  # the next trip's values into the carried slots
            rep = op.parent_op()
            assert isinstance(rep, tilemap.RepeatOp)
            _copies(op.values, rep, t, seg)
    total += flush()
    return total, exch
