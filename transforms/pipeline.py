"""`ipu-compile{target=…}`: graph -> plan (K finalists, one selected) -> tilemap -> exchange
(scheduled, placed) -> tasm."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from ipu.target import DEFAULT_TARGET, load_target
from ipu.transforms.log import phase
from ipu.transforms.lower_to_tasm import LowerToTasmPass
from ipu.transforms.map_tiles import MapTilesPass
from ipu.transforms.place_storage import PlaceStoragePass
from ipu.transforms.plan_ops import PlanOpsPass
from ipu.transforms.schedule_exchange import ScheduleExchangePass
from ipu.transforms.select_finalist import SelectFinalistPass


def compile_passes(target: str) -> list[tuple[str, ModulePass]]:
    return [
        ("plan_ops", PlanOpsPass(target=target)),
        ("select_finalist", SelectFinalistPass(target=target)),
        ("map_tiles", MapTilesPass()),
        ("schedule_exchange", ScheduleExchangePass(target=target)),
        ("place_storage", PlaceStoragePass(target=target)),
        ("lower_to_tasm", LowerToTasmPass(target=target)),
    ]


@dataclass(frozen=True)
class IpuCompilePass(ModulePass):
    """The whole lowering ladder for one target, logging each phase's elapsed time."""

    name = "ipu-compile"
    target: str = DEFAULT_TARGET

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        load_target(self.target)
        for label, p in compile_passes(self.target):
            with phase(label):
                p.apply(ctx, op)
