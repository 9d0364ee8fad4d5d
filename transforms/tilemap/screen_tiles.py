"""`screen-tiles`: give each mapped plan finalist the logical-to-physical tile mapping with the
least modelled exchange load (`tilemap.mapping_screen`), before its exchange is scheduled.

Only finalists of the plan search (functions carrying `plan.finalist`) are screened: a plan
made without a search (`plan-ops{finalists=1}`) keeps the identity mapping.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass

from ipu.dialects import exchange, plan, tilemap
from ipu.log import log_event
from ipu.transforms.levels import expect_level
from ipu.transforms.target_of import module_target
from ipu.transforms.tilemap.mapping_screen import screen


def mapped_finalists(module: builtin.ModuleOp) -> list[func.FuncOp]:
    """The module's tilemap-level functions that are plan finalists, in order."""
    return [
        f
        for f in module.body.block.ops
        if isinstance(f, func.FuncOp) and plan.FINALIST_ATTR in f.attributes and tilemap.MAPPING_ATTR in f.attributes
    ]


@dataclass(frozen=True)
class ScreenTilesPass(ModulePass):
    """Choose each mapped finalist's tile mapping by exchange resource load."""

    name = "screen-tiles"
    target: str | None = None  # unset: the module's #ipu.target

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("tilemap", "exchange"))
        t = module_target(op, self.target, self.name)
        for f in mapped_finalists(op):
            if any(isinstance(o, exchange.PhaseOp) for o in f.body.walk()):
                continue  # already scheduled: its routes were priced under the mapping it has
            sc = screen(f, t)
            log_event(
                "screened tile mappings by exchange resource load",
                finalist=f.attributes[plan.FINALIST_ATTR].value.data,  # type: ignore[union-attr]
                candidates=sc.candidates,
                baseline_cycles=sc.baseline_cycles,
                candidate_cycles=sc.candidate_cycles,
                baseline_pressure=sc.baseline_pressure,
                candidate_pressure=sc.candidate_pressure,
                mapping=str(sc.mapping),
            )
            if not sc.mapping.identity:
                f.attributes[tilemap.MAPPING_ATTR] = tilemap.MappingAttr(sc.mapping.block, sc.mapping.width)
