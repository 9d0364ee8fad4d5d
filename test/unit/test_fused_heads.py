"""A fused projection's q, k and v columns (`fuse-sibling-matmuls` slices) land straight in
their head splits' layouts: the slice is the one exchange, the split a copy on each tile."""

from __future__ import annotations

from conftest import EXAMPLES
from xdsl.dialects.builtin import TensorType, f16
from xdsl.ir import Block

import ipu
from ipu.abi.package import kernels_called
from ipu.dialects import plan
from ipu.target import load_target
from ipu.transforms.plan.families.attention import FAMILY as ATTENTION_FAMILY
from ipu.transforms.plan.layouts import plan_type, row_layout


def test_each_split_is_a_copy_and_the_model_matches_on_poisoned_memory() -> None:
    c = ipu.compile(EXAMPLES / "attention_small.mlir", target="sim64")
    assert "copy" in kernels_called(c.package)
    report = ipu.run(c, poison=True)
    assert report.passed, [(k.name, k.result.reason) for k in report.checks if not k.result.passed]
    assert report.total_cycles == c.package.metrics["estimated_cycles"]


def test_a_split_in_place_is_priced_as_a_copy() -> None:
    """The planner's price of a split whose input lies in the result's 2-D twin: no exchange."""
    t = load_target("sim64")
    heads = row_layout((8, 64, 16), t.tiles)
    twin = plan.heads_2d(heads)
    assert plan.one_head_blocks(heads) and plan.split_heads_in_place(twin, heads)
    assert not plan.split_heads_in_place(row_layout((64, 128), t.tiles), heads)
    b = Block(arg_types=[plan_type(TensorType(f16, (64, 128)), twin)])
    split = plan.SplitHeadsOp.create(
        operands=[b.args[0]], result_types=[plan_type(TensorType(f16, (8, 64, 16)), heads)]
    )
    compute, exchange, phases, _ = ATTENTION_FAMILY.cost(split, t)
    assert (exchange, phases) == (0, 0) and compute > 0
