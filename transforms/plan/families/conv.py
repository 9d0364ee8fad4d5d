"""The convolution family: `graph.conv` with one group and at least 16 input channels as an
implicit GEMM on the AMP, the way PopLibs plans it (`plan.conv`, with `plan.reduce` summing an
input-channel split's partials); a depthwise one (a group per channel) on the vector path
(`plan.conv` with `depthwise`, the `dw_conv` kernel: no contraction, so no AMP and no partials).
The grid splits the batch, the output rows, the output channels
and the input channels (PopLibs' batchSplit, fieldSplit, outChanSplit and inChanSplit); each
tile receives the input rows its output rows reach, halo included, in one exchange and loops
the kernel positions (`amp_conv`). The filters are stored once, spread over the grid, and
fetched into place before each run (PopLibs keeps them in the convolution's own layout and
broadcasts them over the field split the same way). Its decision point is the grid,
`#plan.choice<conv, grid = [batch, rows, out channels, in channels]>`.

A depthwise convolution's grid splits the batch, the output rows and the channels (dimension 3
is 1), the patch, filters and result all split their channels alike; its filters (a [KH, KW]
tap per channel) stay where the grid reads them, replicated over the batch and rows.

Other grouped and few-channel convolutions are rewritten by `expand-windows` before planning
(`ConvGeometry.planned` says which are planned here)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from xdsl.dialects import builtin
from xdsl.dialects.builtin import DenseArrayBase, TensorType, i64
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import KERNELS
from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout, Windows, conv_patch, conversion_load, patch_covered
from ipu.target import Target
from ipu.transforms.plan.budget import TargetMemo, divisor_like, op_budget
from ipu.transforms.plan.families.base import (
    DecisionFamily,
    Decisions,
    OpCost,
    check_tiles,
    grid_text,
    partials_field,
    pinned_partials,
)
from ipu.transforms.plan.families.gemm import block_parts
from ipu.transforms.plan.layouts import plan_type
from ipu.transforms.plan.pricing import esize_of, stage_fill_cycles
from ipu.transforms.plan.state import Planner, describe, value_name

Grid = tuple[int, int, int, int]

# ---------------------------------------------------------------- layouts


@dataclass(frozen=True)
class ConvLayouts:
    """The layouts one grid emits (the plan is priced from these)."""

    filters: Layout  # [KH, KW, C, O]: input and output channels split, replicated over batch and rows
    home: Layout  # the filters stored once: blocks of whole kernels over >= HOME_CHANNELS inputs
    partial: Layout  # the conv's result (partial over grid dimension 3 when the input channels split)
    result: Layout  # after plan.reduce (== partial without a channel split)


HOME_CHANNELS = 64
"""Input channels a stored filter block holds at least (all of them below that). A tile computing
a block of output channels receives its filters from C / (block) home tiles, one transfer per
kernel position each: ResNet-50's 3x3 filters cut one channel a home tile cost each receiver 576
transfers (16 KB of exchange instructions) for one fetch."""


def _home_blocks(c: int) -> int:
    """Home blocks of `c` input channels: the most that keep HOME_CHANNELS each, dividing `c`."""
    return max((d for d in range(1, c // HOME_CHANNELS + 1) if c % d == 0), default=1)


def conv_layouts(geo: graph.ConvGeometry, grid: Grid, first_tile: int = 0, home_first: int = 0) -> ConvLayouts:
    """The layouts of one grid; the filters' home starts at tile `home_first` (the planner spreads
    the homes of successive convolutions over the chip)."""
    gn, gh, go, gc = grid
    out = (geo.n, geo.out_h, geo.out_w, geo.o)
    if geo.depthwise:
        result = Layout(out, grid, ((0,), (1,), (), (2,)), -1, first_tile)
        filters = Layout((geo.kh, geo.kw, 1, geo.o), grid, ((), (), (), (2,)), -1, first_tile)
        return ConvLayouts(filters, filters, result, result)
    f_shape = (geo.kh, geo.kw, geo.c, geo.o)
    partial = Layout(out, grid, ((0,), (1,), (), (2,)), 3 if gc > 1 else -1, first_tile)
    result = Layout(out, grid, ((0,), (1, 3), (), (2,)), -1, first_tile) if gc > 1 else partial
    filters = Layout(f_shape, grid, ((), (), (3,), (2,)), -1, first_tile)
    if gn * gh > 1:  # filters replicated over batch and rows: stored once, fetched each run
        hc = _home_blocks(geo.c)
        home = Layout(f_shape, (hc, go), ((), (), (0,), (1,)), -1, home_first)
    else:
        home = filters
    return ConvLayouts(filters, home, partial, result)


# ---------------------------------------------------------------- candidates


@dataclass(frozen=True)
class ConvChoice:
    grid: Grid
    cycles: int
    exchange_cycles: int
    bytes_per_tile: int
    home_bytes: int  # the filters' stored block per tile
    half: bool = False  # fp16 partials
    half_default: bool = False  # the function's partials (a choice records only a departure)


def conv_candidate(geo: graph.ConvGeometry, esize: int, target: Target, grid: Grid, half: bool = False) -> ConvChoice:
    """One grid priced: the kernel, the patch and filter exchange, the partials' reduce (`half`:
    fp16 partials, the AMP at 16 conv units)."""
    gn, gh, go, gc = grid
    lays = conv_layouts(geo, grid)
    dw = geo.depthwise
    patch, windows = conv_patch(
        (geo.n, geo.h, geo.w, geo.c),
        lays.partial,
        (geo.kh, geo.kw),
        geo.strides,
        geo.dilations,
        geo.pads,
        2 if dw else 3,
    )
    par = plan.conv_kernel_params(patch, lays.partial, (geo.kh, geo.kw), geo.strides, geo.dilations, dw)
    x_bytes = patch.block_elements * esize
    fill = patch_fill_cycles((geo.n, geo.h, geo.w, geo.c), patch, windows, esize, target)
    if dw:
        work = x_bytes + (lays.filters.block_elements + lays.partial.block_elements) * esize
        comp = fill + target.dw_conv_cycles(par["n"] * par["oh"], par["ow"], par["c"], geo.kh, geo.kw, esize)
        exch = x_bytes // 4 + target.phase_overhead_cycles()
        return ConvChoice(grid, comp + exch, exch, work, lays.filters.block_elements * esize)
    f_bytes = lays.filters.block_elements * esize
    pe = 2 if half else 4
    out_e = pe if gc > 1 else esize
    p_bytes = lays.partial.block_elements * out_e
    # per tile of the grid on average: successive convolutions' homes take turns over the chip
    home = -(-lays.home.block_elements * lays.home.tiles * esize // math.prod(grid))
    work = x_bytes + f_bytes + p_bytes
    comp = fill + target.amp_conv_cycles(par["n"] * par["oh"], par["ow"], par["c"], par["o"], geo.kh, geo.kw, pe)
    exch = (x_bytes + (f_bytes if lays.home != lays.filters else 0)) // 4 + target.phase_overhead_cycles()
    if gc > 1:
        r = lays.result.block_elements
        work = max(work, 2 * p_bytes + r * esize)
        exch += (p_bytes - p_bytes // gc) // 4 + target.phase_overhead_cycles()
        comp += target.reduce_cycles(gc, r, esize, pe) + stage_fill_cycles(lays.partial, lays.result, pe, target)
    return ConvChoice(grid, comp + exch, exch, work, home, half)


def patch_fill_cycles(x_shape: tuple[int, ...], patch: Layout, windows: Windows, esize: int, target: Target) -> int:
    """The zero fill of a window op's patch before its move (map-tiles zeroes the whole patch
    when it holds padding or reaches past the input), 0 when every element is the input's."""
    if patch_covered(x_shape, patch, windows):
        return 0
    return KERNELS["zero"].cycles(target, {"elements": patch.block_elements}, esize)


def channel_grids(n: int, out_h: int, c: int, tiles: int) -> list[Grid]:
    """Grids of a vector-path window op (a depthwise convolution, a max pool): batch parts, every
    distinct output row split, channels in blocks of 4 (whole 64-bit vectors of halves)."""
    out: list[Grid] = []
    for gn in divisor_like(n, tiles):
        for gh in block_parts(out_h, tiles // gn):
            out += [(gn, gh, gc, 1) for gc in block_parts(-(-c // 4), tiles // (gn * gh))]
    return out


def conv_grids(geo: graph.ConvGeometry, tiles: int) -> list[Grid]:
    """Batch parts, every distinct output row split, output channels in blocks of 16 (whole AMP
    output groups) and input channels in blocks of a multiple of 16, over at most `tiles`; a
    depthwise convolution's channels in blocks of 4 (whole 64-bit vectors of halves)."""
    if geo.depthwise:
        return channel_grids(geo.n, geo.out_h, geo.c, tiles)
    out: list[Grid] = []
    o_groups, c_groups = -(-geo.o // 16), geo.c // 16
    for gn in divisor_like(geo.n, tiles):
        for gh in block_parts(geo.out_h, tiles // gn):
            for go in block_parts(o_groups, tiles // (gn * gh)):
                for gc in divisor_like(c_groups, tiles // (gn * gh * go)):
                    if geo.c % gc or (geo.c // gc) % 2:
                        continue
                    out.append((gn, gh, go, gc))
    return out


CONV_MEMO: TargetMemo[tuple[ConvChoice, ...]] = TargetMemo(256)


def conv_candidates(geo: graph.ConvGeometry, esize: int, target: Target, half: bool = False) -> tuple[ConvChoice, ...]:
    found, hit = CONV_MEMO.get((geo, esize, half), target)
    if found and hit is not None:
        return hit
    out = cheapest_first(conv_candidate(geo, esize, target, g, half) for g in conv_grids(geo, target.tiles))
    CONV_MEMO.put((geo, esize, half), target, out)
    return out


@dataclass(frozen=True)
class ConvRequest:
    """A convolution's decision point: its geometry and the bytes per tile held elsewhere."""

    op: graph.ConvOp
    index: int
    geo: graph.ConvGeometry
    esize: int
    reserved: int
    half_default: bool = False  # the function's AMP ops take fp16 partials (half operands only)


def _fits(c: ConvChoice, room: float) -> bool:
    """Whether `c` fits the per-op budget `room` with its fetched filters' home held beside it."""
    return c.bytes_per_tile + c.home_bytes <= room


# ---------------------------------------------------------------- emission


def _plan_conv(p: Planner, op: graph.ConvOp, index: int) -> None:
    geo = op.geometry()
    if not geo.planned:
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: a convolution of {geo.groups} groups and {geo.c} input channels is "
            "planned through expand-windows (the conv family takes one group of at least 16 input channels, or "
            "one group per channel)"
        )
    esize = op.input.type.element_type.bitwidth // 8
    reserved = p.resident + p.live_bytes(exclude=(op.input, op.filters))
    half = not geo.depthwise and p.half_default(op.input, op.filters)
    c = p.chooser.decide(CONV, ConvRequest(op, index, geo, esize, reserved, half), p.target)
    lays = conv_layouts(geo, c.grid)
    if lays.home != lays.filters:  # the next run of tiles for this home, wrapping at the chip's end
        first = p.home_cursor if p.home_cursor + lays.home.tiles <= p.target.tiles else 0
        lays = conv_layouts(geo, c.grid, home_first=first)
        p.home_cursor = (first + lays.home.tiles) % p.target.tiles
    if p.is_weight(op.filters) and not p.has(op.filters):  # stored once in its home, fetched from there
        p.resident += c.home_bytes * p.weight_copies(op.filters)
        if lays.home != lays.filters:
            p.get(op.filters, plan_type(op.filters.type, lays.home), "weight home")
    memory = "standard" if geo.depthwise else "interleaved"  # the AMP streams its filters from interleaved
    w = p.get(op.filters, plan_type(op.filters.type, lays.filters, memory), "weight fetch")
    x = p.get(op.input, None, op.name)
    partial = c.grid[3] > 1
    el = (builtin.f16 if c.half else builtin.f32) if partial else op.result.type.element_type
    r_t = plan_type(TensorType(el, op.result.type.get_shape()), lays.partial, memory)
    conv = plan.ConvOp.create(
        operands=[x, w],
        result_types=[r_t],
        attributes={
            "strides": DenseArrayBase.from_list(i64, geo.strides),
            "dilations": DenseArrayBase.from_list(i64, geo.dilations),
            "pads": DenseArrayBase.from_list(i64, geo.pads),
            **({"depthwise": builtin.UnitAttr()} if geo.depthwise else {}),
            **({"half_partials": builtin.UnitAttr()} if c.half else {}),
            **({} if partial else {plan.VALUE_ATTR: builtin.StringAttr(value_name(op))}),
        },
    )
    g = p.emit(conv).results[0]
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        grid=grid_text(c.grid),
        estimated_cycles=c.cycles,
        estimated_exchange_cycles=c.exchange_cycles,
        bytes_per_tile=c.bytes_per_tile,
        **({} if geo.depthwise else {"partials": "f16" if c.half else "f32"}),
    )
    if partial:
        g.name_hint = f"{op.result.name_hint or 'conv'}_partial"
        g = p.emit(plan.ReduceOp(g, plan_type(op.result.type, lays.result), value_name(op))).results[0]
    p.set(op.result, g)


@functools.lru_cache(maxsize=1024)
def patch_words(x: Layout, patch: Layout, windows: Windows, esize: int, tiles: int) -> int:
    """Words the busiest tile receives in a conv's patch move (every plan the search prices
    asks again for the same few)."""
    _, recv = conversion_load(x, patch, esize, None, tiles, windows)
    return int(recv.max(initial=0))


def window_op_cost(op: plan.ConvOp | plan.PoolOp, kernel: str, t: Target) -> OpCost:
    """A window op's cost: its kernel and its patch's zero fill, and the patch's exchange (the
    busiest tile's words received)."""
    patch, windows = op.patch()
    x, es = op.input.type.layout, esize_of(op.input.type)
    comp = KERNELS[kernel].cycles(t, op.kernel_params(), esize_of(op.result.type))
    fill = patch_fill_cycles(x.shape, patch, windows, es, t)
    return comp + fill, patch_words(x, patch, windows, es, t.tiles) + t.phase_overhead_cycles(), 1, 0


def cheapest_first(cands: Iterable[Any]) -> tuple[Any, ...]:
    """A window op's priced candidates as `cheapest_fitting` takes them: by cycles, then bytes per
    tile, ties in their grids' order (the families memoize them so, and a choice only filters)."""
    return tuple(sorted(cands, key=lambda c: (c.cycles, c.bytes_per_tile)))


def cheapest_fitting(req: Any, cands: Sequence[Any], fits: Callable[[Any], bool], t: Target, d: Decisions) -> Any:
    """The search's rank (0: the cheapest) of a window op's candidates that `fits` (given cheapest
    first: cycles, then bytes per tile), recording how many fit; a diagnostic naming the op and
    its leanest candidate when none does."""
    ok = [c for c in cands if fits(c)]
    if not ok:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {t.name}: {describe(req.op, req.index)} needs at least "
            f"{best.bytes_per_tile} bytes per tile (grid {grid_text(best.grid)}); per-op budget is "
            f"{int(op_budget(t, req.reserved))} of {t.memory_size} bytes ({req.reserved} held by live values)"
        )
    d.counts[req.index] = len(ok)
    return ok[min(d.ranks.get(req.index, 0), len(ok) - 1)]


class ConvFamily(DecisionFamily):
    """`graph.conv` (one group, at least 16 input channels; or depthwise) -> `plan.conv` (+ `plan.reduce`)."""

    name = "conv"
    graph_ops: ClassVar[tuple[type[Operation], ...]] = (graph.ConvOp,)
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (plan.ConvOp,)
    impls = ("conv",)

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        assert isinstance(op, graph.ConvOp)
        _plan_conv(p, op, index)

    def cost(self, op: Operation, t: Target) -> OpCost:
        """The kernel, and the exchange of the patches (the busiest tile's words received)."""
        assert isinstance(op, plan.ConvOp)
        return window_op_cost(op, op.kernel, t)

    def choose(self, req: ConvRequest, t: Target, d: Decisions) -> ConvChoice:
        cands = conv_candidates(req.geo, req.esize, t, req.half_default)
        room = op_budget(t, req.reserved)
        c = cheapest_fitting(req, cands, lambda c: _fits(c, room), t, d)
        return replace(c, half_default=req.half_default)

    def resolve(self, req: ConvRequest, attr: plan.ChoiceAttr, t: Target) -> ConvChoice:
        where = describe(req.op, req.index)
        grid = attr.grid_dims
        check_tiles(where, grid, t)
        grids = conv_grids(req.geo, t.tiles)
        if grid not in grids:
            chans = (
                f"channels in blocks of 4 of {req.geo.c} and 1 part in dimension 3 (depthwise)"
                if req.geo.depthwise
                else f"output channels in blocks of 16 of {req.geo.o}, input channels in blocks of a multiple of 16 "
                f"of {req.geo.c}"
            )
            raise DiagnosticException(
                f"plan-ops: {where}: conv grid {grid_text(grid)} is not one the planner can emit: batch parts of "
                f"{req.geo.n}, row blocks of {req.geo.out_h} output rows, {chans}"
            )
        half = pinned_partials(where, attr, req.half_default, req.esize)
        if half and req.geo.depthwise:
            raise DiagnosticException(f"plan-ops: {where}: depthwise convolutions have no partials (partials = f16)")
        c = conv_candidate(req.geo, req.esize, t, (grid[0], grid[1], grid[2], grid[3]), half)
        if not _fits(c, op_budget(t, req.reserved)):
            raise DiagnosticException(
                f"plan-ops: {where}: conv grid {grid_text(grid)} needs {c.bytes_per_tile} bytes per tile; the "
                f"per-op budget is {int(op_budget(t, req.reserved + c.home_bytes))} of {t.memory_size} bytes"
            )
        return replace(c, half_default=req.half_default)

    def attr(self, choice: ConvChoice) -> plan.ChoiceAttr:
        return plan.ChoiceAttr("conv", choice.grid, partials=partials_field(choice.half, choice.half_default))


CONV = ConvFamily()
FAMILY = CONV

__all__ = [
    "CONV",
    "FAMILY",
    "ConvChoice",
    "ConvFamily",
    "ConvLayouts",
    "ConvRequest",
    "channel_grids",
    "cheapest_first",
    "cheapest_fitting",
    "conv_candidate",
    "conv_candidates",
    "conv_grids",
    "conv_layouts",
    "patch_fill_cycles",
    "patch_words",
    "window_op_cost",
]
