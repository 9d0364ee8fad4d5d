"""The per-op memory budget and what every family's candidates share: how much of a tile one
op's working set may use, the weights' share of tile memory, the grid sizes tried, and a bounded
memo of candidates per target."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

from ipu.target import Target

MEMORY_FRACTION = 0.85  # of data memory, per-op working-set budget; place-storage checks what is really live


WEIGHT_FRACTION = 0.12  # tile memory for weights kept resident in their consumer's (replicated) layout


@dataclass(frozen=True)
class WeightBudget:
    """How a plan keeps its weights: `share` of tile memory holds weights resident in their
    consumer's layout (the rest are stored once and fetched); with `swap_replicas`, a swapped
    GEMM that keeps more of its weight a tile than the best plain grid (it replicates the
    weight over its 16-row groups) is each matmul's second candidate, where the share holds it."""

    share: float = WEIGHT_FRACTION
    swap_replicas: bool = False
    assigned: tuple[tuple[int, tuple[int, int, int], bool, bool], ...] = ()
    """Matmuls whose plan is assigned rather than chosen under the share (`plan.residency`): (op
    index, grid, swapped, resident) each."""

    def assignment(self, index: int) -> tuple[tuple[int, int, int], bool, bool] | None:
        """The (grid, swapped, resident) assigned to the matmul at op `index`, if any."""
        for i, grid, swapped, resident in self.assigned:
            if i == index:
                return grid, swapped, resident
        return None


DEFAULT_WEIGHTS = WeightBudget()


def op_budget(target: Target, reserved: int = 0) -> float:
    """Bytes per tile one op's working set may use beside `reserved` bytes live elsewhere."""
    return MEMORY_FRACTION * (target.memory_size - target.code_reserve_bytes) - reserved


def divisor_like(n: int, limit: int) -> list[int]:
    out = {1}
    p = 1
    while p * 2 <= min(n, limit):
        p *= 2
        out.add(p)
    out |= {d for d in range(1, min(n, limit) + 1) if n % d == 0 and d <= 64}
    return sorted(out)


T = TypeVar("T")


class TargetMemo(Generic[T]):
    """A bounded LRU of results per target object: the plan search prices the same few shapes
    once per plan. Entries hold their target, so a key's `id(target)` is never reused."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.items: OrderedDict[tuple, tuple[Target, T]] = OrderedDict()

    def get(self, key: tuple, target: Target) -> tuple[bool, T | None]:
        hit = self.items.get((id(target), *key))
        if hit is None or hit[0] is not target:
            return False, None
        self.items.move_to_end((id(target), *key))
        return True, hit[1]

    def put(self, key: tuple, target: Target, value: T) -> None:
        self.items[(id(target), *key)] = (target, value)
        if len(self.items) > self.limit:
            self.items.popitem(last=False)


__all__ = [
    "DEFAULT_WEIGHTS",
    "MEMORY_FRACTION",
    "WEIGHT_FRACTION",
    "TargetMemo",
    "WeightBudget",
    "divisor_like",
    "op_budget",
]
