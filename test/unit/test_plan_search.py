"""The whole-graph search keeps the greedy plan among its finalists: the plan-level exchange
estimate can rank plans the other way from the scheduled exchange, and select-finalist, which
refines every finalist, must never end worse than plan-ops{finalists=1}."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES

from ipu.log import quiet
from ipu.target import load_target
from ipu.tools.common import make_context, parse_file
from ipu.transforms.plan import search as plan_search
from ipu.transforms.plan.cost import PlanMetrics
from ipu.transforms.plan.plan_decide import graph_functions

T = load_target("sim64")


def _graph():
    module = parse_file(make_context(), EXAMPLES / "transformer_block_small.mlir")
    return graph_functions(module)[0]


def test_greedy_plan_is_a_finalist_even_when_the_estimate_ranks_it_last(monkeypatch: pytest.MonkeyPatch) -> None:
    f = _graph()
    greedy = plan_search._plan(f, T, {})
    assert greedy is not None
    # rank the most expensive plans first: the beam and the front then drop the greedy plan
    monkeypatch.setattr(PlanMetrics, "pareto_key", lambda m: (-m.estimated_cycles,))
    with quiet():
        kept = plan_search.search(f, T, finalists=2, beam=2, candidates=4)
    assert 2 <= len(kept) <= 4  # two from the front, and beside them the carried and residency plans
    assert greedy.signature in {c.signature for c in kept}
    assert any(c.metrics.estimated_cycles > greedy.metrics.estimated_cycles for c in kept)


def test_search_finalists_are_distinct_and_include_greedy() -> None:
    f = _graph()
    greedy = plan_search._plan(f, T, {})
    assert greedy is not None
    with quiet():
        kept = plan_search.search(f, T, finalists=3, beam=4, candidates=4)
    sigs = [c.signature for c in kept]
    assert len(set(sigs)) == len(sigs) and greedy.signature in sigs
