"""The ladder's answer to a selected finalist whose storage does not fit: the next cheapest
finalist, then (all failing) weights spread, then the first diagnostic."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.api import context, parse
from ipu.dialects import plan
from ipu.transforms.exchange.place_storage import NoFit
from ipu.transforms.levels import module_level
from ipu.transforms.pipeline import NO_FIT, compile_passes, run_ladder
from ipu.transforms.plan.state import function_reserve

MLP = Path(__file__).resolve().parents[2] / "examples" / "mlp_small.mlir"


@dataclass(frozen=True)
class FailingPlacement(ModulePass):
    """Runs before place-storage and refuses, as it would, the first `fails` calls, recording each
    call's selected finalist."""

    name = "failing-placement"
    fails: int = 1
    seen: list[int] = field(default_factory=list)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        f = next(o for o in op.body.block.ops if isinstance(o, func.FuncOp))
        self.seen.append(f.attributes[plan.FINALIST_ATTR].value.data)  # type: ignore[union-attr]
        if len(self.seen) <= self.fails:
            raise DiagnosticException(f"{NO_FIT} target sim16: no free range on tile 3")


def _ladder(fails: int) -> tuple[builtin.ModuleOp, FailingPlacement]:
    fake = FailingPlacement(fails)
    passes = compile_passes("sim16", {"finalists": 3})
    at = [label for label, _ in passes].index("place_storage")
    passes = [*passes[:at], ("failing_placement", fake), *passes[at:]]
    m = parse(MLP)
    run_ladder(context(), m, passes)
    return m, fake


def test_next_finalist_when_the_cheapest_does_not_fit() -> None:
    m, fake = _ladder(fails=1)
    assert len(fake.seen) == 2 and fake.seen[0] != fake.seen[1]  # another finalist the second time
    assert module_level(m) == "tasm"  # and the ladder went on to the end with it


def test_first_diagnostic_when_no_finalist_fits() -> None:
    with pytest.raises(DiagnosticException, match="no free range on tile 3") as e:
        _ladder(fails=100)
    # every finalist tried, then all again with the weights spread
    assert "with its weights spread" in str(e.value)


@dataclass(frozen=True)
class FragmentedPlacement(ModulePass):
    """Refuses, as place-storage does when a buffer finds no contiguous range, every module planned
    without `plan.reserve`, recording each call's reserve (0: none)."""

    name = "fragmented-placement"
    seen: list[int] = field(default_factory=list)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        f = next(o for o in op.body.block.ops if isinstance(o, func.FuncOp))
        self.seen.append(function_reserve(f))
        if not self.seen[-1]:
            raise NoFit(f"{NO_FIT} target sim16: %h needs 4096 bytes on tiles [0, 16)", shortfall=1000, stranded=500)


def test_planned_again_keeping_free_what_placement_missed() -> None:
    """Every finalist refused for want of a contiguous range: the ladder plans again from the graph
    with `plan.reserve` set to the buffer's shortfall and the bytes fragmentation stranded, before
    it spreads the weights; that plan places."""
    fake = FragmentedPlacement()
    passes = compile_passes("sim16", {"finalists": 2})
    at = [label for label, _ in passes].index("place_storage")
    m = parse(MLP)
    run_ladder(context(), m, [*passes[:at], ("fragmented_placement", fake), *passes[at:]])
    assert fake.seen[:2] == [0, 0] and fake.seen[2:] == [1500]  # both finalists, then the reserved plan
    assert module_level(m) == "tasm"
