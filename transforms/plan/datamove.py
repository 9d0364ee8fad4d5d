"""plan-ops emitters for data movement of computed tensors: `graph.slice`, `graph.pad` and
`graph.concat` become `plan.window` exchanges (rows move between tiles, no kernel runs)."""

from __future__ import annotations

from xdsl.dialects import builtin
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.transforms.plan.layouts import leading_layout, plan_type, row_layout
from ipu.transforms.plan.state import Planner


def _source(p: Planner, v: SSAValue, what: str) -> SSAValue:
    """`v` planned and not a partial sum (a window moves whole values)."""
    x = p.get(v, None, what)
    if x.type.layout.partial >= 0:
        x = p.get(v, plan_type(v.type, row_layout(x.type.layout.shape, p.target.tiles)), what)
    return x


def _result_type(p: Planner, op: Operation) -> plan.PlanTensorType:
    r = op.results[0]
    return p.desired.get(r) or plan_type(r.type, leading_layout(tuple(r.type.get_shape()), p.target.tiles))


def _window(p: Planner, op: Operation, x: SSAValue, offsets: tuple[int, ...], out: plan.PlanTensorType) -> SSAValue:
    el = x.type.tensor.element_type
    if plan.window_misaligned(x.type.shape, out.shape, offsets, el):
        raise DiagnosticException(
            f"plan-ops: {op.name} of {list(x.type.shape)} -> {list(out.shape)} at {list(offsets)} in {el} changes the "
            "last axis at an odd element (2-byte elements move as whole words: even offsets and sizes only)"
        )
    w = plan.WindowOp.create(
        operands=[x], result_types=[out], attributes={"offsets": DenseArrayBase.from_list(i64, offsets)}
    )
    return p.emit(w).results[0]


def _value(op: Operation) -> dict[str, builtin.StringAttr]:
    return {plan.VALUE_ATTR: builtin.StringAttr(op.results[0].name_hint or "")}


def plan_slice(p: Planner, op: graph.SliceOp, index: int) -> None:
    x = _source(p, op.input, op.name)
    v = _window(p, op, x, op.offsets(), _result_type(p, op))
    v.owner.attributes.update(_value(op))
    p.set(op.result, v)


def plan_pad(p: Planner, op: graph.PadOp, index: int) -> None:
    x = _source(p, op.input, op.name)
    v = _window(p, op, x, tuple(-o for o in op.offsets()), _result_type(p, op))
    v.owner.attributes.update(_value(op))
    p.set(op.result, v)


def plan_concat(p: Planner, op: graph.ConcatOp, index: int) -> None:
    """Each input's window of the result (zero elsewhere), summed: one exchange per input, and
    an add per input after the first (a `tilemap.move` has one source buffer)."""
    out = _result_type(p, op)
    ax = op.axis.value.data
    acc: SSAValue | None = None
    for v, at in zip(op.inputs, op.starts(), strict=True):
        x = _source(p, v, op.name)
        off = tuple(-at if i == ax else 0 for i in range(len(out.shape)))
        w = x if off == (0,) * len(off) and x.type == out else _window(p, op, x, off, out)
        acc = w if acc is None else p.emit(plan.BinaryOp("add", acc, w)).results[0]
    assert acc is not None
    if isinstance(acc.owner, plan.BinaryOp | plan.WindowOp):
        acc.owner.attributes.update(_value(op))
    p.set(op.result, acc)
