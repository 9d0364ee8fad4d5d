"""What a plan family is, and what the choosers ask of one.

A `Family` plans some kinds of graph op: `graph_ops` are the graph op classes it plans and
`emit(p, op, index)` builds one's plan ops in the layouts it picks (converting operands with
`Planner.get`); `plan_ops` are the plan op classes it emits and `cost(op, t)` what one costs,
read from its layouts and the target's formulas. A `DecisionFamily` also has a decision point
(a grid to pick): `impls` are the `#plan.choice` implementations it records, `choose` the
candidate a cost chooser takes (the cheapest that fits, or the search's rank of them),
`resolve` the candidate a recorded or pinned choice names (or a diagnostic), `attr` the choice
that records a candidate. The choosers (`plan-decide`'s by cost, `plan-materialize`'s from the
recorded choices) are generic: they call these and know no family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import plan
from ipu.target import Target
from ipu.transforms.plan.budget import DEFAULT_WEIGHTS, WeightBudget
from ipu.transforms.plan.state import CHOICE_ATTR, Planner, describe

OpCost = tuple[int, int, int, int]
"""(compute cycles, exchange cycles, exchange phases, incoming fragments per tile) of a plan op."""


class Family:
    """Plans the graph ops in `graph_ops`; prices the plan ops in `plan_ops`."""

    name: ClassVar[str] = ""
    graph_ops: ClassVar[tuple[type[Operation], ...]] = ()
    plan_ops: ClassVar[tuple[type[Operation], ...]] = ()

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        """Build `op`'s plan ops into `p` (index: `op`'s pre-order index, for diagnostics)."""
        raise NotImplementedError(f"family {self.name} plans no graph op")

    def cost(self, op: Operation, t: Target) -> OpCost:
        """What one of this family's plan ops costs on `t`."""
        raise NotImplementedError(f"family {self.name} prices no plan op")


class Request(Protocol):
    """What a decision depends on; every request names its graph op and the op's index."""

    op: Operation
    index: int


@dataclass
class Decisions:
    """What a cost chooser is asked and what it records, per decision point (op index): the
    search's `ranks` (0: the cheapest fitting candidate), the matmuls `lean`ed to a working-set
    cap so a plan fits, the weights' share of tile memory; and, as it decides, how many
    candidates fit (`counts`, the search's branching), a matmul's memory `pressure` and own
    `working` set (what `lean_for_fit` reads), the matmuls offered a replicated swap
    (`replicas`) and the choice made per op (`chosen`)."""

    ranks: dict[int, int] = field(default_factory=dict)
    lean: dict[int, int] = field(default_factory=dict)  # matmul index -> working-set cap, bytes per tile
    counts: dict[int, int] = field(default_factory=dict)  # op index -> fitting candidates
    chosen: dict[Operation, plan.ChoiceAttr] = field(default_factory=dict)
    pressure: dict[int, int] = field(default_factory=dict)  # matmul index -> live and working bytes per tile
    working: dict[int, int] = field(default_factory=dict)  # matmul index -> its own working set
    weights: WeightBudget = DEFAULT_WEIGHTS  # which weights stay resident (the rest are fetched)
    replicas: set[int] = field(default_factory=set)  # matmuls whose rank 1 is a replicated swap (`swap_replicas`)
    # a repeat (op index) -> carried value -> the layout it travels in: the search's hints ...
    carry: dict[int, dict[int, plan.LayoutAttr]] = field(default_factory=dict)
    # ... and, as it plans, each carried value the body yields in another layout than it enters in
    # (converted back on every trip): that layout, the hint a next plan may take
    yielded: dict[int, dict[int, plan.LayoutAttr]] = field(default_factory=dict)
    carried: dict[Operation, ArrayAttr] = field(default_factory=dict)  # the `plan.carry` a repeat took
    # binary ops (op index) whose result a loop yields: the search may plan one in its rhs's layout
    # (`rhs_layout`), so the loop carries that layout instead of the lhs's
    yielding_binaries: set[int] = field(default_factory=set)
    rhs_layout: set[int] = field(default_factory=set)


class DecisionFamily(Family):
    """A family whose graph ops each have a decision point (a grid), recorded as `plan.choice`."""

    impls: ClassVar[tuple[str, ...]] = ()

    def choose(self, request: Any, t: Target, decisions: Decisions) -> Any:
        """The candidate a cost chooser takes (`decisions.ranks` says which of those that fit)."""
        raise NotImplementedError

    def resolve(self, request: Any, attr: plan.ChoiceAttr, t: Target) -> Any:
        """The candidate `attr` names, priced in the emitter's current state, or a diagnostic."""
        raise NotImplementedError

    def attr(self, choice: Any) -> plan.ChoiceAttr:
        """The `#plan.choice` recording `choice`."""
        raise NotImplementedError


class Chooser(Protocol):
    """Decides each decision point while the planner walks a function."""

    def decide(self, family: DecisionFamily, request: Any, t: Target) -> Any: ...


def recorded_choice(op: Operation, index: int, impls: tuple[str, ...]) -> plan.ChoiceAttr:
    """The `plan.choice` on `op`, which must name one of `impls`."""
    attr = op.attributes.get(CHOICE_ATTR)
    if not isinstance(attr, plan.ChoiceAttr) or attr.impl.data not in impls:
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: {CHOICE_ATTR} must be a #plan.choice<…> of {' or '.join(impls)}"
        )
    return attr


class CostChooser(Decisions):
    """Each decision point's cheapest fitting candidate (or the search's rank of them); a
    choice already on an op is a pin, honoured or refused by name."""

    def decide(self, family: DecisionFamily, request: Any, t: Target) -> Any:
        if CHOICE_ATTR in request.op.attributes:
            return family.resolve(request, recorded_choice(request.op, request.index, family.impls), t)
        choice = family.choose(request, t, self)
        self.chosen[request.op] = family.attr(choice)
        return choice


class RecordedChooser:
    """Every decision point takes the choice recorded on its op (by plan-decide, or by hand)."""

    def decide(self, family: DecisionFamily, request: Any, t: Target) -> Any:
        if CHOICE_ATTR not in request.op.attributes:
            raise DiagnosticException(
                f"plan-materialize: {describe(request.op, request.index)} has no {CHOICE_ATTR}; run plan-decide first"
            )
        return family.resolve(request, recorded_choice(request.op, request.index, family.impls), t)


def pinned_partials(where: str, attr: plan.ChoiceAttr, default: bool, esize: int) -> bool:
    """Whether a recorded or pinned choice runs with fp16 partials: its `partials` field, else the
    function's `default`; f16 partials need half operands."""
    field = attr.partials.data
    half = field == "f16" if field else default
    if half and esize != 2:
        raise DiagnosticException(f"plan-ops: {where}: partials = f16 needs f16 operands (they are {8 * esize}-bit)")
    return half


def partials_field(half: bool, default: bool) -> str:
    """A choice's `partials` field: empty when the function's default gives `half`."""
    return "" if half == default else ("f16" if half else "f32")


def grid_text(g: tuple[int, ...]) -> str:
    return "x".join(map(str, g))


def check_tiles(where: str, grid: tuple[int, ...], t: Target) -> None:
    """A pinned grid must fit the target's tiles."""
    if math.prod(grid) > t.tiles:
        raise DiagnosticException(
            f"plan-ops: {where}: pinned grid {grid_text(grid)} needs {math.prod(grid)} tiles; "
            f"target {t.name} has {t.tiles}"
        )


def check_fit(where: str, what: str, need: int, budget: float, t: Target, reserved: int) -> None:
    """A pinned candidate's working set must fit the per-op budget."""
    if need > budget:
        raise DiagnosticException(
            f"plan-ops: {where}: {what} needs {need} bytes per tile; the per-op budget is {int(budget)} of "
            f"{t.memory_size} bytes ({reserved} held by live values)"
        )


__all__ = [
    "Chooser",
    "CostChooser",
    "DecisionFamily",
    "Decisions",
    "Family",
    "OpCost",
    "RecordedChooser",
    "Request",
    "check_fit",
    "check_tiles",
    "grid_text",
    "partials_field",
    "pinned_partials",
    "recorded_choice",
]
