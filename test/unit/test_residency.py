"""`plan.residency`: the whole function's weight residency as a knapsack over each matmul's plans,
and the search states it gives (each matmul planned as assigned)."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.parser import Parser

from ipu.context import make_context
from ipu.dialects import plan
from ipu.target import load_target
from ipu.transforms.plan.budget import WeightBudget
from ipu.transforms.plan.residency import QUANTUM, knapsack, matmul_points, residency_budgets, weight_matmuls
from ipu.transforms.plan.search import _plan

MLP = """
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<256x1024xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 2, std = 0.02> : tensor<1024x256xf16>
  %h = graph.matmul %x, %w1 : (tensor<64x256xf16>, tensor<256x1024xf16>) -> tensor<64x1024xf16>
  %g = graph.gelu %h : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w2 : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}
"""


def _point(kb: int, cycles: int) -> tuple:
    return (kb * QUANTUM, cycles, (1, 1, 1), False, True)


def test_knapsack_takes_the_fewest_cycles_that_fit() -> None:
    a = [_point(1, 100), _point(4, 40)]
    b = [_point(1, 90), _point(3, 20)]
    assert knapsack([a, b], 8 * QUANTUM) == [1, 1]  # 7 KB: both replicated
    assert knapsack([a, b], 5 * QUANTUM) == [0, 1]  # 4 KB: b's saves 70 for 2 KB, a's 60 for 3
    assert knapsack([a, b], 2 * QUANTUM) == [0, 0]
    assert knapsack([a, b], 1 * QUANTUM) is None  # not even the least of both


def test_each_matmul_is_planned_as_its_budget_assigns() -> None:
    t = load_target("sim16")
    f = next(o for o in Parser(make_context(), MLP).parse_module().ops if isinstance(o, func.FuncOp))
    found = weight_matmuls(f)
    assert [op.result.name_hint for _, op, _ in found] == ["h", "y"]
    for _, op, trips in found:
        points = matmul_points(op, trips, t)
        resident = [p for p in points if p[4]]
        # resident plans on their front: more bytes a tile only for fewer cycles
        assert all(p[0] < q[0] and p[1] > q[1] for p, q in zip(resident, resident[1:], strict=False))
        assert not points[-1][4]  # and the best fetched one
    budgets = residency_budgets(f, t)
    assert budgets and all(len(b.assigned) == 2 for b in budgets)
    planned = 0
    for b in budgets:
        c = _plan(f, t, {}, None, b)
        if c is None:
            continue  # a capacity whose plan does not fit the tile
        planned += 1
        grids = [(g.result.name_hint, g) for g in c.function.walk() if isinstance(g, plan.GemmOp)]
        assert len(grids) == 2
        for (_, grid, swapped, _), (_, g) in zip(b.assigned, grids, strict=True):
            assert g.swapped is not None if swapped else g.swapped is None
            assert tuple(g.result.type.layout.grid) == grid
    assert planned
    assert WeightBudget(assigned=((3, (1, 2, 4), True, False),)).assignment(3) == ((1, 2, 4), True, False)
    assert WeightBudget().assignment(3) is None
