"""The data-movement family: ops that move values between tiles or re-view them, no arithmetic —
transposes (a rank-2 `plan.transpose` kernel, or one exchange for any permutation keeping the
last axis, `plan.permute`), reshapes (`plan.reshape`), `graph.slice`, `graph.pad` and
`graph.concat` as `plan.window` exchanges; and the pricing of the planner's own layout
conversions (`plan.rearrange`)."""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, Float16Type, TensorType, f32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import KERNELS
from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.target import Target
from ipu.transforms.plan.families.base import Family, OpCost
from ipu.transforms.plan.layouts import leading_layout, plan_type, row_layout
from ipu.transforms.plan.pricing import conversion_cost, esize_of
from ipu.transforms.plan.state import Planner, value_attr


def _plan_transpose(p: Planner, op: graph.TransposeOp, index: int) -> None:
    perm = tuple(op.perm.get_values())
    if len(perm) >= 3 and perm[-1] == len(perm) - 1:
        _plan_permute(p, op, perm)
        return
    x = p.get(op.input, None, op.name)
    lay = x.type.layout
    if len(lay.shape) != 2:
        raise DiagnosticException(
            f"plan-ops: transpose {list(perm)} of rank {len(perm)} is not planned (rank 2, or any rank with the "
            "last axis kept last)"
        )
    rows, cols = lay.shape
    if lay.tiles * 4 < p.target.tiles and rows * 4 < p.target.tiles and cols >= 4 * lay.tiles:
        # few rows (an image's channels before it goes channels last): cut the columns instead
        lay = Layout(lay.shape, (min(p.target.tiles, cols // 2),), ((), (0,)))
        x = p.get(op.input, plan_type(op.input.type, lay), "transpose of few rows")
        lay = x.type.layout
    if lay.block[0] % 2:
        al = (2, lay.align[1] if lay.align else 1)
        lay = Layout(lay.shape, lay.grid, lay.split, -1, lay.first_tile, al)
        x = p.get(op.input, plan_type(op.input.type, lay, x.type.layout_attr.memory.data), "transpose alignment")
    out = Layout(lay.shape[::-1], lay.grid, lay.split[::-1], -1, lay.first_tile, (lay.block[1], lay.block[0]))
    r = plan.TransposeOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, out)],
        attributes=value_attr(op),
    )
    p.set(op.result, p.emit(r).results[0])


def lead_axis(shape: tuple[int, ...]) -> int:
    """The first axis before the last one that is not 1 (0 if there is none)."""
    return next((i for i, d in enumerate(shape[:-1]) if d != 1), 0)


def _plan_permute(p: Planner, op: graph.TransposeOp, perm: tuple[int, ...]) -> None:
    """A permutation that keeps the last axis: one exchange into the result's row layout."""
    x = p.get(op.input, None, op.name)
    if x.type.layout.partial >= 0:
        x = p.get(op.input, plan_type(op.input.type, row_layout(x.type.layout.shape, p.target.tiles)), op.name)
    out = p.desired.get(op.result) or plan_type(
        op.result.type, leading_layout(tuple(op.result.type.get_shape()), p.target.tiles)
    )
    r = plan.PermuteOp.create(operands=[x], result_types=[out], attributes={"perm": op.perm, **value_attr(op)})
    p.set(op.result, p.emit(r).results[0])


def _plan_reshape(p: Planner, op: graph.ReshapeOp, index: int) -> None:
    target = p.target
    a, r = tuple(op.input.type.get_shape()), tuple(op.result.type.get_shape())
    if not a or not r:  # a scalar at the function boundary, carried as [1]: only unit axes change
        x = p.get(op.input, None, op.name)
        view = x.type.layout if x.type.layout.shape == (r or (1,)) else plan.unit_axis_view(x.type.layout, r or (1,))
        if view is None:  # its one element held with a unit axis split: gather it unsplit first
            whole = Layout(x.type.layout.shape, (1,), ((),) * len(x.type.layout.shape))
            x = p.get(op.input, plan_type(op.input.type, whole), op.name)
            view = plan.unit_axis_view(whole, r or (1,))
            assert view is not None, "an unsplit one-element layout views as any unit shape"
        if view == x.type.layout:  # the same value (its name stays the input's)
            p.current[op.result], p.cache[(op.result, x.type)] = x, x
        else:
            # a scalar result names no checkpoint: the device's [1] is not the graph's shape
            res = plan.ReshapeOp.create(
                operands=[x], result_types=[plan_type(op.result.type, view)], attributes=value_attr(op) if r else {}
            )
            p.set(op.result, p.emit(res).results[0])
        return
    if p.has(op.input):  # only unit axes change: the value stays where it is
        view = plan.unit_axis_view(p.current[op.input].type.layout, r)
        if view is not None:
            x = p.get(op.input, None, op.name)
            # a scalar result names no checkpoint: the device's [1] is not the graph's shape
            res = plan.ReshapeOp.create(
                operands=[x], result_types=[plan_type(op.result.type, view)], attributes=value_attr(op) if r else {}
            )
            p.set(op.result, p.emit(res).results[0])
            return
    # each side is split along its first non-unit leading axis (an ONNX [1, C, H, W] input and
    # its row collapse [C*H, W] both cut in whole rows): with only unit axes before it, each
    # tile's block is one contiguous element range, the same on both sides
    ax, rx = lead_axis(a), lead_axis(r)
    g = math.gcd(a[ax], r[rx]) if len(a) > 1 and len(r) > 1 else 1
    while g > target.tiles:
        g = max(d for d in range(1, target.tiles + 1) if g % d == 0)
    # layouts pad an odd last axis to whole 32-bit words of fp16 (for every dtype): a block copy
    # is right when both sides pad their rows alike (the same last axis) or not at all; otherwise
    # map-tiles re-cuts each tile's rows (the `repad` kernel), the same elements in order
    ia = Layout(a, (g,), tuple((0,) if i == ax else () for i in range(len(a))))
    ir = Layout(r, (g,), tuple((0,) if i == rx else () for i in range(len(r))))
    if g < target.tiles // 4:  # few tiles (a batch axis leads): cut several leading axes instead
        cands = [
            prefix_split_layouts(a, r, target.tiles),
            uneven_split_layouts(a, r, target.tiles),
            shared_prefix_layouts(a, r, target.tiles),
        ]
        wide = max((c for c in cands if c is not None), key=lambda c: c[0].tiles, default=None)
        if wide is not None and wide[0].tiles > g:
            ia, ir = wide
    x = p.get(op.input, plan_type(op.input.type, ia), op.name)
    res = plan.ReshapeOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, ir)],
        attributes=value_attr(op),
    )
    p.set(op.result, p.emit(res).results[0])


def prefix_split(shape: tuple[int, ...], g: int) -> Layout | None:
    """`shape` cut into `g` contiguous equal element ranges by its leading axes (each fully
    split, the last of them possibly partly; the last axis whole), or None."""
    grid: list[int] = []
    split: list[tuple[int, ...]] = []
    rem = g
    for n in shape[:-1]:
        if rem == 1 or n == 1:
            split.append(())
            continue
        k = n if rem % n == 0 else (rem if n % rem == 0 else 0)
        if not k:
            return None
        split.append((len(grid),))
        grid.append(k)
        rem //= k
    if rem != 1:
        return None
    return Layout(shape, tuple(grid) or (1,), (*split, ()))


def prefix_split_layouts(a: tuple[int, ...], r: tuple[int, ...], tiles: int) -> tuple[Layout, Layout] | None:
    """The layouts of a reshape's two sides cut into the most (at most `tiles`) contiguous
    equal element ranges by their leading axes, or None."""
    rows = math.gcd(math.prod(a[:-1]), math.prod(r[:-1]))
    for g in range(min(rows, tiles), 1, -1):
        if rows % g:
            continue
        la, lr = prefix_split(a, g), prefix_split(r, g)
        if la is not None and lr is not None:
            return la, lr
    return None


def shared_prefix_layouts(a: tuple[int, ...], r: tuple[int, ...], tiles: int) -> tuple[Layout, Layout] | None:
    """A reshape that regroups only what follows two leading axes both sides share ([N, H, W, C]
    -> [N, H, W / 2, 2 C]: each image row's bytes stay in order) cut the same way on both sides:
    the first axis whole a tile, the second into as many (possibly uneven) blocks as the tiles
    left allow. Every tile then holds the same bytes on both sides; None when the sides share no
    such prefix or it gives fewer than two tiles."""
    if len(a) < 3 or len(r) < 3 or a[:2] != r[:2] or a[0] > tiles:
        return None
    n, h = a[0], a[1]
    parts = min(h, tiles // n)
    block = -(-h // parts)
    used = -(-h // block)
    if n * used < 2:
        return None
    la, lr = (
        Layout(sh, (n, used), ((0,), (1,), *(() for _ in sh[2:])), align=(1, block, *(1 for _ in sh[2:])))
        for sh in (a, r)
    )
    if la.block_size(1) != block or lr.block_size(1) != block:
        return None
    return la, lr


def uneven_split_layouts(a: tuple[int, ...], r: tuple[int, ...], tiles: int) -> tuple[Layout, Layout] | None:
    """The layouts of a reshape's two sides cut along their lead axes into blocks of equal
    element ranges that need not divide the axes evenly (a cropped [1, 31, 31, C] and its row
    collapse [961, C]: blocks of 2 x 31 rows and of 62 rows, the last tile's partly padding on
    both sides alike), on as many tiles as possible; None when no such cut uses two tiles."""
    if len(a) < 2 or len(r) < 2 or a[-1] != r[-1]:
        return None
    ax, rx = lead_axis(a), lead_axis(r)
    inner_a, inner_r = math.prod(a[ax + 1 : -1]), math.prod(r[rx + 1 : -1])
    for parts in range(min(tiles, a[ax]), 1, -1):
        block_a = -(-a[ax] // parts)
        used = -(-a[ax] // block_a)
        if used < 2 or (block_a * inner_a) % inner_r:
            continue
        block_r = block_a * inner_a // inner_r
        if -(-r[rx] // block_r) != used:
            continue
        la, lr = (
            Layout(
                sh,
                (used,),
                tuple((0,) if i == x else () for i in range(len(sh))),
                align=tuple(blk if i == x else 1 for i in range(len(sh))),
            )
            for sh, x, blk in ((a, ax, block_a), (r, rx, block_r))
        )
        if la.block_size(ax) == block_a and lr.block_size(rx) == block_r:
            return la, lr
    return None


def _source(p: Planner, v: SSAValue, what: str) -> SSAValue:
    """`v` planned and not a partial sum (a window moves whole values)."""
    x = p.get(v, None, what)
    if x.type.layout.partial >= 0:
        x = p.get(v, plan_type(v.type, row_layout(x.type.layout.shape, p.target.tiles)), what)
    return x


def _result_type(p: Planner, op: Operation) -> plan.PlanTensorType:
    r = op.results[0]
    return p.desired.get(r) or plan_type(r.type, leading_layout(tuple(r.type.get_shape()), p.target.tiles))


def _as(p: Planner, x: SSAValue, el: Attribute) -> SSAValue:
    """`x` converted to element type `el` in its own layout (`plan.cast`)."""
    t = plan.PlanTensorType(TensorType(el, x.type.shape), x.type.layout_attr)
    return p.emit(plan.CastOp.create(operands=[x], result_types=[t])).results[0]


def _window(p: Planner, op: Operation, x: SSAValue, offsets: tuple[int, ...], out: plan.PlanTensorType) -> SSAValue:
    """`x`'s window `offsets` into `out`: one `plan.window` (an exchange). A half-precision
    window that moves the last axis by an odd element (2-byte elements move as whole words) is
    taken in f32 between two casts, which is exact."""
    el = x.type.tensor.element_type
    if plan.window_misaligned(x.type.shape, out.shape, offsets, el):
        if not isinstance(el, Float16Type):
            raise DiagnosticException(
                f"plan-ops: {op.name} of {list(x.type.shape)} -> {list(out.shape)} at {list(offsets)} in {el} changes "
                "the last axis at an odd element (2-byte elements move as whole words: even offsets and sizes only)"
            )
        wide = plan.PlanTensorType(TensorType(f32, out.shape), out.layout_attr)
        return _as(p, _window(p, op, _as(p, x, f32), offsets, wide), el)
    w = plan.WindowOp.create(
        operands=[x], result_types=[out], attributes={"offsets": DenseArrayBase.from_list(i64, offsets)}
    )
    return p.emit(w).results[0]


def plan_slice(p: Planner, op: graph.SliceOp, index: int) -> None:
    x = _source(p, op.input, op.name)
    v = _window(p, op, x, op.offsets(), _result_type(p, op))
    v.owner.attributes.update(value_attr(op))
    p.set(op.result, v)


def plan_pad(p: Planner, op: graph.PadOp, index: int) -> None:
    x = _source(p, op.input, op.name)
    v = _window(p, op, x, tuple(-o for o in op.offsets()), _result_type(p, op))
    v.owner.attributes.update(value_attr(op))
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
        acc.owner.attributes.update(value_attr(op))
    p.set(op.result, acc)


class DataMoveFamily(Family):
    """Transposes, reshapes, slices, pads and concatenations; the planner's rearranges."""

    name = "datamove"
    graph_ops: ClassVar[tuple[type[Operation], ...]] = (
        graph.TransposeOp,
        graph.ReshapeOp,
        graph.SliceOp,
        graph.PadOp,
        graph.ConcatOp,
    )
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (
        plan.RearrangeOp,
        plan.PermuteOp,
        plan.WindowOp,
        plan.TransposeOp,
        plan.ReshapeOp,
    )

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        if isinstance(op, graph.TransposeOp):
            _plan_transpose(p, op, index)
        elif isinstance(op, graph.ReshapeOp):
            _plan_reshape(p, op, index)
        elif isinstance(op, graph.SliceOp):
            plan_slice(p, op, index)
        elif isinstance(op, graph.PadOp):
            plan_pad(p, op, index)
        else:
            plan_concat(p, op, index)

    def cost(self, op: Operation, t: Target) -> OpCost:
        if isinstance(op, plan.TransposeOp):
            m, n = op.input.type.layout.block
            return KERNELS["transpose"].cycles(t, {"m": m, "n": n}, esize_of(op.result.type)), 0, 0, 0
        if isinstance(op, plan.ReshapeOp):  # `copy` (or `repad`): a Cast1D of the block; a view: none
            if op.is_view():
                return 0, 0, 0, 0
            return KERNELS["copy"].cycles(t, {"elements": op.result.type.layout.block_elements}), 0, 0, 0
        perm = op.permutation() if isinstance(op, plan.PermuteOp) else None
        x, f = conversion_cost(op.input.type, op.result.type, t, perm)
        return 0, x, 1, f


FAMILY = DataMoveFamily()

__all__ = ["FAMILY", "DataMoveFamily", "lead_axis", "plan_concat", "plan_pad", "plan_slice"]
