"""`schedule-exchange`: turn each logical `tilemap.move` into a scheduled `exchange.phase`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import IntegerAttr, StringAttr
from xdsl.passes import ModulePass

from ipu.dialects import exchange, tilemap
from ipu.target import load_target
from ipu.transforms.exchange_schedule import schedule_phase
from ipu.transforms.log import log_event


@dataclass(frozen=True)
class ScheduleExchangePass(ModulePass):
    """Schedule every exchange phase; report its lower bound, horizon and gap."""

    name = "schedule-exchange"
    target: str = "mk2"
    effort: int = 2  # 1: longest-first list scheduling only

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        tiles = load_target(self.target).tiles
        index = 0
        for mv in [o for o in op.walk() if isinstance(o, tilemap.MoveOp)]:
            t, s = schedule_phase(tilemap.table_of(mv.transfers), tiles, effort=self.effort)
            table = np.concatenate([s.starts[:, None], t], axis=1) if len(t) else np.zeros((0, 17), np.int64)
            attrs = {
                "index": IntegerAttr(index, 64),
                "lower_bound": IntegerAttr(s.lower_bound, 64),
                "horizon": IntegerAttr(s.horizon, 64),
                "scheduler": StringAttr(s.scheduler),
                "transfers": tilemap.table_attr(table),
            }
            if mv.reason:
                attrs["reason"] = mv.reason
            if mv.zero_fill is not None:
                attrs["zero_fill"] = mv.zero_fill
            ph = exchange.PhaseOp.create(operands=[mv.input], result_types=[mv.result.type], attributes=attrs)
            ph.results[0].name_hint = mv.result.name_hint
            mv.parent_block().insert_op_before(ph, mv)
            mv.result.replace_all_uses_with(ph.results[0])
            mv.parent_block().erase_op(mv)
            log_event(
                "optimized physical exchange schedule",
                phase=index,
                transfers=len(t),
                selected_horizon=s.horizon,
                endpoint_lower_bound=s.lower_bound,
                lower_bound_gap=s.horizon - s.lower_bound,
                selected_kind=s.scheduler,
            )
            index += 1
