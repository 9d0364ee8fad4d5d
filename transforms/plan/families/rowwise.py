"""The row-wise family: ops over the last axis of whole rows, each tile holding whole rows —
softmax, layer and RMS norms (their scale and shift replicated to the rows' tiles), row
reductions, arg reductions and running sums — as `plan.rowwise`."""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.target import Target
from ipu.transforms.plan.budget import TargetMemo
from ipu.transforms.plan.families.base import Family, OpCost
from ipu.transforms.plan.layouts import plan_type, row_layout
from ipu.transforms.plan.pricing import conversion_bound, esize_of, fragments
from ipu.transforms.plan.state import Planner, value_attr


def rotated_rows(p: Planner, shape: tuple[int, ...]) -> Layout:
    """Whole rows per tile on the next tile range in turn: were every norm's and softmax's
    gather to land on tiles [0, rows), those tiles' exchange code (a family per source block)
    and replicated norm vectors would grow with the model's depth."""
    lay = row_layout(shape, p.target.tiles)
    slots = max(1, p.target.tiles // lay.tiles)
    first = p.row_turn % slots * lay.tiles
    p.row_turn += 1
    return Layout(lay.shape, lay.grid, lay.split, lay.partial, first, lay.align)


def split_norm_cost(a: Layout, esize: int, shift: bool, t: Target) -> OpCost:
    """A norm over rows split in column blocks: each tile's statistics, their gather over the
    row's tiles (one exchange of float pairs), and each tile normalising its block."""
    rows, cols, parts = math.prod(a.block[:-1]), a.block[-1], plan.split_norm_parts(a)
    own, gathered = plan.norm_stats_layouts(a)
    x = conversion_bound(own, gathered, 4, None, t.tiles) + t.phase_overhead_cycles()
    compute = t.norm_stats_cycles(rows, cols, esize) + t.norm_apply_cycles(rows, cols, parts, esize, shift)
    return compute, x, 1, fragments(own, gathered)


def column_block_layouts(shape: tuple[int, ...], tiles: int) -> list[Layout]:
    """Rows [R, N] split in whole column blocks over c tiles (N / c even, so no block is
    padded) and the rows over as many tile groups as the tiles allow: a norm's split forms."""
    if len(shape) != 2:
        return []
    r_all, n = shape
    out = []
    for c in range(2, min(n, tiles, plan.MAX_NORM_PARTS) + 1):
        if n % c or (n // c) % 2:
            continue
        r = max(1, min(r_all, tiles // c))
        out.append(Layout(shape, (r, c), ((0,), (1,))))
    return out


def _norm_layout(xt: plan.PlanTensorType, t: Target, shift: bool) -> Layout | None:
    """Where a norm of `xt` runs cheapest: in its own layout (whole rows, or whole column blocks:
    `split_norm_cost`), on whole rows (None: `rotated_rows` places them), or moved to column
    blocks (`column_block_layouts`); each priced with the move that gets it there. Memoized per
    target: the plan search plans each norm once per candidate plan."""
    key = (xt.layout, esize_of(xt), shift)
    found, want = NORM_MEMO.get(key, t)
    if not found:
        want = _cheapest_norm_layout(xt.layout, key[1], shift, t)
        NORM_MEMO.put(key, t, want)
    return want


NORM_MEMO: TargetMemo[Layout | None] = TargetMemo(512)


def _cheapest_norm_layout(a: Layout, e: int, shift: bool, t: Target) -> Layout | None:
    def split(lay: Layout) -> int:
        c, x, _, _ = split_norm_cost(lay, e, shift, t)
        return c + x

    def move(lay: Layout) -> int:
        return conversion_bound(a, lay, e, None, t.tiles) + t.phase_overhead_cycles()

    def whole(lay: Layout) -> int:
        return t.norm_cycles(math.prod(lay.block[:-1]), lay.block[-1], e, shift=shift)

    options: list[tuple[int, Layout | None]] = []
    parts = plan.split_norm_parts(a)
    if parts == 1:
        options.append((whole(a), a))
    elif parts > 1:
        options.append((split(a), a))
    if parts != 1:
        rows = row_layout(a.shape, t.tiles)
        options.append((move(rows) + whole(rows), None))
    options += [(move(c) + split(c), c) for c in column_block_layouts(a.shape, t.tiles)]
    return min(options, key=lambda o: o[0])[1]


def _plan_rowwise(p: Planner, op: Operation, index: int) -> None:
    x_val = op.operands[0]
    rank = len(x_val.type.get_shape())
    if isinstance(op, graph.SoftmaxOp | graph.ReduceOp) and op.axis_index() != rank - 1:
        raise DiagnosticException(f"plan-ops: {op.name} over axis {op.axis_index()} is planned only on the last axis")
    x = p.get(x_val, None, op.name)
    lay = x.type.layout
    norm = isinstance(op, graph.LayerNormOp | graph.RmsNormOp)
    if norm:
        want = _norm_layout(x.type, p.target, isinstance(op, graph.LayerNormOp))
        if want != lay:
            lay = rotated_rows(p, lay.shape) if want is None else want
            x = p.get(x_val, plan_type(x_val.type, lay), op.name)
    elif lay.partial >= 0 or lay.split[-1]:
        lay = rotated_rows(p, lay.shape)
        x = p.get(x_val, plan_type(x_val.type, lay), op.name)
    params = []
    attrs: dict[str, Attribute] = value_attr(op)
    if norm:
        vec = plan.row_vector(lay.shape[-1], lay)
        ops = [op.gamma, op.beta] if isinstance(op, graph.LayerNormOp) else [op.gamma]
        params = [p.get(v, plan_type(v.type, vec), op.name) for v in ops]
        attrs["epsilon"] = builtin.FloatAttr(op.eps(), builtin.f64)
        kind = "layer_norm" if isinstance(op, graph.LayerNormOp) else "rms_norm"
        rt = x.type
    elif isinstance(op, graph.ReduceOp):
        kind = op.kind.data
        if rank >= 2 and lay.block[-2] % 2:
            # the result's last axis is the rows axis, whose block is padded to whole 32-bit words
            # (even): give the input as many rows per tile, so tile t's results are its own rows
            align = list(lay.align or (1,) * rank)
            align[-2] = math.lcm(align[-2], 2)
            lay = Layout(lay.shape, lay.grid, lay.split, lay.partial, lay.first_tile, tuple(align))
            x = p.get(x_val, plan_type(x_val.type, lay), op.name)
        rl = Layout(lay.shape[:-1], lay.grid, lay.split[:-1], -1, lay.first_tile, tuple(lay.align[:-1]))
        rt = plan_type(op.result.type, rl)
    elif isinstance(op, graph.CumSumOp):
        kind = "cumsum"
        rt = x.type
        for flag in ("exclusive", "reverse"):
            if op.attributes.get(flag) is not None:
                attrs[flag] = builtin.UnitAttr()
    else:
        kind = "softmax"
        rt = x.type
    attrs["kind"] = StringAttr(kind)
    r = plan.RowwiseOp.create(operands=[x, *params], result_types=[rt], attributes=attrs)
    p.set(op.results[0], p.emit(r).results[0])


def _plan_arg_reduce(p: Planner, op: graph.ArgReduceOp, index: int) -> None:
    """The index of each row's largest or smallest value: whole rows per tile (as the row
    reductions), one `arg_rows` kernel."""
    x_val = op.input
    x = p.get(x_val, None, op.name)
    lay = x.type.layout
    if lay.partial >= 0 or lay.split[-1] or (len(lay.shape) >= 2 and lay.block[-2] % 2):
        lay = row_layout(lay.shape, p.target.tiles)
        if len(lay.shape) >= 2 and lay.block[-2] % 2:  # the result's one axis is padded to even blocks
            align = list(lay.align or (1,) * len(lay.shape))
            align[-2] = math.lcm(align[-2], 2)
            lay = Layout(lay.shape, lay.grid, lay.split, lay.partial, lay.first_tile, tuple(align))
        x = p.get(x_val, plan_type(x_val.type, lay), op.name)
    rl = Layout(lay.shape[:-1], lay.grid, lay.split[:-1], -1, lay.first_tile, tuple(lay.align[:-1]))
    attrs: dict[str, Attribute] = {**value_attr(op), "kind": StringAttr(f"arg{op.kind.data}")}
    if op.select_last_index is not None:
        attrs["select_last_index"] = builtin.UnitAttr()
    r = plan.RowwiseOp.create(operands=[x], result_types=[plan_type(op.result.type, rl)], attributes=attrs)
    p.set(op.result, p.emit(r).results[0])


class RowwiseFamily(Family):
    """Softmax, norms, row and arg reductions -> `plan.rowwise`."""

    name = "rowwise"
    graph_ops: ClassVar[tuple[type[Operation], ...]] = (
        graph.SoftmaxOp,
        graph.LayerNormOp,
        graph.RmsNormOp,
        graph.ReduceOp,
        graph.ArgReduceOp,
        graph.CumSumOp,
    )
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (plan.RowwiseOp,)

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        if isinstance(op, graph.ArgReduceOp):
            _plan_arg_reduce(p, op, index)
        else:
            _plan_rowwise(p, op, index)

    def cost(self, op: Operation, t: Target) -> OpCost:
        assert isinstance(op, plan.RowwiseOp)
        a = op.input.type.layout
        rows, cols = math.prod(a.block[:-1]), a.block[-1]
        k, e = op.kind.data, esize_of(op.result.type)
        if k == "softmax":
            return t.softmax_cycles(rows, cols, e), 0, 0, 0
        if k in ("layer_norm", "rms_norm"):
            if plan.split_norm_parts(a) > 1:
                return split_norm_cost(a, e, k == "layer_norm", t)
            return t.norm_cycles(rows, cols, e, shift=k == "layer_norm"), 0, 0, 0
        if k == "cumsum":
            return t.scan_rows_cycles(rows, cols, e), 0, 0, 0
        return t.reduce_rows_cycles(rows, cols, e), 0, 0, 0


FAMILY = RowwiseFamily()

__all__ = ["FAMILY", "RowwiseFamily", "column_block_layouts", "rotated_rows", "split_norm_cost"]
