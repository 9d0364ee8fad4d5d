"""`select-finalist`: model every plan finalist after tile mapping and exchange scheduling, keep
the best one that places, and name it as the entry function again.

It runs on the plan level: each finalist is mapped, scheduled and placed on a scratch copy, so
the IR handed to later passes holds one plan, not K.

Finalists are ranked with quick (longest-first) schedules, each phase counted at the horizon
the full scheduler attains from it (the bound for unicast phases); the selected plan is scheduled
in full afterwards. Refined cycles follow the machine's bulk-synchronous order: per superstep (between exchange
phases) the busiest tile range's kernel cycles from the target's formulas, plus per phase its
scheduled horizon, its longest route under the finalist's tile mapping, and sync; loop bodies
count once per iteration. Each finalist's tile mapping is screened (`tile_screen`) before it is
scheduled, and the selected plan function carries it as `plan.tile_mapping`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import exchange, tilemap
from ipu.dialects.ipu import TARGET_ATTR
from ipu.target import Target
from ipu.transforms.exchange_schedule import attainable_horizon
from ipu.transforms.log import log_event
from ipu.transforms.map_tiles import MapTilesPass
from ipu.transforms.place_storage import place_function
from ipu.transforms.schedule_exchange import ScheduleExchangePass
from ipu.transforms.target_of import module_target
from ipu.transforms.tile_screen import screen


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
    moves = tilemap.table_of(op.transfers)[:, 1:]
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


@dataclass(frozen=True)
class SelectFinalistPass(ModulePass):
    """Keep the finalist with the fewest refined cycles among those whose storage places."""

    name = "select-finalist"
    target: str | None = None  # unset: the module's #ipu.target

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        t = module_target(op, self.target, self.name)
        groups: dict[str, list[func.FuncOp]] = {}
        for f in op.body.block.ops:
            if isinstance(f, func.FuncOp) and "plan.finalist" in f.attributes:
                groups.setdefault(f.attributes["plan.entry"].data, []).append(f)  # type: ignore[union-attr]
        for entry, fs in groups.items():
            scored = []
            for f in fs:
                idx = f.attributes["plan.finalist"].value.data  # type: ignore[union-attr]
                metrics = f.attributes["plan.metrics"].data  # type: ignore[union-attr]
                scratch = builtin.ModuleOp([f.clone()], {TARGET_ATTR: op.attributes[TARGET_ATTR]})
                try:
                    MapTilesPass().apply(ctx, scratch)
                    g = next(o for o in scratch.body.block.ops if isinstance(o, func.FuncOp))
                    sc = screen(g, t)
                    log_event(
                        "screened tile mappings by exchange resource load",
                        finalist=idx,
                        candidates=sc.candidates,
                        baseline_cycles=sc.baseline_cycles,
                        candidate_cycles=sc.candidate_cycles,
                        baseline_pressure=sc.baseline_pressure,
                        candidate_pressure=sc.candidate_pressure,
                        mapping=str(sc.mapping),
                    )
                    if not sc.mapping.identity:
                        attr = tilemap.MappingAttr(sc.mapping.block, sc.mapping.width)
                        g.attributes[tilemap.MAPPING_ATTR] = attr
                        f.attributes[tilemap.PLAN_MAPPING_ATTR] = attr
                    ScheduleExchangePass(effort=1, check=False).apply(ctx, scratch)
                    g = next(o for o in scratch.body.block.ops if isinstance(o, func.FuncOp))
                    cycles, exch = refined_cycles(g, t, attainable=True)
                    place_function(g, t)
                except DiagnosticException as e:
                    log_event("rejected operator-plan finalist", finalist=idx, reason=str(e).split(";")[0])
                    continue
                log_event(
                    "scheduled operator-plan finalist",
                    finalist=idx,
                    mapped=str(sc.mapping),
                    analytical_cycles=metrics["estimated_cycles"].value.data,
                    analytical_exchange_cycles=metrics["estimated_exchange_cycles"].value.data,
                    scheduled_exchange_cycles=exch,
                    refined_cycles=cycles,
                )
                scored.append((cycles, idx, f))
            if not scored:
                raise DiagnosticException(f"model does not fit target {t.name}: no finalist of @{entry} places")
            best = min(scored, key=lambda x: (x[0], x[1]))
            for f in fs:
                if f is not best[2]:
                    op.body.block.erase_op(f)
            best[2].sym_name = StringAttr(entry)
            log_event("selected physically scheduled operator-plan finalist", selected=best[1], refined_cycles=best[0])
