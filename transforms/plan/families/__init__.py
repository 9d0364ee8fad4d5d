"""The planner's rulebook: one module per plan family, each holding everything about how its kind
of graph op is planned — the graph ops it plans and how (`emit`), the plan ops it emits and
what they cost (`cost`), and for a decision point its candidates, its choice and the
`#plan.choice` round trip (`families.base` says what a family is).

| family | graph ops | plan ops | decision |
|---|---|---|---|
| `gemm` | matmul | gemm, gemm_serial | grid, weight resident or fetched |
| `conv` | conv (one group, 16+ input channels; depthwise) | conv | grid |
| `pool` | pool (max, of a non-negative value or without padding) | pool | grid |
| `attention` | attention, split/merge heads | attention, attention_combine, split/merge heads | grid, key block |
| `gather` | gather | embedding_slice | grid |
| `rowwise` | softmax, layer/rms norm, reduce, arg_reduce | rowwise | |
| `elementwise` | unary, binary, cast, where | unary, binary, cast, select, iteration_slice | |
| `datamove` | transpose, reshape, slice, pad, concat | rearrange, permute, window, transpose, reshape | |
| `reduce` | | reduce | |

Adding a family is one module here defining `FAMILY` and one entry in `FAMILIES`; a graph or
plan op claimed by two families is an error when the rulebook is built.
"""

from __future__ import annotations

import functools

from xdsl.ir import Operation

from ipu.target import Target
from ipu.transforms.plan.families import (
    attention,
    conv,
    datamove,
    elementwise,
    gather,
    gemm,
    pool,
    reduce,
    rowwise,
)
from ipu.transforms.plan.families.base import Family, OpCost

FAMILIES: tuple[Family, ...] = (
    gemm.FAMILY,
    conv.FAMILY,
    pool.FAMILY,
    attention.FAMILY,
    gather.FAMILY,
    rowwise.FAMILY,
    elementwise.FAMILY,
    datamove.FAMILY,
    reduce.FAMILY,
)


class RulebookError(Exception):
    """Two families claim one op class (a registration mistake, found when the rulebook is built)."""


@functools.cache
def _index() -> tuple[dict[type[Operation], Family], dict[type[Operation], Family]]:
    by_graph: dict[type[Operation], Family] = {}
    by_plan: dict[type[Operation], Family] = {}
    for fam in FAMILIES:
        for table, ops in ((by_graph, fam.graph_ops), (by_plan, fam.plan_ops)):
            for cls in ops:
                other = table.setdefault(cls, fam)
                if other is not fam:
                    raise RulebookError(f"{cls.name} is claimed by the {other.name} and {fam.name} plan families")
    return by_graph, by_plan


def family_of(op: Operation) -> Family | None:
    """The family that plans the graph op `op` (None: no family does)."""
    return _index()[0].get(type(op))


def cost_of(op: Operation, t: Target) -> OpCost:
    """What the plan op `op` costs on `t` (its family's `cost`; structural ops cost nothing)."""
    fam = _index()[1].get(type(op))
    return (0, 0, 0, 0) if fam is None else fam.cost(op, t)


def planned_graph_ops() -> frozenset[type[Operation]]:
    """Every graph op class some family plans."""
    return frozenset(_index()[0])


__all__ = ["FAMILIES", "RulebookError", "cost_of", "family_of", "planned_graph_ops"]
