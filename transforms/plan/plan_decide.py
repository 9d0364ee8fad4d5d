"""`plan-decide`: choose each graph op's implementation by cost and record it on the op.

Every matmul and attention op gets `plan.choice = #plan.choice<…>` (its grid, and for a matmul
whose rhs is a weight whether the weight stays resident or is fetched); the graph is otherwise
unchanged, so a researcher can stop here, read or edit the choices, and run `plan-materialize`.
A choice already on an op is a pin: it is honoured (every other op is chosen around it) or
refused with a diagnostic naming the op. `plan.layout` pins an op's result layout, and
`plan.carry` on a graph.repeat the layouts its carried values travel in (the search's plans
carry theirs on their `plan.repeat`, where it found carrying a value as the body yields it
cheaper).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import plan
from ipu.target import Target
from ipu.transforms.graph.split_attention_heads import split_function
from ipu.transforms.graph.unroll_batch_matmul import unroll_function
from ipu.transforms.levels import expect_level
from ipu.transforms.plan.budget import DEFAULT_WEIGHTS, WeightBudget
from ipu.transforms.plan.families.base import CostChooser
from ipu.transforms.plan.state import (
    CARRY_ATTR,
    CHOICE_ATTR,
    LINK_INPUTS_ATTR,
    PARTIALS_ATTR,
    RESERVE_ATTR,
    SPREAD_ATTR,
    SPREAD_MODES,
)
from ipu.transforms.plan.walk import install, plan_body
from ipu.transforms.target_of import set_module_target


def decide_function(
    f: func.FuncOp,
    t: Target,
    ranks: dict[int, int] | None = None,
    materialize: bool = False,
    lean: dict[int, int] | None = None,
    weights: WeightBudget = DEFAULT_WEIGHTS,
) -> dict[int, int]:
    """Record a `plan.choice` on each of `f`'s decision points (graph ops, in place); returns,
    per op index whose choice was free, how many candidates fit (the search's branching).

    With `materialize`, `f` also becomes the plan those choices give, built in the same walk
    (what `plan-materialize` builds from the recorded choices; the search evaluates many)."""
    chooser = CostChooser(ranks=dict(ranks or {}), lean=dict(lean or {}), weights=weights)
    return run_chooser(f, t, chooser, materialize).counts


def run_chooser(f: func.FuncOp, t: Target, chooser: CostChooser, materialize: bool = False) -> CostChooser:
    """`decide_function` with the caller's chooser, returned for its records."""
    planned = plan_body(f, t, chooser, log=materialize)
    if materialize:
        install(f, planned)
        return chooser
    planned.block.erase(safe_erase=False)
    for op, attr in chooser.chosen.items():
        op.attributes[CHOICE_ATTR] = attr  # type: ignore[assignment]
    for op, carry in chooser.carried.items():
        op.attributes[CARRY_ATTR] = carry
    return chooser


def graph_functions(module: builtin.ModuleOp) -> list[func.FuncOp]:
    """The module's functions still at the graph level."""
    return [
        f
        for f in module.body.block.ops
        if isinstance(f, func.FuncOp)
        and (
            any(o.dialect_name() == "graph" for o in f.body.walk())
            or any(isinstance(a.type, builtin.TensorType) for a in f.args)  # no ops: its inputs are unread
        )
    ]


def set_partials(f: func.FuncOp, partials: str, pass_name: str) -> None:
    """Record a pass option's partials type on `f` (`plan.partials`: the default of its AMP ops,
    which a choice's `partials` overrides; the planner reads and checks it, `function_partials`)."""
    if partials and partials not in plan.PARTIALS:
        raise DiagnosticException(f"{pass_name}: partials must be one of {', '.join(plan.PARTIALS)}, got '{partials}'")
    if partials:
        f.attributes[PARTIALS_ATTR] = builtin.StringAttr(partials)


def mark_link_inputs(f: func.FuncOp, prefix: str) -> None:
    """Record on `f` which of its inputs another chip writes (`LINK_INPUTS_ATTR`): those whose
    names start with `prefix` (none without one)."""
    names = f.attributes.get("ipu.inputs")
    if not prefix or not isinstance(names, builtin.ArrayAttr):
        return
    linked = [n for n in names.data if isinstance(n, builtin.StringAttr) and n.data.startswith(prefix)]
    if linked:
        f.attributes[LINK_INPUTS_ATTR] = builtin.ArrayAttr(linked)


def set_spread(f: func.FuncOp, spread: str, pass_name: str) -> None:
    """Record a pass option's weight spreading on `f` (`plan.spread`: on, off or auto; the
    planner reads and checks it, `function_spread`)."""
    if spread and spread not in SPREAD_MODES:
        raise DiagnosticException(f"{pass_name}: spread must be one of {', '.join(SPREAD_MODES)}, got '{spread}'")
    if spread:
        f.attributes[SPREAD_ATTR] = builtin.StringAttr(spread)


def set_reserve(f: func.FuncOp, reserve: int) -> None:
    """Record bytes per tile `f`'s plan keeps free for placement (`plan.reserve`, 0: none set;
    the planner reads and checks it, `function_reserve`)."""
    if reserve:
        f.attributes[RESERVE_ATTR] = builtin.IntegerAttr(reserve, 64)


@dataclass(frozen=True)
class PlanDecidePass(ModulePass):
    """Choose and record each graph op's implementation (the first half of plan-ops)."""

    name = "plan-decide"
    target: str | None = None  # unset: the module's #ipu.target, else mk2 (recorded on the module)
    partials: str = ""  # the AMP's partials, f32 or f16 (half operands only); unset: each function's own
    spread: str = ""  # resident weights spread over the machine: on, off or auto; unset: each function's own
    link_inputs: str = ""  # inputs named with this prefix are written by another chip (`plan.link_inputs`)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        t = set_module_target(op, self.target, self.name)
        for f in graph_functions(op):
            mark_link_inputs(f, self.link_inputs)
            set_partials(f, self.partials, self.name)
            set_spread(f, self.spread, self.name)
            unroll_function(f)  # batched matmuls no pattern fused: one matmul per batch
            split_function(f, t.tiles)  # an attention with more heads than tiles: parts that fit
            decide_function(f, t)


__all__ = [
    "PlanDecidePass",
    "decide_function",
    "graph_functions",
    "mark_link_inputs",
    "set_partials",
    "set_reserve",
    "set_spread",
]
