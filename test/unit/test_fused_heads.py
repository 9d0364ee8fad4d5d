"""A fused projection's q, k and v columns (`fuse-sibling-matmuls` slices) land straight in
their head splits' layouts and memory: the slice is the one exchange, the split a view of its
buffer (`tilemap.view`, no code); a split whose input is read elsewhere too, or lies in another
memory, is a copy on each tile."""

from __future__ import annotations

from conftest import EXAMPLES
from xdsl.dialects.builtin import TensorType, f16
from xdsl.ir import Block

import ipu
from ipu.abi.package import kernels_called
from ipu.dialects import plan
from ipu.target import Target, load_target
from ipu.transforms.plan.families.attention import FAMILY as ATTENTION_FAMILY
from ipu.transforms.plan.layouts import plan_type, row_layout


def test_each_split_is_a_view_and_the_model_matches_on_poisoned_memory() -> None:
    c = ipu.compile(EXAMPLES / "attention_small.mlir", target="sim64")
    assert "copy" not in kernels_called(c.package)  # the three splits run no code (they did: 23,153 cycles)
    # the three windows one exchange (were three: 21,657; 20,461 until the head merge was a view)
    # (19,705 until fold-attention-scale put the attention's scale into wq: no query block scaled)
    assert c.package.metrics["estimated_cycles"] == 19430
    report = ipu.run(c, poison=True)
    assert report.passed, [(k.name, k.result.reason) for k in report.checks if not k.result.passed]
    assert report.total_cycles == c.package.metrics["estimated_cycles"]


def _split_in_place(memory: str, uses: int, argument: bool = False) -> tuple[plan.SplitHeadsOp, Target]:
    """A split whose input lies in the result's 2-D twin, in `memory`, read by `uses` ops; the
    input computed in the block, or (`argument`) a block argument: a loop's carried value."""
    t = load_target("sim64")
    heads = row_layout((8, 64, 16), t.tiles)
    twin = plan.heads_2d(heads)
    assert plan.one_head_blocks(heads) and plan.split_heads_in_place(twin, heads)
    assert not plan.split_heads_in_place(row_layout((64, 128), t.tiles), heads)
    x_t = plan_type(TensorType(f16, (64, 128)), twin, memory)
    b = Block(arg_types=[x_t])
    x = b.args[0]
    if not argument:  # the input computed here (a cast standing for the window that writes it)
        b.add_op(cast := plan.CastOp.create(operands=[x], result_types=[x_t]))
        x = cast.result
    split = None
    for _ in range(uses):
        split = plan.SplitHeadsOp.create(
            operands=[x], result_types=[plan_type(TensorType(f16, (8, 64, 16)), heads, "interleaved")]
        )
        b.add_op(split)
    assert split is not None
    return split, t


def test_a_split_in_place_is_priced_as_a_view_or_a_copy() -> None:
    """The planner's price of a split whose input lies in the result's 2-D twin: no exchange; no
    compute either when it is a view (the same memory, the input an op's result read by nothing else)."""
    split, t = _split_in_place("interleaved", 1)
    assert split.is_view() and ATTENTION_FAMILY.cost(split, t) == (0, 0, 0, 0)
    for memory, uses, argument in (("standard", 1, False), ("interleaved", 2, False), ("interleaved", 1, True)):
        split, t = _split_in_place(memory, uses, argument)
        compute, exchange, phases, _ = ATTENTION_FAMILY.cost(split, t)
        assert not split.is_view() and split.copies_block()
        assert (exchange, phases) == (0, 0) and compute > 0
