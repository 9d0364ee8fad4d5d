"""Weights spread over the machine (`Planner.spread_weight`, `function_spread`): a weight held on
fewer tiles than the machine starts where the busiest of its tiles holds least so far, so
layouts that all start at tile 0 do not pile every weight onto the low tiles."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.api import context
from ipu.ir_text import parse_text
from ipu.target import load_target
from ipu.transforms.pipeline import run_ladder
from ipu.transforms.plan.state import SPREAD_ATTR, Planner, first_fit, function_spread, pack_weights

T = load_target("sim64")


def planner(spread: bool = True) -> Planner:
    p = Planner(T, None, None, {})  # type: ignore[arg-type]
    p.spread = spread
    return p


def test_each_weight_goes_where_the_machine_holds_least() -> None:
    p = planner()
    assert p.spread_weight(32, 100) == 0  # an empty machine: the first tiles
    assert p.spread_weight(32, 100) == 32  # the other half
    assert p.spread_weight(16, 50) == 0  # both halves hold 100: the first window of least total
    assert p.spread_weight(16, 50) == 16
    # every 48-tile window holds a tile of 150: the one holding least in all (16-63)
    assert p.spread_weight(48, 10) == 16
    assert list(p.weight_load[[0, 16, 32, 63]]) == [150, 160, 110, 110]


def test_a_weight_on_every_tile_or_without_spreading_starts_at_0() -> None:
    p = planner()
    p.spread_weight(8, 100)
    assert p.spread_weight(64, 10) == 0
    off = planner(spread=False)
    assert [off.spread_weight(8, 100) for _ in range(3)] == [0, 0, 0]
    assert off.weight_load is None


def _module(params: int, attr: str | None = None):
    extra = f' attributes {{plan.spread = "{attr}"}}' if attr else ""
    return parse_text(
        context(),
        f"""func.func @f(%x: tensor<1x{params}xf16>) -> tensor<1x{params}xf16>{extra} {{
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<{params}x{params}xf16>
  %y = graph.matmul %x, %w : (tensor<1x{params}xf16>, tensor<{params}x{params}xf16>) -> tensor<1x{params}xf16>
  func.return %y : tensor<1x{params}xf16>
}}""",
        "spread",
    )


def _f(module):
    return next(op for op in module.walk() if op.name == "func.func")


def test_auto_spreads_once_weights_average_40_percent_of_a_tile_and_unset_is_off() -> None:
    # sim64: 64 tiles; 40 % of their memory in f16 weights is a square matrix of about this side
    side = int((0.4 * T.memory_size * T.tiles / 2) ** 0.5)
    assert not function_spread(_f(_module(side - 8, "auto")), T)
    assert function_spread(_f(_module(side + 8, "auto")), T)
    assert not function_spread(_f(_module(side + 8)), T)  # unset: off
    assert function_spread(_f(_module(16, "on")), T)
    assert not function_spread(_f(_module(side + 8, "off")), T)


def test_a_bad_spread_attribute_is_named() -> None:
    f = _f(_module(16))
    f.attributes[SPREAD_ATTR] = StringAttr("sideways")
    with pytest.raises(DiagnosticException, match="plan.spread must be one of auto, on, off"):
        function_spread(f, T)


@dataclass(frozen=True)
class _FitsOnlySpread(ModulePass):
    """A stand-in for the ladder: does not fit unless the function's weights are spread."""

    name = "fits-only-spread"
    never: bool = False

    def apply(self, ctx, op) -> None:
        f = _f(op)
        if self.never or f.attributes.get(SPREAD_ATTR) != StringAttr("on"):
            raise DiagnosticException(
                f"model does not fit target sim64: attempt {'spread' if SPREAD_ATTR in f.attributes else 'plain'}"
            )
        op.attributes["ipu.placed"] = StringAttr("yes")


def test_the_ladder_spreads_weights_when_the_model_does_not_fit() -> None:
    module = _module(16)
    run_ladder(context(), module, [("x", _FitsOnlySpread())])
    assert _f(module).attributes[SPREAD_ATTR] == StringAttr("on")
    assert module.attributes["ipu.placed"] == StringAttr("yes")


def test_a_function_that_says_how_to_spread_is_not_retried() -> None:
    with pytest.raises(DiagnosticException, match="attempt spread$"):
        run_ladder(context(), _module(16, "off"), [("x", _FitsOnlySpread())])


def test_when_spreading_does_not_fit_either_both_reasons_are_given() -> None:
    with pytest.raises(
        DiagnosticException, match=r"attempt spread \(with its weights spread; without: .*attempt plain\)"
    ):
        run_ladder(context(), _module(16), [("x", _FitsOnlySpread(never=True))])


def test_packing_places_the_heaviest_weight_first() -> None:
    """In program order a heavy weight placed last finds every window taken; packed heaviest
    first it gets a window of its own and the light ones share what is left."""
    weights = [(16, 10), (16, 10), (16, 10), (16, 10), (16, 100)]
    load = np.zeros(64, np.int64)
    greedy = [first_fit(load, used, per) for used, per in weights]
    assert greedy == [0, 16, 32, 48, 0] and load.max() == 110
    places = pack_weights(weights, 64)
    assert places == [16, 32, 48, 16, 0]
    packed = np.zeros(64, np.int64)
    for (used, per), first in zip(weights, places, strict=True):
        packed[first : first + used] += per
    assert packed.max() == 100


def test_packing_goes_around_the_weights_it_does_not_place() -> None:
    """An embedding table (not spread) holds tiles 0-31: the packed weight keeps off them."""
    assert pack_weights([(16, 100)], 64, fixed=[(0, 32, 50)]) == [32]


def test_a_model_with_an_embedding_compiles_and_runs_spread() -> None:
    """A lookup table (placed where its family puts it) and two matmuls packed around it."""
    import ipu

    text = """func.func @f(%ids: tensor<4xi32>) -> tensor<4x64xf16> attributes {plan.spread = "on"} {
  %t = graph.parameter "t" #graph.gaussian<seed = 3, std = 0.5> : tensor<100x64xf16>
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.1> : tensor<64x64xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 2, std = 0.1> : tensor<64x64xf16>
  %e = graph.gather %t, %ids {axis = 0 : i64} : (tensor<100x64xf16>, tensor<4xi32>) -> tensor<4x64xf16>
  %h = graph.matmul %e, %w1 : (tensor<4x64xf16>, tensor<64x64xf16>) -> tensor<4x64xf16>
  %y = graph.matmul %h, %w2 : (tensor<4x64xf16>, tensor<64x64xf16>) -> tensor<4x64xf16>
  func.return %y : tensor<4x64xf16>
}"""
    report = ipu.run(ipu.compile(text, "sim64"), {"ids": np.array([3, 0, 99, 41], np.int32)})
    assert report.passed
