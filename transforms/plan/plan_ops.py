"""`plan-ops`: give every graph value a layout and every graph op an implementation.

`plan-decide` then `plan-materialize` for one plan (`finalists=1`); otherwise the whole-graph
search (`plan.search`) keeps K finalist plans, one function each, for select-finalist. Each
kind of op is planned by its family (`plan.families`: candidates, cost, emission and the
`plan.choice` round trip in one module); the layouts are in `plan.layouts`, the walk over a
function in `plan.walk` with its state in `plan.state`, a plan's metrics in `plan.cost`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass

from ipu.log import log_event
from ipu.target import Target
from ipu.transforms.graph.split_attention_heads import split_function
from ipu.transforms.graph.unroll_batch_matmul import unroll_function
from ipu.transforms.levels import expect_level
from ipu.transforms.plan.plan_decide import (
    decide_function,
    graph_functions,
    mark_link_inputs,
    set_partials,
    set_reserve,
    set_spread,
)
from ipu.transforms.plan.plan_materialize import materialize_function
from ipu.transforms.plan.search import emit_finalists, lean_for_fit, search
from ipu.transforms.target_of import set_module_target


def planned_cycles(f: func.FuncOp, chip: Target, link_prefix: str = "") -> int:
    """The planner's estimated cycles of graph function `f` planned alone on `chip`: the best plan
    `plan-ops`'s search finds (a greedy plan prices too high where the search's states find
    better: a sim16 pipeline stage's greedy plan was 29 % above the search's), by
    `plan.cost.estimate`; `f` itself is left unplanned. Inputs named with `link_prefix` are
    priced as another chip writes them (`plan.link_inputs`: laid out once, spread, and
    rearranged on the chip for their readers) rather than in whatever layout their readers want.
    Raises the planner's DiagnosticException when it cannot be planned."""
    mark_link_inputs(f, link_prefix)
    return search(f, chip, 1, PlanOpsPass.beam, PlanOpsPass.candidates)[0].metrics.estimated_cycles


@dataclass(frozen=True)
class PlanOpsPass(ModulePass):
    """Lower `graph` to `plan` for one target."""

    name = "plan-ops"
    target: str | None = None  # unset: the module's #ipu.target, else mk2 (recorded on the module)
    finalists: int = 4  # whole-graph plans kept for select-finalist (1: plan greedily, no search)
    beam: int = 4
    candidates: int = 3  # candidate ranks tried per decision point
    partials: str = ""  # the AMP's partials, f32 or f16 (half operands only); unset: each function's own
    spread: str = ""  # resident weights spread over the machine: on, off or auto; unset: each function's own
    link_inputs: str = ""  # inputs named with this prefix are written by another chip (`plan.link_inputs`)
    reserve: int = 0  # bytes per tile each plan leaves free for placement (`plan.reserve`); 0: each function's own

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        t = set_module_target(op, self.target, self.name)
        for f in graph_functions(op):
            mark_link_inputs(f, self.link_inputs)
            set_partials(f, self.partials, self.name)
            set_spread(f, self.spread, self.name)
            set_reserve(f, self.reserve)
            unroll_function(f)  # batched matmuls no pattern fused: one matmul per batch
            split_function(f, t.tiles)  # an attention with more heads than tiles: parts that fit
            if self.finalists <= 1:
                # None: no leaning fits either; plan the cheapest so place-storage says what overflows
                decide_function(f, t, lean=lean_for_fit(f, t))
                figures = materialize_function(f, t)
                log_event("planned function", function=f.sym_name.data, target=t.name, **figures)
                continue
            kept = search(f, t, self.finalists, max(self.beam, self.finalists), self.candidates)
            emit_finalists(op, f, kept)


__all__ = ["PlanOpsPass"]
