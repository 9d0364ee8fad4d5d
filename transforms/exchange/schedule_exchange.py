"""`schedule-exchange`: turn each logical `tilemap.move` into a scheduled `exchange.phase`."""

from __future__ import annotations

import time
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import IntegerAttr, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ipu.abi.exchange_rules import ScheduleError, validate_schedule
from ipu.abi.tables import TRANSFER
from ipu.abi.transfers import MC, PC, with_start
from ipu.dialects import exchange, tilemap
from ipu.dialects.table import table_attr, table_of
from ipu.dialects.tilemap import mapping_of
from ipu.log import log_event
from ipu.target import Target
from ipu.transforms.exchange.schedulers import PhaseCache
from ipu.transforms.levels import expect_level
from ipu.transforms.target_of import module_target
from ipu.transforms.tilemap.mapping_screen import move_route_cycles


def _func_of(op: Operation) -> Operation:
    f = op.parent_op()
    while f is not None and not isinstance(f, func.FuncOp):
        f = f.parent_op()
    return f if f is not None else op


@dataclass(frozen=True)
class ScheduleExchangePass(ModulePass):
    """Schedule every exchange phase and check the schedule with the independent checker;
    record its lower bound, horizon, gap, runs per transfer and the scheduler that won."""

    name = "schedule-exchange"
    target: str | None = None  # unset: the module's #ipu.target
    effort: int = 2  # 1: longest-first list scheduling only
    check: bool = True  # validate every schedule against its logical move
    check_rows: int = 1 << 20  # above this many rows, compare words per tile pair (summary)
    cpsat: bool = True  # let CP-SAT prove or improve small phases

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("tilemap", "exchange"))
        target = module_target(op, self.target, self.name)
        funcs = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        for f in funcs:
            self.schedule_function(f, target)

    def schedule_function(self, f: func.FuncOp, target: Target) -> None:
        """Schedule `f`'s moves, numbering its phases from 0 with a cache of its own, so each
        function (e.g. each plan finalist) is scheduled as if it were alone in the module."""
        tiles = target.tiles
        cache = PhaseCache(cpsat=self.cpsat)
        index = 0
        for mv in [o for o in f.walk() if isinstance(o, tilemap.MoveOp)]:
            logical = table_of(mv.transfers)
            t0 = time.perf_counter()
            t, s = cache.schedule(logical, tiles, effort=self.effort)
            seconds = time.perf_counter() - t0
            table = with_start(t, s.starts)
            full = True
            if self.check and len(t) and not s.scheduler.startswith("reused-"):
                try:
                    full = validate_schedule(logical, table, tiles, index, trust_logical=True, max_rows=self.check_rows)
                except ScheduleError as e:  # a scheduler bug, never the user's input
                    raise AssertionError(f"schedule-exchange produced an invalid schedule: {e}") from None
            route = move_route_cycles(logical, mapping_of(_func_of(mv)), target)
            members = int((logical[:, PC] * logical[:, MC]).sum()) if len(logical) else 0
            runs = int((t[:, PC] * t[:, MC]).sum()) if len(t) else 0
            attrs = {
                "lower_bound": IntegerAttr(s.lower_bound, 64),
                "horizon": IntegerAttr(s.horizon, 64),
                "scheduler": StringAttr(s.scheduler),
                "transfers": table_attr(table, TRANSFER),
                "logical_transfers": IntegerAttr(members, 64),
                "route_cycles": IntegerAttr(route, 64),
            }
            if mv.reason:
                attrs["reason"] = mv.reason
            if mv.zero_fill is not None:
                attrs["zero_fill"] = mv.zero_fill
            if mv.zero_from is not None:
                attrs["zero_from"] = mv.zero_from
            if mv.trip_stride is not None:
                attrs["trip_stride"] = mv.trip_stride
            ph = exchange.PhaseOp.create(operands=[mv.input], result_types=[mv.result.type], attributes=attrs)
            ph.results[0].name_hint = mv.result.name_hint
            mv.parent_block().insert_op_before(ph, mv)
            mv.result.replace_all_uses_with(ph.results[0])
            mv.parent_block().erase_op(mv)
            log_event(
                "optimized physical exchange schedule",
                phase=index,
                transfers=members,
                families=len(t),
                endpoint_lower_bound=s.lower_bound,
                selected_horizon=s.horizon,
                lower_bound_gap=s.horizon - s.lower_bound,
                route_cycles=route,
                runs_per_transfer=f"{runs / max(members, 1):.3f}",
                selected_kind=s.scheduler,
                seconds=f"{seconds:.3f}",
                checked="off" if not self.check else ("words" if full else "tile-pair-words"),
            )
            index += 1
