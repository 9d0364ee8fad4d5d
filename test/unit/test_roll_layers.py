"""roll-layers: which runs of layers it rolls, and that the rolled model computes what the
unrolled one does (the golden evaluator on both)."""

from __future__ import annotations

import numpy as np
from conftest import ROOT

from ipu.api import parse_text
from ipu.dialects import graph
from ipu.golden.evaluator import evaluate, main_function, make_inputs
from ipu.tools.common import make_context
from ipu.transforms.graph.roll_layers import RollLayersPass

LIT = ROOT / "test" / "lit" / "transforms" / "roll-layers.mlir"


def _layer(k: int, src: str, act: str = "gelu", width: int = 64) -> str:
    return f"""
  %w{k} = graph.parameter "l{k}.w" #graph.gaussian<seed = {k + 1}, std = 0.1> : tensor<32x{width}xf32>
  %v{k} = graph.parameter "l{k}.v" #graph.gaussian<seed = {k + 11}, std = 0.1> : tensor<{width}x32xf32>
  %h{k} = graph.matmul {src}, %w{k} : (tensor<16x32xf32>, tensor<32x{width}xf32>) -> tensor<16x{width}xf32>
  %g{k} = graph.{act} %h{k} : tensor<16x{width}xf32> -> tensor<16x{width}xf32>
  %f{k} = graph.matmul %g{k}, %v{k} : (tensor<16x{width}xf32>, tensor<{width}x32xf32>) -> tensor<16x32xf32>
  %y{k} = graph.add {src}, %f{k} : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>"""


def _module(body: str, ret: str):
    text = f"""func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {{{body}
  func.return {ret} : tensor<16x32xf32>
}}"""
    ctx = make_context()
    return parse_text(ctx, text, "<test>")


def _repeats(module) -> list[graph.RepeatOp]:
    return [op for op in module.walk() if isinstance(op, graph.RepeatOp)]


def _rolled(module):
    before = main_function(module.clone())
    RollLayersPass().apply(make_context(), module)
    module.verify()
    return before, main_function(module)


def _same_outputs(before, after) -> None:
    inputs = make_inputs(before, seed=3)
    a, b = evaluate(before, inputs), evaluate(after, inputs)
    for x, y in zip(a.outputs, b.outputs, strict=True):
        np.testing.assert_array_equal(x, y)


def test_lit_example_rolls_three_layers_and_computes_the_same() -> None:
    ctx = make_context()
    module = parse_text(ctx, LIT.read_text(), str(LIT))
    before, after = _rolled(module)
    (rep,) = _repeats(module)
    assert rep.count.value.data == 3 and len(rep.inits) == 1
    stacked = [op for op in after.walk() if isinstance(op, graph.ParameterOp) and op.sym_name.data.startswith("l*")]
    assert sorted(op.sym_name.data for op in stacked) == ["l*.beta", "l*.c", "l*.w1", "l*.w2"]
    assert "gamma" in {op.sym_name.data for op in after.walk() if isinstance(op, graph.ParameterOp)}
    _same_outputs(before, after)


def test_four_layers_on_the_input_roll_all_four() -> None:
    body = _layer(0, "%x") + "".join(_layer(k, f"%y{k - 1}") for k in range(1, 4))
    module = _module(body, "%y3")
    before, after = _rolled(module)
    (rep,) = _repeats(module)
    assert rep.count.value.data == 4
    _same_outputs(before, after)


def test_a_different_layer_ends_the_run() -> None:
    # layer 3 uses relu: layers 0-2 roll, 3 stays as it is
    body = _layer(0, "%x") + _layer(1, "%y0") + _layer(2, "%y1") + _layer(3, "%y2", act="relu")
    module = _module(body, "%y3")
    before, after = _rolled(module)
    (rep,) = _repeats(module)
    assert rep.count.value.data == 3
    assert any(isinstance(op, graph.ReluOp) and op.parent_op() is after for op in after.walk())
    _same_outputs(before, after)


def test_a_layer_value_read_after_the_run_is_not_rolled_over() -> None:
    # the first layer's hidden activation feeds the output: rolling layers 0-2 would need it
    # after the loop, so only layers 1 and 2 roll
    body = _layer(0, "%x") + _layer(1, "%y0") + _layer(2, "%y1")
    body += "\n  %r = graph.add %y2, %f0 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>"
    module = _module(body, "%r")
    before, after = _rolled(module)
    (rep,) = _repeats(module)
    assert rep.count.value.data == 2
    _same_outputs(before, after)


def test_two_layers_on_the_input_stay_unrolled() -> None:
    # a run needs two layers alike; the first layer reading the input is then taken in too. Two
    # layers, the first reading the input, leave no run (a known limit: little to gain)
    module = _module(_layer(0, "%x") + _layer(1, "%y0"), "%y1")
    RollLayersPass().apply(make_context(), module)
    assert not _repeats(module)


def test_no_matmul_no_roll() -> None:
    body = "".join(
        f"\n  %e{k} = graph.exp {src} : tensor<16x32xf32> -> tensor<16x32xf32>"
        f"\n  %t{k} = graph.tanh %e{k} : tensor<16x32xf32> -> tensor<16x32xf32>"
        f"\n  %s{k} = graph.add %t{k}, {src} : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>"
        f"\n  %y{k} = graph.relu %s{k} : tensor<16x32xf32> -> tensor<16x32xf32>"
        for k, src in enumerate(["%x", "%y0", "%y1"])
    )
    module = _module(body, "%y2")
    RollLayersPass().apply(make_context(), module)
    assert not _repeats(module)
