"""Whole-graph plan search: a beam over the ops that have a choice, Pareto-pruned, K finalists.

Each decision point is an op with several fitting candidates (matmul grids, attention grids).
Points that are the same op on the same types feeding the same kinds of op (the layers of a
transformer: one decision for all twelve query projections) are decided together, so the
search grows with the kinds of op, not with depth. A state is a partial assignment of candidate
ranks; every state is completed greedily by `plan-decide` (each undecided op takes its cheapest
fitting candidate), materialized in the same walk, and priced from the emitted plan by
`plan.cost.estimate`. The search starts from one greedy plan per resident-weight budget
(`WEIGHT_BUDGETS`): keeping weights replicated saves their fetches, storing them once leaves
room for larger grids, and which wins depends on the model. After each decision group the
beam keeps the states no other state dominates (cycles, exchange cycles, memory peaks, row bytes), best cycles first,
and beside them each budget's best state, whose next decisions try their second candidate only.
The plans whose weights' residency a knapsack chose for the whole function (`plan.residency`)
grow in a beam of their own, and the best of them joins the finalists.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.log import log_event
from ipu.target import Target
from ipu.transforms.plan.budget import DEFAULT_WEIGHTS, WeightBudget
from ipu.transforms.plan.cost import PlanMetrics, code_and_rows, dominates, estimate, overflow
from ipu.transforms.plan.families.base import CostChooser
from ipu.transforms.plan.plan_decide import decide_function, run_chooser
from ipu.transforms.plan.residency import residency_budgets
from ipu.transforms.plan.state import function_reserve


@dataclass
class Candidate:
    choices: dict[int, int]
    decisions: dict[int, int]
    function: func.FuncOp
    metrics: PlanMetrics
    weights: WeightBudget = DEFAULT_WEIGHTS
    replicas: frozenset[int] = frozenset()  # decision points whose rank 1 is a replicated swap
    carry: dict[int, dict[int, plan.LayoutAttr]] = field(default_factory=dict)  # the carried layouts it was given
    yielded: dict[int, dict[int, plan.LayoutAttr]] = field(default_factory=dict)  # values its loops convert back
    rhs_layout: frozenset[int] = frozenset()  # binary ops it planned in their rhs's layout
    yielding_binaries: frozenset[int] = frozenset()  # binary ops whose sums its loops yield

    @functools.cached_property
    def signature(self) -> tuple[object, ...]:
        """The plan's structure: per op in order its name, where each operand comes from (op and
        result index, or block and argument index), its result types and its attributes and
        properties; equal for equal plans (the function's name is the same in all, and a weight's
        initializer is one shared attribute object, hashed once: printing the plan as text took
        most of the search's time)."""
        where: dict[SSAValue, tuple[int, int]] = {}
        out: list[object] = []
        for i, op in enumerate(self.function.walk()):
            for region in op.regions:
                for b in region.blocks:
                    for k, arg in enumerate(b.args):
                        where[arg] = (-1 - i, k)
            out.append(
                (
                    op.name,
                    tuple(where.get(v) for v in op.operands),
                    tuple(r.type for r in op.results),
                    tuple(sorted(op.attributes.items())),
                    tuple(sorted(op.properties.items())),
                )
            )
            for j, r in enumerate(op.results):
                where[r] = (i, j)
        return tuple(out)


WEIGHT_BUDGETS = (DEFAULT_WEIGHTS, WeightBudget(0.0), WeightBudget(0.3), WeightBudget(0.5, swap_replicas=True))
"""The resident-weight budgets the search starts from: the default; every weight fetched (memory
for bigger grids, paid for in exchange); larger budgets, which keep a second large weight
replicated where activations leave room (mk2 mlp: w2 resident at 0.3 saves its 24.7K-cycle
fetch). In the largest, a swapped GEMM that replicates its weight over its 16-row groups is
also tried, as each matmul's second candidate (mk2 mlp's down-projection swapped on 8 x 11 x 16:
578,163 -> 550,356 cycles): a choice the search weighs over the whole plan, not a rule, since in
a rolled stack such replicas crowd later layers' weights out to fetches the op's own price does
not see (taken wherever it wins locally, GPT-2 small went from 1,598,601 to 1,686,041)."""


def _plan(
    graph_f: func.FuncOp,
    t: Target,
    choices: dict[int, int],
    lean: dict[int, int] | None = None,
    weights: WeightBudget = DEFAULT_WEIGHTS,
    carry: dict[int, dict[int, plan.LayoutAttr]] | None = None,
    rhs_layout: frozenset[int] = frozenset(),
) -> Candidate | None:
    f = graph_f.clone()
    chooser = CostChooser(
        ranks=dict(choices), lean=dict(lean or {}), weights=weights, carry=dict(carry or {}), rhs_layout=set(rhs_layout)
    )
    try:
        run_chooser(f, t, chooser, materialize=True)
    except DiagnosticException:
        return None
    m = estimate(f, t)
    if not m.fits:
        return None
    replicas, yielding = frozenset(chooser.replicas), frozenset(chooser.yielding_binaries)
    return Candidate(
        dict(choices), chooser.counts, f, m, weights, replicas, chooser.carry, chooser.yielded, rhs_layout, yielding
    )


CARRY_ROUNDS = 2
FLIP_STATES = 2


def _carried(
    graph_f: func.FuncOp, t: Target, states: list[Candidate], lean: dict[int, int]
) -> tuple[list[Candidate], int]:
    """Each state planned again with its loops' carried values travelling in the layouts the
    bodies yield them in (`Decisions.yielded`), where they entered in another and were converted
    back on every trip; again from that plan's yields, up to `CARRY_ROUNDS` times. (GPT-2's
    residual stream enters each layer in the embedding's layout and leaves in the attention
    projection's reduce: carried as it leaves, the norm runs there and two phases a layer go.)
    The best `FLIP_STATES` states are also tried with the sums their loops yield planned in their
    rhs's layout (`Decisions.rhs_layout`), then carried so: BERT's residual sum takes its norm's
    layout rather than the FFN's reduce, where the next layer's norm and residual add then read
    it in place. Returns the plans that fit and how many were tried."""
    out: list[Candidate] = []
    tried = 0
    for k, s in enumerate(states):
        starts: list[Candidate | None] = [s]
        if k < FLIP_STATES and s.yielding_binaries:
            flipped = _plan(graph_f, t, s.choices, lean, s.weights, s.carry, s.yielding_binaries)
            tried += 1
            if flipped is not None:
                out.append(flipped)
                starts.append(flipped)
        for c in starts:
            for _ in range(CARRY_ROUNDS):
                if c is None or not c.yielded:
                    break
                carry = {r: {**c.carry.get(r, {}), **c.yielded.get(r, {})} for r in {*c.carry, *c.yielded}}
                c = _plan(graph_f, t, s.choices, lean, s.weights, carry, c.rhs_layout)
                tried += 1
                if c is not None:
                    out.append(c)
    return out, tried


LEAN_ROUNDS = 8
LEAN_SLACK = 8192  # bytes per tile a leaned matmul gives up beyond the plan's excess (fragmentation)
LEAN_SHRINK = 4  # a leaned matmul keeps at most this fraction of its working set: the estimate's
# memory classes are coarser than place-storage's, so a cap just under the excess is not enough


def lean_for_fit(graph_f: func.FuncOp, t: Target) -> dict[int, int] | None:
    """The matmuls (op index -> working-set cap, bytes per tile) to run as serial gemms so the
    cheapest plan fits the tile: empty when it fits as it is, None when it still does not after
    `LEAN_ROUNDS`. Each round takes the matmul under the most memory pressure (the bytes per
    tile live and in its own working set while it runs; the weights are live throughout, so
    this is where a tile's peak is made)
    and caps its working set at what it used less the plan's excess over the tile (at most a
    quarter of it)."""
    lean: dict[int, int] = {}
    for _ in range(LEAN_ROUNDS + 1):
        f = graph_f.clone()
        chooser = CostChooser(lean=dict(lean))
        try:
            run_chooser(f, t, chooser, materialize=True)
        except DiagnosticException:
            return None
        m = estimate(f, t)
        if m.fits:
            if lean:
                log_event(
                    "leaned matmuls to fit",
                    leaned=",".join(f"{i}:{c}" for i, c in sorted(lean.items())),
                    **m.log_fields(),
                )
            return lean
        if not chooser.pressure:
            return None
        worst = max(chooser.pressure, key=lambda i: chooser.pressure[i])
        code, rows = code_and_rows(m, t)
        excess = m.peak_total_bytes + rows + code + function_reserve(graph_f) - t.memory_size
        working = chooser.working[worst]
        cap = min(working - max(excess, 0) - LEAN_SLACK, working // LEAN_SHRINK)
        if cap <= 0 or lean.get(worst) == cap:
            return None
        lean[worst] = cap
    return None


def _room(w: WeightBudget) -> tuple[float, bool]:
    return (w.share, w.swap_replicas)


def _front(cands: list[Candidate], width: int) -> list[Candidate]:
    """At most `width` distinct plans: those no other dominates first (then the best of the
    rest), returned in order of estimated cycles."""
    return _beam(cands, width)[0]


def _beam(cands: list[Candidate], width: int) -> tuple[list[Candidate], list[Candidate]]:
    """`_front`'s plans, and beside them each weight budget's best plan that is not among them
    (the second list). A budget's plans may all be dominated now and still grow into the best:
    BERT-base's at a 0.5 share, cut by a beam of 4 after the first decision, reached 1,253,075
    estimated cycles against the beam's 1,303,307 once its key projections took their second
    grid."""
    seen: dict[str, Candidate] = {}
    for c in sorted(cands, key=lambda c: c.metrics.pareto_key()):
        # of equal plans keep the one whose budget leaves the most to try in the decisions to come
        if c.signature not in seen or _room(c.weights) > _room(seen[c.signature].weights):
            seen[c.signature] = c
    uniq = list(seen.values())
    front = [c for c in uniq if not any(dominates(o.metrics, c.metrics) for o in uniq if o is not c)]
    rest = [c for c in uniq if c not in front]
    keep = (front + rest)[:width] if len(front) < width else front[:width]
    budgets, extra = {c.weights for c in keep}, []
    for c in uniq:  # cheapest first
        if c.weights not in budgets:
            budgets.add(c.weights)
            extra.append(c)
    return sorted(keep, key=lambda c: c.metrics.pareto_key()), extra


def decision_groups(graph_f: func.FuncOp, points: list[int]) -> list[list[int]]:
    """The decision points (op indices, pre-order as `plan_body` numbers them) grouped by what
    the op is: its name, operand and result types, and the kinds of op that read its result;
    in order of each group's first point."""
    ops = [o for o in graph_f.body.walk() if not isinstance(o, func.ReturnOp | graph.YieldOp)]
    groups: dict[tuple[object, ...], list[int]] = {}
    for d in points:
        op = ops[d]
        readers = tuple(sorted({u.operation.name for r in op.results for u in r.uses}))
        key = (op.name, tuple(str(v.type) for v in op.operands), tuple(str(r.type) for r in op.results), readers)
        groups.setdefault(key, []).append(d)
    return list(groups.values())


def search(graph_f: func.FuncOp, t: Target, finalists: int, beam: int, candidates: int) -> list[Candidate]:
    """K finalists for one graph function (the cheapest first)."""
    t0 = time.perf_counter()
    first = _plan(graph_f, t, {})
    lean: dict[int, int] = {}
    if first is None:
        lean = lean_for_fit(graph_f, t) or {}
        first = _plan(graph_f, t, {}, lean) if lean else None
    if first is None:
        # no completion fits: plan once more so the user sees the op that does not fit, else why
        f = graph_f.clone()
        decide_function(f, t, materialize=True)
        why = overflow(estimate(f, t), t, function_reserve(graph_f))
        raise DiagnosticException(f"model does not fit target {t.name}: the cheapest plan's {why}")
    states = [first]
    evaluated = 1
    has_weights = any(isinstance(o, graph.ParameterOp) for o in graph_f.walk())
    for budget in WEIGHT_BUDGETS[1:] if has_weights else ():
        alt = _plan(graph_f, t, {}, lean, budget)
        evaluated += 1
        # a budget whose matmuls are offered replicated swaps is kept even where its greedy plan
        # is another's: its states grow into plans the others' cannot reach
        if alt is not None and (alt.signature != first.signature or alt.replicas):
            states.append(alt)
    points = sorted(first.decisions)
    groups = decision_groups(graph_f, points)
    states, extra, grown = _grow(graph_f, t, states, groups, beam, candidates, lean)
    evaluated += grown
    kept = _front([*states, *extra], finalists)
    if finalists > 1 and all(c.signature != first.signature for c in kept):
        # the plan-level exchange estimate can misrank plans that the scheduled exchange ranks
        # the other way: keep the greedy plan among the finalists, so the refined selection
        # never ends worse than plan-ops{finalists=1}
        kept = sorted([*kept[: finalists - 1], first], key=lambda c: c.metrics.pareto_key())
    carried, tried = _carried(graph_f, t, states, lean)
    evaluated += tried
    if carried:
        # the best of the second looks at the loops joins the finalists, beside them rather than
        # in a slot of theirs: the scheduled exchange ranks it (transformer_stack's carried plan
        # was estimated 7,617,996, below every finalist, and scheduled 7,936,434: in a slot it
        # displaced the plan that scheduled best; BERT-base's is estimated above the finalists
        # and scheduled below them)
        best = min(carried, key=lambda c: c.metrics.pareto_key())
        if finalists > 1:
            kept = sorted([*kept, best], key=lambda c: c.metrics.pareto_key())
        elif best.metrics.pareto_key() < kept[0].metrics.pareto_key():
            kept = [best]
    if finalists > 1 and has_weights:
        assigned, tried = _assigned(graph_f, t, groups, beam, candidates, lean)
        evaluated += tried
        if assigned is not None and all(c.signature != assigned.signature for c in kept):
            kept = sorted([*kept, assigned], key=lambda c: c.metrics.pareto_key())
    log_event(
        "searched operator plans",
        decision_points=len(points),
        decision_groups=len(groups),
        evaluated=evaluated,
        finalists=len(kept),
        elapsed_ms=int((time.perf_counter() - t0) * 1000),
    )
    return kept


def _grow(
    graph_f: func.FuncOp,
    t: Target,
    states: list[Candidate],
    groups: list[list[int]],
    beam: int,
    candidates: int,
    lean: dict[int, int],
) -> tuple[list[Candidate], list[Candidate], int]:
    """The beam grown from `states` over the decision groups in turn: each state tries its next
    candidate ranks for the group, `_beam` keeps the best; returns the beam, each budget's best
    plan beside it, and how many plans were tried."""
    evaluated = 0
    extra: list[Candidate] = []  # budgets' best plans kept beside the beam: their rank 1 is tried
    for group in groups:
        grown: list[Candidate] = [*states, *extra]
        beside = {id(e) for e in extra}
        for s in grown[:]:
            tried = candidates + int(any(d in s.replicas for d in group))  # rank 1 is the replicated swap there
            tried = min(tried, 2) if id(s) in beside else tried
            for rank in range(1, min(tried, min(s.decisions.get(d, 1) for d in group))):
                c = _plan(graph_f, t, {**s.choices, **dict.fromkeys(group, rank)}, lean, s.weights)
                evaluated += 1
                if c is not None:
                    grown.append(c)
        states, extra = _beam(grown, beam)
    return states, extra, evaluated


ASSIGNED_BEAM = 4
"""The widest beam that grows the whole-function residency plans (`_assigned`; at most the
search's own)."""


def _assigned(
    graph_f: func.FuncOp, t: Target, groups: list[list[int]], beam: int, candidates: int, lean: dict[int, int]
) -> tuple[Candidate | None, int]:
    """The best plan whose weights' residency the whole function chose (`plan.residency`: one
    knapsack per capacity), grown over the other decisions by a beam of its own
    (`ASSIGNED_BEAM`) and with its loops' values carried as they are yielded (`_carried`); and how
    many plans were tried. It joins the finalists beside them, as the carried plan does, rather
    than in the main beam, where its states displaced plans the scheduled exchange ranks best
    (BERT-base's 1,228,242-cycle plan)."""
    plans = [_plan(graph_f, t, {}, lean, b) for b in residency_budgets(graph_f, t)]
    found = [c for c in plans if c is not None]
    if not found:
        return None, len(plans)
    width = min(beam, ASSIGNED_BEAM)
    seeds = sorted(found, key=lambda c: c.metrics.pareto_key())[:width]
    states, extra, grown = _grow(graph_f, t, seeds, groups, width, candidates, lean)
    carried, tried = _carried(graph_f, t, states, lean)
    best = min([*states, *extra, *carried], key=lambda c: c.metrics.pareto_key())
    return best, len(plans) + grown + tried


def emit_finalists(module: builtin.ModuleOp, graph_f: func.FuncOp, kept: list[Candidate]) -> None:
    """Replace the graph function by one function per finalist, each carrying its metrics."""
    name = graph_f.sym_name.data
    for i, c in enumerate(kept):
        f = c.function
        f.sym_name = StringAttr(name if len(kept) == 1 else f"{name}_finalist_{i}")
        fields = {k: IntegerAttr(v, 64) for k, v in c.metrics.log_fields().items() if isinstance(v, int)}
        f.attributes["plan.metrics"] = DictionaryAttr(fields)
        f.attributes[plan.FINALIST_ATTR] = IntegerAttr(i, 64)
        f.attributes[plan.ENTRY_ATTR] = StringAttr(name)
        module.body.block.insert_op_before(f, graph_f)
        log_event("retained operator-plan finalist", finalist=i, **c.metrics.log_fields())
    module.body.block.erase_op(graph_f)
