"""The elementwise family: unary maps, binary ops (a row vector or a column broadcast to the
lhs's layout), casts and `graph.where`, each computed in its first operand's layout as
`plan.unary`, `plan.binary`, `plan.cast` or `plan.select`; and the pricing of a rolled layer's
weight slice (`plan.iteration_slice`)."""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import KERNELS, stacked_offset_cycles
from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.target import Target
from ipu.transforms.plan.families.base import Family, OpCost
from ipu.transforms.plan.layouts import plan_type, row_layout
from ipu.transforms.plan.pricing import esize_of
from ipu.transforms.plan.state import Planner, value_attr, value_name


def _plan_unary(p: Planner, op: graph.ElementwiseUnaryOp, index: int) -> None:
    """Every elementwise unary op: computed in its operand's layout by the kernel the op names; a
    ReLU of an add nothing else reads (a conv's bias, a residual) folds into it (`add_relu`)."""
    x = p.get(op.input, None, op.name)
    src = x.owner
    if (
        op.kernel() == "relu"
        and isinstance(src, plan.BinaryOp)
        and src.kind.data == "add"
        and isinstance(op.input.owner, graph.AddOp)
        and op.input.has_one_use()
        and not src.result.uses  # the add's value, just planned, is read by nothing else
    ):
        src.kind = StringAttr("add_relu")
        name = value_name(op)
        if name is None:
            src.attributes.pop(plan.VALUE_ATTR, None)
        else:
            src.attributes[plan.VALUE_ATTR] = StringAttr(name)
        src.result.name_hint = op.result.name_hint
        p.set(op.result, src.result)
        return
    p.set(op.result, p.emit(plan.UnaryOp(op.kernel(), x, value_name(op))).results[0])


def _plan_cast(p: Planner, op: graph.CastOp, index: int) -> None:
    """A cast in place: to bool the `to_bool` kernel (x != 0), otherwise a converting copy (from
    bool, an i32 word 0/1, to i32 nothing at all)."""
    x = p.get(op.input, None, op.name)
    src, dst = op.input.type.element_type, op.result.type.element_type
    if graph.is_bool_type(dst):
        if graph.is_bool_type(src):
            p.set(op.result, x)
        else:
            p.set(op.result, p.emit(plan.UnaryOp("to_bool", x, value_name(op))).results[0])
        return
    if graph.is_bool_type(src) and graph.is_index_type(dst):
        p.set(op.result, x)
        return
    r = plan.CastOp.create(
        operands=[x],
        result_types=[plan.PlanTensorType(op.result.type, x.type.layout_attr)],
        attributes=value_attr(op),
    )
    p.set(op.result, p.emit(r).results[0])


def _plan_binary(p: Planner, op: Operation, index: int) -> None:
    """In the lhs's layout (the rhs converted, or broadcast), or in the rhs's where the search
    asks (`Decisions.rhs_layout`: a loop's yielded sum then carries the rhs's layout)."""
    lhs, rhs = op.operands
    if index in getattr(p.chooser, "rhs_layout", ()) and p.has(rhs) and rhs.type == lhs.type:
        b_t = p.current[rhs].type
        a = p.get(lhs, plan_type(lhs.type, b_t.layout, b_t.layout_attr.memory.data), op.name)
    else:
        a = p.get(lhs, None, op.name)
    lay = a.type.layout
    rs = tuple(rhs.type.get_shape())
    if rs == lay.shape:
        want = a.type
    elif len(rs) == 1 and len(lay.shape) >= 2 and rs[0] == lay.shape[-1]:  # a row vector (a bias)
        al = (lay.align[-1],) if lay.align else ()
        bl = Layout(rs, lay.grid, (lay.split[-1],), -1, lay.first_tile, al)
        want = plan_type(rhs.type, bl)
    elif len(rs) == 2 and len(lay.shape) == 2 and rs == (lay.shape[0], 1):
        _plan_column_binary(p, op, a)
        return
    else:
        raise DiagnosticException(f"plan-ops: {op.name} broadcast of {rs} to {lay.shape} is not planned yet")
    b = p.get(rhs, want, op.name)
    kind = op.name.split(".")[1]  # the kernel of the op's mnemonic (graph.less -> less)
    p.set(op.results[0], p.emit(plan.BinaryOp(kind, a, b, value_name(op))).results[0])


def _plan_column_binary(p: Planner, op: Operation, a: SSAValue) -> None:
    """lhs [R, C] (op) rhs [R, 1]: the column, gathered on one tile as the vector [R] (a
    reshape), goes to every tile in the lhs rows' split (a rearrange). The lhs rows are cut in
    even blocks so the vector's blocks (its one axis padded to whole words) hold the same rows."""
    lhs, rhs = op.operands
    lay = a.type.layout
    if lay.parts(0) > 1 and lay.block[0] % 2:
        al = (math.lcm(lay.align[0] if lay.align else 1, 2), lay.align[1] if lay.align else 1)
        lay = Layout(lay.shape, lay.grid, lay.split, -1, lay.first_tile, al)
        a = p.get(lhs, plan_type(lhs.type, lay, a.type.layout_attr.memory.data), "column broadcast alignment")
    rows = lay.shape[0]
    el = rhs.type.element_type
    col = p.get(rhs, plan_type(rhs.type, Layout((rows, 1), (1,), ((), ()))), op.name)
    vec_t = TensorType(el, [rows])
    want = plan_type(vec_t, Layout((rows,), lay.grid, (lay.split[0],), -1, lay.first_tile, lay.align[:1]))
    key = (rhs, want)
    if key not in p.cache:
        flat = plan.ReshapeOp.create(operands=[col], result_types=[plan_type(vec_t, Layout((rows,), (1,), ((),)))])
        v = p.emit(flat).results[0]
        v.name_hint = f"{rhs.name_hint or 'v'}_col"
        v = p.emit(plan.RearrangeOp(v, want, "column broadcast")).results[0]
        v.name_hint = f"{rhs.name_hint or 'v'}_cols"
        p.conversions.append("column broadcast")
        p.cache[key] = v
    r = plan.BinaryOp(op.name.split(".")[1], a, p.cache[key], value_name(op))
    r.attributes["column"] = builtin.UnitAttr()
    p.set(op.results[0], p.emit(r).results[0])


def _plan_where(p: Planner, op: graph.WhereOp, index: int) -> None:
    """x where cond else y: the values and the condition in the layout x has, one `select`."""
    a = p.get(op.lhs, None, op.name)
    if a.type.layout.partial >= 0:
        a = p.get(op.lhs, plan_type(op.lhs.type, row_layout(a.type.layout.shape, p.target.tiles)), op.name)
    b = p.get(op.rhs, a.type, op.name)
    c = p.get(op.condition, plan_type(op.condition.type, a.type.layout, a.type.layout_attr.memory.data), op.name)
    r = plan.SelectOp.create(operands=[a, b, c], result_types=[a.type], attributes=value_attr(op))
    p.set(op.result, p.emit(r).results[0])


BINARY_OPS = (
    graph.AddOp,
    graph.SubOp,
    graph.MulOp,
    graph.MaxOp,
    graph.MinOp,
    graph.DivOp,
    graph.PowOp,
    graph.ModOp,
    graph.FmodOp,
    graph.AndOp,
    graph.OrOp,
    graph.XorOp,
    graph.ShiftLeftOp,
    graph.ShiftRightOp,
    *graph.COMPARE_OPS,
)


class ElementwiseFamily(Family):
    """Unary, binary, cast and select ops, in their first operand's layout."""

    name = "elementwise"
    graph_ops: ClassVar[tuple[type[Operation], ...]] = (
        *graph.ELEMENTWISE_UNARY_OPS,
        *BINARY_OPS,
        graph.CastOp,
        graph.WhereOp,
    )
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (
        plan.UnaryOp,
        plan.BinaryOp,
        plan.SelectOp,
        plan.CastOp,
        plan.IterationSliceOp,
        plan.IterationStoreOp,
    )

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        if isinstance(op, graph.CastOp):
            _plan_cast(p, op, index)
        elif isinstance(op, graph.WhereOp):
            _plan_where(p, op, index)
        elif isinstance(op, graph.ElementwiseUnaryOp):
            _plan_unary(p, op, index)
        else:
            _plan_binary(p, op, index)

    def cost(self, op: Operation, t: Target) -> OpCost:
        n = op.results[0].type.layout.block_elements
        e = esize_of(op.results[0].type)
        if isinstance(op, plan.UnaryOp):
            return KERNELS[op.kind.data].cycles(t, {"elements": n}, e), 0, 0, 0
        if isinstance(op, plan.BinaryOp):
            return KERNELS[op.kind.data].cycles(t, {"m": 1, "n": n, "b_rows": 1, "b_cols": n}, e), 0, 0, 0
        if isinstance(op, plan.SelectOp):
            return KERNELS["select"].cycles(t, {"elements": n}, e), 0, 0, 0
        if isinstance(op, plan.IterationSliceOp):  # `iteration_slice`: a DynamicSlice1D of the block
            if op.read_in_place():  # no copy: each AMP or binary call offsets its rhs's address (an
                # exchange reading the trip's block offsets its sources, as every phase's addresses
                # are set, unpriced)
                calls = sum(not isinstance(u.operation, plan.RearrangeOp) for u in op.result.uses)
                return stacked_offset_cycles(t) * calls, 0, 0, 0
            p = {"iterations": op.input.type.shape[0], "elements": n}
            return KERNELS["iteration_slice"].cycles(t, p, e), 0, 0, 0
        if isinstance(op, plan.IterationStoreOp):  # `iteration_store`: a DynamicUpdateSlice1D into the block
            n = op.value.type.layout.block_elements
            p = {"iterations": op.stacked.type.shape[0], "elements": n}
            return KERNELS["iteration_store"].cycles(t, p, e), 0, 0, 0
        assert isinstance(op, plan.CastOp)  # `copy`: a Cast1D of the block
        return KERNELS["copy"].cycles(t, {"elements": n}), 0, 0, 0


FAMILY = ElementwiseFamily()

__all__ = ["BINARY_OPS", "FAMILY", "ElementwiseFamily"]
