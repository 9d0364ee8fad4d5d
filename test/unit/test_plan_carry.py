"""The search's second look at loops (`plan.search._carried`): a value a loop converts back to
its entry layout on every trip is carried as the body yields it (`Decisions.yielded` ->
`Decisions.carry`, the loop's `plan.carry`), and the sum a loop yields may be planned in its
rhs's layout instead (`Decisions.rhs_layout`); either plan drops the per-trip conversion."""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects import func

from ipu.api import context
from ipu.dialects import plan
from ipu.ir_text import parse_path
from ipu.target import load_target
from ipu.transforms.plan import search
from ipu.transforms.plan.state import CARRY_ATTR

MODEL = Path(__file__).parents[1] / "lit" / "transforms" / "plan-carry.mlir"


def _carried_conversions(c: search.Candidate) -> int:
    return sum(
        isinstance(o, plan.RearrangeOp) and o.reason is not None and o.reason.data == "carried layout"
        for o in c.function.walk()
    )


def test_a_converted_back_value_is_carried_as_yielded_or_summed_in_the_rhs_layout() -> None:
    f = next(o for o in parse_path(context(), MODEL).body.block.ops if isinstance(o, func.FuncOp))
    t = load_target("sim16")
    greedy = search._plan(f, t, {})
    assert greedy is not None and _carried_conversions(greedy) == 1
    # the repeat is op 0; its one carried value leaves in the add's (the matmul's) layout; the add is op 3
    assert set(greedy.yielded) == {0} and set(greedy.yielded[0]) == {0}
    assert greedy.yielding_binaries == {3}
    cands, tried = search._carried(f, t, [greedy], {})
    assert tried == 2 and len(cands) == 2
    flipped, carried = cands
    assert flipped.rhs_layout == {3} and not flipped.carry and _carried_conversions(flipped) == 0
    assert carried.carry == greedy.yielded and _carried_conversions(carried) == 0
    repeat = next(o for o in carried.function.walk() if isinstance(o, plan.RepeatOp))
    assert repeat.attributes[CARRY_ATTR].data[0] == greedy.yielded[0][0]  # type: ignore[attr-defined]
    assert repeat.body.block.args[0].type.layout_attr == greedy.yielded[0][0]
    assert max(flipped.metrics.estimated_cycles, carried.metrics.estimated_cycles) < greedy.metrics.estimated_cycles
