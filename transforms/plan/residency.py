"""Which weights a plan keeps resident, chosen over the whole function at once.

The greedy walk decides residency op by op in program order under a share of tile memory
(`WeightBudget.share`): the first weights keep replicas, and a later matmul that would save more
a byte finds the share spent. GPT-2 small's out-projection took it (78 KB a tile of replicas
over 8 token groups, saving 24K cycles), and its FFN down-projection, whose replicas save 42K
for 121 KB more, was fetched on every trip. Here every matmul by a weight offers its plans as
points (bytes of its weight a tile holds over all trips, cycles over all trips): the best plan
with the weight stored once and fetched, and its resident grids no other beats on both; a
knapsack picks one point per matmul with the fewest cycles whose bytes fit a capacity. Each
capacity gives a `WeightBudget` that assigns every such matmul its grid and mode
(`WeightBudget.assigned`), from which the plan search grows plans in a beam of their own
(`search._assigned`). The prices are the gemm family's own, taken with the activations moving
and no consumer layout known: the search completes and prices each plan as it does any other,
drops those that do not fit, and select-finalist ranks the best among the other finalists.
"""

from __future__ import annotations

import math

from xdsl.dialects import func
from xdsl.ir import SSAValue

from ipu.dialects import graph
from ipu.target import Target
from ipu.transforms.plan.budget import WeightBudget
from ipu.transforms.plan.families.gemm import gemm_candidates

CAPACITIES = (0.32, 0.36, 0.4, 0.44, 0.48, 0.52, 0.56)
"""Shares of tile memory the knapsack fills with weights (every matmul's, stored or replicated)."""

QUANTUM = 1024
"""Bytes per knapsack unit."""

Point = tuple[int, int, tuple[int, int, int], bool, bool]
"""(bytes per tile over all trips, cycles over all trips, grid, swapped, resident)."""


def _trips(op: graph.MatmulOp) -> int:
    """How many times `op` runs: the trips of the repeats around it."""
    n, parent = 1, op.parent_op()
    while parent is not None:
        if isinstance(parent, graph.RepeatOp):
            n *= parent.count.value.data
        parent = parent.parent_op()
    return n


def _is_weight(v: SSAValue) -> bool:
    """`v` is a weight, or a rolled layer's slice of a stacked one."""
    o = v.owner
    if isinstance(o, graph.IterationSliceOp):
        o = o.input.owner
    return isinstance(o, graph.ParameterOp)


def weight_matmuls(f: func.FuncOp) -> list[tuple[int, graph.MatmulOp, int]]:
    """(op index as the planner numbers it, the matmul, its trips) of every matmul by a weight
    read by nothing else, no operand transposed."""
    ops = [o for o in f.body.walk() if not isinstance(o, func.ReturnOp | graph.YieldOp)]
    out = []
    for i, op in enumerate(ops):
        if isinstance(op, graph.MatmulOp) and not any(op.flags()) and _is_weight(op.rhs) and op.rhs.has_one_use():
            out.append((i, op, _trips(op)))
    return out


def _pareto(points: list[Point]) -> list[Point]:
    out: list[Point] = []
    for p in sorted(points, key=lambda p: (p[0], p[1])):
        if not out or p[1] < out[-1][1]:
            out.append(p)
    return out


def matmul_points(op: graph.MatmulOp, trips: int, t: Target) -> list[Point]:
    """The matmul's plans as knapsack points: the best fetched one, and the resident ones no other
    resident plan beats on both bytes and cycles."""
    (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
    es = op.lhs.type.element_type.bitwidth // 8
    home = math.ceil(k * n / t.tiles) * es
    fetched = min(gemm_candidates(m, k, n, es, True, t, True), key=lambda c: c.cycles, default=None)
    resident = gemm_candidates(m, k, n, es, True, t, False)
    points = [(c.weight_bytes * trips, c.cycles * trips, c.grid, c.swapped, True) for c in resident]
    out = _pareto(points)
    if fetched is not None:
        out.append((home * trips, fetched.cycles * trips, fetched.grid, fetched.swapped, False))
    return out


def knapsack(fronts: list[list[Point]], capacity: int) -> list[int] | None:
    """One point per front with the fewest cycles whose bytes (in `QUANTUM` units, rounded up)
    sum to at most `capacity` bytes; each front's point index, or None when none fits."""
    cap = capacity // QUANTUM
    inf = math.inf
    best = [0.0] + [inf] * cap  # best[c]: fewest cycles using exactly c units so far
    picks: list[list[int]] = []
    for front in fronts:
        nxt = [inf] * (cap + 1)
        pick = [-1] * (cap + 1)
        for c, cyc in enumerate(best):
            if cyc == inf:
                continue
            for j, (b, pc, *_) in enumerate(front):
                u = c + -(-b // QUANTUM)
                if u <= cap and cyc + pc < nxt[u]:
                    nxt[u], pick[u] = cyc + pc, j
        picks.append(pick)
        best = nxt
    end = min(range(cap + 1), key=lambda c: best[c])
    if best[end] == inf:
        return None
    chosen: list[int] = []
    for front, pick in zip(reversed(fronts), reversed(picks), strict=True):
        j = pick[end]
        chosen.append(j)
        end -= -(-front[j][0] // QUANTUM)
    return chosen[::-1]


def residency_budgets(f: func.FuncOp, t: Target) -> list[WeightBudget]:
    """A budget assigning every weight matmul of `f` its plan, per capacity in `CAPACITIES`
    (distinct assignments only; none for a function with fewer than two such matmuls)."""
    found = weight_matmuls(f)
    if len(found) < 2:
        return []
    fronts = [matmul_points(op, trips, t) for _, op, trips in found]
    out: list[WeightBudget] = []
    seen: set[tuple] = set()
    for share in CAPACITIES:
        chosen = knapsack(fronts, int(share * t.memory_size))
        if chosen is None:
            continue
        assigned = tuple(
            (i, front[j][2], front[j][3], front[j][4])
            for (i, _, _), front, j in zip(found, fronts, chosen, strict=True)
        )
        if assigned not in seen:
            seen.add(assigned)
            out.append(WeightBudget(share, assigned=assigned))
    return out


__all__ = ["CAPACITIES", "knapsack", "matmul_points", "residency_budgets", "weight_matmuls"]
