"""Refined cycle estimates of a scheduled tilemap/exchange function, in the machine's
bulk-synchronous order: per superstep (between exchange phases) the busiest tile range's kernel
cycles from the target's formulas, plus per phase its scheduled horizon, its longest route under
the tile mapping, and sync; loop bodies count once per iteration. select-finalist ranks
finalists by them and lower-to-tasm records them as the package's estimate.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Block

from ipu.abi.transfers import split_start
from ipu.dialects import exchange, tilemap
from ipu.dialects.table import table_of
from ipu.target import Target
from ipu.transforms.exchange_schedule import attainable_horizon


def refined_cycles(f: func.FuncOp, t: Target, attainable: bool = False) -> tuple[int, int]:
    """(total cycles, scheduled exchange cycles) of a scheduled tilemap/exchange function; with
    `attainable`, each phase counts the horizon a full-effort schedule reaches from its quick one."""
    total, exch = _block(f.body.block, t, attainable)
    return total, exch


def phase_cycles(op: exchange.PhaseOp, t: Target, horizon: int) -> int:
    """Horizon plus sync plus the phase's route (the worst route if it was never mapped)."""
    route = op.route_cycles.value.data if op.route_cycles is not None else t.exchange["route_tail_cycles"]
    return horizon + t.exchange["sync_cycles"] + route


def _horizon(op: exchange.PhaseOp, t: Target, attainable: bool) -> int:
    h = op.horizon.value.data
    if not attainable:
        return h
    moves = split_start(table_of(op.transfers))[1]
    return attainable_horizon(moves, t.tiles, h, op.lower_bound.value.data)


def _block(block: Block, t: Target, attainable: bool) -> tuple[int, int]:
    total = exch = 0
    seg: dict[tuple[int, int], int] = {}

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
            seg[key] = seg.get(key, 0) + t.kernel_cycles(op.kernel.data, p, r.esize)
        elif isinstance(op, exchange.PhaseOp):
            total += flush()
            cost = phase_cycles(op, t, _horizon(op, t, attainable))
            total += cost
            exch += cost
        elif isinstance(op, tilemap.RepeatOp):
            total += flush()
            body, bx = _block(op.body.block, t, attainable)
            total += op.count.value.data * body
            exch += op.count.value.data * bx
    total += flush()
    return total, exch
