"""`select-finalist`: of the plan finalists, already mapped (map-tiles) and given their tile
mappings (screen-tiles) by the pipeline's earlier steps, keep the one with the fewest refined
cycles and name it as the entry function again; the others are erased, so schedule-exchange,
place-storage and lower-to-tasm see one plan.

Refined cycles (`cycles`) count kernels per superstep from the target's formulas and each
exchange at the horizon a full-effort schedule attains from a quick list schedule (the bound
for unicast phases), plus sync and its route under the finalist's mapping; loop bodies count once
per iteration. Finalists already scheduled (schedule-exchange run over all of them) are ranked
from their phases.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import plan, tilemap
from ipu.log import log_event
from ipu.transforms.exchange.refined_cycles import previewed_cycles, refined_cycles
from ipu.transforms.levels import expect_level
from ipu.transforms.target_of import module_target

NO_FINALIST = "select-finalist: no finalist of rank"
"""How select-finalist says its `rank` is past the finalists (the ladder's cue to stop trying)."""


def finalist_groups(module: builtin.ModuleOp) -> dict[str, list[func.FuncOp]]:
    """Finalist functions by the entry function they plan."""
    groups: dict[str, list[func.FuncOp]] = {}
    for f in module.body.block.ops:
        if isinstance(f, func.FuncOp) and plan.FINALIST_ATTR in f.attributes:
            groups.setdefault(f.attributes[plan.ENTRY_ATTR].data, []).append(f)  # type: ignore[union-attr]
    return groups


@dataclass(frozen=True)
class SelectFinalistPass(ModulePass):
    """Keep the mapped finalist with the fewest refined cycles (`rank` r: the r-th fewest, which
    the ladder asks for when a cheaper one's storage did not fit)."""

    name = "select-finalist"
    target: str | None = None  # unset: the module's #ipu.target
    rank: int = 0

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("tilemap", "exchange"))
        t = module_target(op, self.target, self.name)
        for entry, fs in finalist_groups(op).items():
            scored = []
            for f in fs:
                idx = f.attributes[plan.FINALIST_ATTR].value.data  # type: ignore[union-attr]
                if tilemap.MAPPING_ATTR not in f.attributes:
                    raise DiagnosticException(
                        f"select-finalist: finalist @{f.sym_name.data} is not mapped; run map-tiles and "
                        "screen-tiles on the finalists first"
                    )
                metrics = f.attributes["plan.metrics"].data  # type: ignore[union-attr]
                if any(isinstance(o, tilemap.MoveOp) for o in f.body.walk()):
                    cycles, exch = previewed_cycles(f, t, joins=True)
                else:
                    cycles, exch = refined_cycles(f, t, attainable=True, joins=True)
                log_event(
                    "scheduled operator-plan finalist",
                    finalist=idx,
                    mapped=str(tilemap.mapping_of(f)),
                    analytical_cycles=metrics["estimated_cycles"].value.data,
                    analytical_exchange_cycles=metrics["estimated_exchange_cycles"].value.data,
                    scheduled_exchange_cycles=exch,
                    refined_cycles=cycles,
                )
                scored.append((cycles, idx, f))
            scored.sort(key=lambda x: (x[0], x[1]))
            if self.rank >= len(scored):
                raise DiagnosticException(f"{NO_FINALIST} {self.rank}: @{entry} has {len(scored)} finalists")
            best = scored[self.rank]
            for f in fs:
                if f is not best[2]:
                    op.body.block.erase_op(f)
            best[2].sym_name = StringAttr(entry)
            log_event(
                "selected physically scheduled operator-plan finalist",
                selected=best[1],
                refined_cycles=best[0],
                rank=self.rank,
            )
