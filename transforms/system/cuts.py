"""Cutting a sequence of priced pieces into contiguous runs, one a chip (or group of chips), and
their prices: shared by `partition-stages` (units of work into pipeline stages) and
`split-tensor-parallel` (tensor-parallel segments into pipelined chip groups)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ipu.transforms.plan.plan_ops import planned_cycles

WEIGHT_SHARE = 0.6  # of a chip's memory a stage's weights may take (the rest: activations, code, exchange rows)


@dataclass
class Cut:
    """A partition: each unit's stage, each stage's estimated cycles and weight bytes."""

    stage_of: list[int]
    cycles: list[int]
    weights: list[int]
    unit_costs: list[int] = field(default_factory=list)  # what each unit was priced at
    links: list[int] = field(default_factory=list)  # the link phase into a stage starting at each unit
    unit_weights: list[int] = field(default_factory=list)
    pins: list[int | None] = field(default_factory=list)
    capacity: int = 0


def best_cut(
    costs: list[int], weights: list[int], links: list[int], stages: int, capacity: int, pins: list[int | None]
) -> Cut | None:
    """The contiguous split of the units into `stages` non-empty stages whose slowest stage
    (its units' cycles plus the link phase into it, `links[c]` for a stage starting at unit c)
    is fastest, every stage's weights within `capacity`, every pin honoured; None if none is."""
    n = len(costs)
    pre_c = [0, *itertools.accumulate(costs)]
    pre_w = [0, *itertools.accumulate(weights)]
    inf = float("inf")
    # best[s][i]: the slowest stage of the best split of units[:i] into s stages
    best = [[inf] * (n + 1) for _ in range(stages + 1)]
    back = [[0] * (n + 1) for _ in range(stages + 1)]
    best[0][0] = 0

    def allowed(a: int, b: int, s: int) -> bool:
        return all(p is None or p == s for p in pins[a:b])

    for s in range(1, stages + 1):
        for i in range(s, n - (stages - s) + 1):
            for j in range(s - 1, i):
                if best[s - 1][j] == inf or pre_w[i] - pre_w[j] > capacity or not allowed(j, i, s - 1):
                    continue
                stage = pre_c[i] - pre_c[j] + (links[j] if j > 0 else 0)
                v = max(best[s - 1][j], stage)
                if v < best[s][i]:
                    best[s][i], back[s][i] = v, j
    if best[stages][n] == inf:
        return None
    bounds, i = [], n
    for s in range(stages, 0, -1):
        j = back[s][i]
        bounds.append((j, i))
        i = j
    bounds.reverse()
    stage_of = [s for s, (a, b) in enumerate(bounds) for _ in range(a, b)]
    return Cut(
        stage_of,
        [pre_c[b] - pre_c[a] + (links[a] if a > 0 else 0) for a, b in bounds],
        [pre_w[b] - pre_w[a] for a, b in bounds],
    )


__all__ = ["WEIGHT_SHARE", "Cut", "best_cut", "planned_cycles"]
