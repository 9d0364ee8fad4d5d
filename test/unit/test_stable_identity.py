"""Checkpoints are matched with the reference by the graph value's stable name, so a graph-level
rewrite a researcher adds (here: a reorder of two independent ops, run before plan-ops through the
Python API) keeps every checkpoint compared with the right reference value; the old pre-order
index would have compared each swapped value with its neighbour's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

import ipu
from ipu.api import parse
from ipu.dialects import graph
from ipu.dialects.value_names import name_values, named_ops, value_names
from ipu.golden.compare import compare, tolerance
from ipu.golden.evaluator import evaluate, main_function

# two independent elementwise ops of the same shape feeding one add: relu may run before gelu
MODEL = """
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<256x256xf16>
  %h = graph.matmul %x, %w : (tensor<64x256xf16>, tensor<256x256xf16>) -> tensor<64x256xf16>
  %a = graph.gelu %h : tensor<64x256xf16> -> tensor<64x256xf16>
  %b = graph.relu %h : tensor<64x256xf16> -> tensor<64x256xf16>
  %c = graph.add %a, %b : (tensor<64x256xf16>, tensor<64x256xf16>) -> tensor<64x256xf16>
  func.return %c : tensor<64x256xf16>
}
"""


class _HoistRelu(RewritePattern):
    """Move a `graph.relu` above the op just before it when it does not read that op's result."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReluOp, rewriter: PatternRewriter) -> None:
        prev = op.prev_op
        if prev is None or isinstance(prev, graph.ParameterOp) or op.input.owner is prev:
            return
        op.detach()
        rewriter.insert(op, InsertPoint.before(prev))


@dataclass(frozen=True)
class HoistReluPass(ModulePass):
    """A researcher's graph-level reorder: relu before an independent preceding op."""

    name = "test-hoist-relu"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(_HoistRelu(), apply_recursively=False).rewrite_module(op)


def _order(module: builtin.ModuleOp) -> list[str]:
    f = main_function(module)
    names = value_names(f)
    return [names[op] for op in named_ops(f)]


def test_reorder_keeps_checkpoints_matched_by_name() -> None:
    reference_order = _order(parse(MODEL))
    rewritten = parse(MODEL)
    HoistReluPass().apply(ipu.api.context(), rewritten)
    rewritten_order = _order(rewritten)
    # the rewrite really moved values: the same names, two of them at each other's index
    assert reference_order == ["w", "h", "a", "b", "c"]
    assert rewritten_order == ["w", "h", "b", "a", "c"]

    compiled = ipu.compile(MODEL, target="sim16", options={"finalists": 1}, graph_passes=[HoistReluPass()])
    report = ipu.run(compiled, samples=None)
    checkpoints = [c for c in report.checks if c.kind == "checkpoint"]
    assert [c.value for c in checkpoints] == ["h", "b", "a", "c"]  # program order of the rewritten graph
    assert all(c.name == c.value for c in checkpoints)
    assert report.passed, [(c.name, c.result.reason) for c in report.checks if not c.result.passed]

    # the old scheme joined a checkpoint with the reference op at the index its op had in the
    # compiled (rewritten) graph: a and b would each have been compared with the other's value
    gold = evaluate(compiled.reference, report.inputs)
    by_index = {c.value: rewritten_order.index(c.value) for c in checkpoints}
    for c in checkpoints:
        old_partner = reference_order[by_index[c.value]]
        obs = report.result.checkpoints[c.index]
        a, r = tolerance(obs.dtype)
        if c.value in ("a", "b"):
            assert old_partner != c.value
            assert not compare(obs, gold.values[old_partner], obs.size, a, r).passed
        else:
            assert old_partner == c.value
        assert compare(obs, gold.values[c.value], obs.size, a, r).passed


def test_generated_names_are_unique_stable_and_printed_verbatim() -> None:
    text = """
    func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %0 = graph.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
      %1 = graph.gelu %0 : tensor<4x8xf32> -> tensor<4x8xf32>
      %gelu.1 = graph.relu %1 : tensor<4x8xf32> -> tensor<4x8xf32>
      %r = graph.relu %gelu.1 : tensor<4x8xf32> -> tensor<4x8xf32>
      %r_1 = graph.relu %r : tensor<4x8xf32> -> tensor<4x8xf32>
      func.return %r_1 : tensor<4x8xf32>
    }
    """
    m = parse(text)
    f = main_function(m)
    f.body.block.first_op.results[0].name_hint = "x"  # a builder may repeat a name: x is the argument's
    names = value_names(f)
    # %r_1's hint is r (xDSL drops `_<digits>`): taken, so it is renamed; %0, %1 are unnamed
    assert [names[op] for op in named_ops(f)] == ["x.1", "gelu", "gelu.1", "r", "r.1"]
    name_values(f)
    assert value_names(f) == names  # idempotent: the hints are now the names
    again = main_function(parse(str(m)))  # printed and parsed back: the same names
    assert [op.results[0].name_hint for op in named_ops(again)] == ["x.1", "gelu", "gelu.1", "r", "r.1"]
    x = np.ones((4, 8), np.float32)
    assert sorted(evaluate(again, {"x": x}).values) == ["gelu", "gelu.1", "r", "r.1", "x.1"]
