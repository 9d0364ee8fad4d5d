"""`plan-materialize`: build the plan ops from the choices `plan-decide` recorded on the graph ops.

Each graph op becomes its plan ops in the layouts its `plan.choice` implies (and its pinned
`plan.layout`, if any); where a consumer wants another layout than its producer gave, a
`plan.rearrange` (or the gemm's `plan.reduce`) is inserted. The rewrite is one walk over the
function rather than independent per-op patterns: function arguments and weights take the
layout of their first consumer, and a rearranged value is shared by every consumer that wants
that layout, both function-wide state.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass

from ipu.log import log_event
from ipu.target import Target
from ipu.transforms.levels import expect_level
from ipu.transforms.plan.families.base import RecordedChooser
from ipu.transforms.plan.plan_decide import graph_functions
from ipu.transforms.plan.walk import install, plan_body
from ipu.transforms.target_of import set_module_target


def materialize_function(f: func.FuncOp, t: Target) -> dict[str, int]:
    """Rewrite the decided graph function `f` in place into plan ops; returns summary figures."""
    planned = plan_body(f, t, RecordedChooser())
    install(f, planned)
    return planned.figures


@dataclass(frozen=True)
class PlanMaterializePass(ModulePass):
    """Build the plan ops from recorded choices (the second half of plan-ops)."""

    name = "plan-materialize"
    target: str | None = None  # unset: the module's #ipu.target, else mk2 (recorded on the module)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        t = set_module_target(op, self.target, self.name)
        for f in graph_functions(op):
            figures = materialize_function(f, t)
            log_event("planned function", function=f.sym_name.data, target=t.name, **figures)


__all__ = ["PlanMaterializePass", "materialize_function"]
