"""`padding_read` follows a carried value through the loop it is yielded in whether map-tiles has
already rewritten that loop into a `tilemap.repeat` or not (it rewrites a loop before its body:
a K-split partial sum yielded from a rolled layer stopped map-tiles on MobileNetV2 with a bare
AssertionError)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.ir import Region

from ipu.api import parse
from ipu.dialects import plan, tilemap
from ipu.transforms.plan.plan_ops import PlanOpsPass
from ipu.transforms.tilemap.padding_reads import padding_read

LOOP = """func.func @main(%x: tensor<2x1000xf16>, %w: tensor<1000x1000xf16>) -> tensor<2x1000xf16> {
  %y.out = graph.repeat 3 iter(%y.in = %x) : (tensor<2x1000xf16>) {
    %h = graph.matmul %y.in, %w {plan.choice = #plan.choice<gemm, grid = [1, 4, 4]>}
      : (tensor<2x1000xf16>, tensor<1000x1000xf16>) -> tensor<2x1000xf16>
    graph.yield %h : tensor<2x1000xf16>
  }
  func.return %y.out : tensor<2x1000xf16>
}
"""


def test_a_yielded_partial_sum_under_either_loop() -> None:
    module = parse(LOOP)
    PlanOpsPass(target="sim16", finalists=1).apply(Context(), module)
    rep = next(op for op in module.walk() if isinstance(op, plan.RepeatOp))
    yielded = next(op for op in rep.walk() if isinstance(op, plan.YieldOp)).values[0]
    before = padding_read(yielded)
    # the loop as map-tiles leaves it before visiting its body: a tilemap.repeat around the same body
    body = rep.body
    rep.detach_region(body)
    shell = tilemap.RepeatOp(3, list(rep.operands), Region())  # (left unverified: plan-typed inits)
    shell.detach_region(shell.regions[0])
    shell.add_region(body)
    assert yielded.owner.parent_op() is shell
    assert padding_read(yielded) == before
