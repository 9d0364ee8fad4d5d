"""The reduce family: `plan.reduce`, the sum of a value's partial sums (a GEMM's K split, an
embedding lookup's row blocks) into its result layout: the partials exchanged in, then summed
(PopLibs' ReduceAdd). No graph op plans to it directly: the gemm and gather families emit it."""

from __future__ import annotations

from typing import ClassVar

from xdsl.ir import Operation

from ipu.dialects import plan
from ipu.target import Target
from ipu.transforms.plan.families.base import Family, OpCost
from ipu.transforms.plan.pricing import conversion_cost, esize_of, stage_fill_cycles


class ReduceFamily(Family):
    """Prices `plan.reduce`."""

    name = "reduce"
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (plan.ReduceOp,)

    def cost(self, op: Operation, t: Target) -> OpCost:
        assert isinstance(op, plan.ReduceOp)
        x, f = conversion_cost(op.input.type, op.result.type, t)
        r = op.result.type.layout
        parts, pe = op.input.type.layout.partials, esize_of(op.input.type)
        comp = t.reduce_cycles(parts, r.block_elements, esize_of(op.result.type), pe)
        return comp + stage_fill_cycles(op.input.type.layout, r, pe, t), x, 1, f


FAMILY = ReduceFamily()

__all__ = ["FAMILY", "ReduceFamily"]
