"""What the plan emitter knows while it walks a function.

`Planner` holds the layout bookkeeping (which plan value holds each graph value, in which
layouts, how many bytes per tile are live or held by resident weights) and the chooser that
decides each decision point (`families.base.CostChooser` by cost, `RecordedChooser` from the
recorded `plan.choice`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, StringAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.dialects.value_names import DERIVED
from ipu.log import log_event
from ipu.target import Target
from ipu.transforms.plan.layouts import default_layout, plan_type, scalar_layout
from ipu.transforms.plan.pricing import esize_of

CHOICE_ATTR = "plan.choice"  # a decision point's implementation (#plan.choice<…>)
LAYOUT_ATTR = "plan.layout"  # a pinned result layout (#plan.layout<…>)
CARRY_ATTR = "plan.carry"
"""On a graph.repeat: the layout each carried value travels in ([#plan.layout<…> or unit, one per
carried value]; unit: its entry layout). Recorded by plan-decide where the search carried a value
as the body yields it, and honoured as a pin (`walk.carry_pins`)."""
PARTIALS_ATTR = "plan.partials"  # on a graph function: its AMP ops' default partials type ("f16": half)
SPREAD_ATTR = "plan.spread"  # on a graph function: "on", "off" or "auto" (`function_spread`)
LINK_INPUTS_ATTR = "plan.link_inputs"
"""On a graph function: the inputs another chip writes over the IPU-Links (a pipeline stage's
boundary values). The host writes an input in whatever layout its first reader wants, replicas
and all; a link carries every replica's bytes, so such an input arrives once, in the default
spread layout, and any other layout its readers want is a rearrangement on the chip, priced."""
RESERVE_ATTR = "plan.reserve"
"""On a graph function: bytes per tile its plan leaves free beyond `plan.cost.PLACEMENT_SLACK`
(`function_reserve`). The plan's peaks count bytes; place-storage needs each buffer in one
contiguous range, and `pipeline.run_ladder` sets this from what a placement missed, to plan again."""
SPREAD_MODES = ("auto", "on", "off")
SPREAD_FROM = 0.4
"""`auto` spreads weights when they would average this share of a tile's memory or more."""


def function_partials(f: Operation) -> bool:
    """Whether graph function `f` defaults its AMP ops to fp16 partials (`PARTIALS_ATTR`, "f32"
    or "f16"; absent: f32), or a diagnostic naming a value that is neither."""
    have = f.attributes.get(PARTIALS_ATTR)
    if have is None:
        return False
    if not isinstance(have, StringAttr) or have.data not in plan.PARTIALS:
        raise DiagnosticException(
            f"plan-ops: {PARTIALS_ATTR} must be one of {', '.join(repr(x) for x in plan.PARTIALS)}, got {have}"
        )
    return have.data == "f16"


def first_fit(load: np.ndarray, used: int, per_tile: int) -> int:
    """Where a weight of `used` consecutive tiles, `per_tile` bytes each, goes on tiles holding
    `load` bytes: the window whose busiest tile holds least, then whose tiles hold least in all
    (the first of those); `load` is updated."""
    windows = np.lib.stride_tricks.sliding_window_view(load, used)
    first = int(np.lexsort((windows.sum(axis=1), windows.max(axis=1)))[0])
    load[first : first + used] += per_tile
    return first


def pack_weights(weights: list[tuple[int, int]], tiles: int, fixed: Sequence[tuple[int, int, int]] = ()) -> list[int]:
    """First tiles for `weights` ((tiles, bytes per tile) in program order) placed heaviest
    first, each by `first_fit`, around the `fixed` ones ((first, tiles, bytes per tile)): a heavy
    weight placed late finds no light window left."""
    load = np.zeros(tiles, np.int64)
    for first, used, per_tile in fixed:
        load[first : first + used] += per_tile
    places = [0] * len(weights)
    for i in sorted(range(len(weights)), key=lambda i: (-weights[i][1], -weights[i][0], i)):
        used, per_tile = weights[i]
        places[i] = first_fit(load, used, per_tile) if used < tiles else 0
    return places


def function_spread(f: Operation, target: Target, heavy: bool | None = None) -> bool:
    """Whether the planner spreads `f`'s resident weights over the machine (`Planner.spread_weight`):
    `SPREAD_ATTR` on, off (absent), or auto: when the function's weights average `SPREAD_FROM`
    of a tile's memory or more, where the low tiles every layout starts at would overflow first.
    Off by default: spread grids are slower and a gemm moved off tile 0 moves its operands and
    result too (an exchange the plan does not price), so `pipeline.run_ladder` turns it on only
    for a model that does not fit without it. `heavy`: `heavy_weights(f, target)`, if known."""
    have = f.attributes.get(SPREAD_ATTR)
    mode = have.data if isinstance(have, StringAttr) else "off" if have is None else None
    if mode not in SPREAD_MODES:
        raise DiagnosticException(f"plan-ops: {SPREAD_ATTR} must be one of {', '.join(SPREAD_MODES)}, got {have}")
    if mode != "auto":
        return mode == "on"
    return heavy_weights(f, target) if heavy is None else heavy


def function_reserve(f: Operation) -> int:
    """`RESERVE_ATTR` of `f` (0 when absent): bytes per tile its plan keeps free for placement."""
    have = f.attributes.get(RESERVE_ATTR)
    if have is None:
        return 0
    if not isinstance(have, IntegerAttr) or have.value.data < 0:
        raise DiagnosticException(
            f"plan-ops: {RESERVE_ATTR} must be a non-negative integer (bytes per tile), got {have}"
        )
    return have.value.data


def heavy_weights(f: Operation, target: Target) -> bool:
    """`f`'s weights average `SPREAD_FROM` of a tile's memory or more: memory, not cycles, is
    what their plan must save first."""
    weights = sum(
        math.prod(op.result.type.get_shape()) * op.result.type.element_type.bitwidth // 8
        for op in f.walk()
        if isinstance(op, graph.ParameterOp)
    )
    return weights >= SPREAD_FROM * target.memory_size * target.tiles


HOIST_BYTES = 4096
"""Largest block (bytes per tile) of a loop-invariant conversion hoisted out of a repeat."""

TRANSIENT = ("weight fetch", "weight home")
"""Conversions never hoisted: a weight stored spread is fetched where it is used, to be freed."""


def defined_in(v: SSAValue, block: Block) -> bool:
    """`v` is an argument of `block` or the result of an op in it (not of one around it)."""
    owner = v.owner
    return owner is block if isinstance(owner, Block) else owner.parent_block() is block


def describe(op: Operation, index: int) -> str:
    """How diagnostics name a graph op: its name, pre-order index and result name."""
    res = f" %{op.results[0].name_hint}" if op.results and op.results[0].name_hint else ""
    return f"{op.name}{res} (op {index})"


def value_attr(op: Operation) -> dict[str, Attribute]:
    """`value = "h"`: the stable name of the graph value `op` computes (`plan_body` named every
    graph value before the walk), by which the plan op's checkpoint is matched; nothing for a
    value a graph-level expansion introduced (`DERIVED`: not in the reference)."""
    name = value_name(op)
    return {} if name is None else {plan.VALUE_ATTR: StringAttr(name)}


def value_name(op: Operation) -> str | None:
    if DERIVED in op.attributes:
        return None
    return op.results[0].name_hint or ""


@dataclass
class Planner:
    """Layout bookkeeping while one function is planned into `top` (and repeat bodies)."""

    target: Target
    chooser: Any  # a families.base.Chooser
    block: Block
    arg_map: dict[SSAValue, int]
    top: Block = field(default=None)  # type: ignore[assignment]
    log: bool = True  # log each op's plan (the materialized plan, not each trial of a search)
    current: dict[SSAValue, SSAValue] = field(default_factory=dict)
    cache: dict[tuple[SSAValue, plan.PlanTensorType], SSAValue] = field(default_factory=dict)
    params: dict[SSAValue, graph.ParameterOp] = field(default_factory=dict)
    slices: dict[SSAValue, graph.IterationSliceOp] = field(default_factory=dict)  # of a stacked value
    outer: list[tuple[Block, int]] = field(default_factory=list)  # around the repeat bodies planned: (block, trips)
    new_args: dict[int, SSAValue] = field(default_factory=dict)
    conversions: list[str] = field(default_factory=list)
    desired: dict[SSAValue, plan.PlanTensorType] = field(default_factory=dict)  # consumer-chosen layouts
    attention: dict[Operation, Any] = field(default_factory=dict)  # each attention's candidate
    resident: int = 0  # bytes per tile of weights kept in their consumer's layout
    gemms: int = 0
    row_turn: int = 0  # rowwise ops given a rotated row layout so far (`families.rowwise.rotated_rows`)
    home_cursor: int = 0  # the tile the next convolution's filter home starts at (`families.conv`)
    half_partials: bool = False  # the function's AMP ops default to fp16 partials (`PARTIALS_ATTR`)
    spread: bool = False  # resident weights placed where the machine holds least (`spread_weight`)
    heavy: bool = False  # the weights take much of the machine (`heavy_weights`): grids that copy them less
    weight_load: np.ndarray | None = None  # bytes of spread weights per tile so far
    spread_weights: list[tuple[int, int]] = field(default_factory=list)  # (tiles, bytes per tile) each
    places: list[int] | None = None  # each spread weight's first tile, packed after a first walk
    fixed_weights: list[tuple[int, int, int]] = field(default_factory=list)  # (first, tiles, bytes) not spread
    index_of: dict[Operation, int] = field(default_factory=dict)
    uses_left: dict[SSAValue, int] = field(default_factory=dict)  # graph uses not yet planned

    def half_default(self, *operands: SSAValue) -> bool:
        """Whether an AMP op over `operands` takes fp16 partials by the function's default: only
        half operands can."""
        return self.half_partials and all(v.type.element_type.bitwidth == 16 for v in operands)

    def spread_weight(self, used: int, per_tile: int) -> int:
        """The first tile of a weight held on `used` consecutive tiles, `per_tile` bytes each
        (recorded in `spread_weights`): its place in `places` when a first walk packed them
        (`pack_weights`), else where the busiest of its tiles holds least so far (`first_fit`).
        0 without `spread` (every layout starts at tile 0)."""
        if not self.spread or used >= self.target.tiles:
            return 0
        k = len(self.spread_weights)
        self.spread_weights.append((used, per_tile))
        if self.places is not None and k < len(self.places):
            return self.places[k]
        if self.weight_load is None:
            self.weight_load = np.zeros(self.target.tiles, np.int64)
        return first_fit(self.weight_load, used, per_tile)

    def fixed_weight(self, lay: Layout, per_tile: int) -> None:
        """Record a weight whose place spreading does not choose (an embedding table's), so the
        spread weights are packed around it (`pack_weights`)."""
        if not self.spread:
            return
        self.fixed_weights.append((lay.first_tile, lay.tiles, per_tile))
        if self.places is None:  # placing greedily (a first walk): around it too
            if self.weight_load is None:
                self.weight_load = np.zeros(self.target.tiles, np.int64)
            self.weight_load[lay.first_tile : lay.first_tile + lay.tiles] += per_tile

    def live_bytes(self, exclude: tuple[SSAValue, ...] = ()) -> int:
        """Per-tile bytes of planned values that later ops still read (weights excluded)."""
        total = 0
        uses = self.uses_left
        for v, nv in self.current.items():
            if uses.get(v, 0) <= 0 or v in exclude or self.is_weight(v):  # most values are dead by now
                continue
            lay = nv.type.layout
            total += lay.block_elements * nv.type.tensor.element_type.bitwidth // 8
        return total

    def is_weight(self, v: SSAValue) -> bool:
        """`v` is a weight, or a rolled layer's slice of a stacked one."""
        return v in self.params or (v in self.slices and self.slices[v].input in self.params)

    def weight_copies(self, v: SSAValue) -> int:
        """Blocks of `v` a tile keeps resident: one per iteration for a slice of a stacked weight."""
        sl = self.slices.get(v)
        return sl.input.type.get_shape()[0] if sl is not None else 1

    def consumed(self, op: Operation) -> None:
        for v in op.operands:
            self.uses_left[v] = self.uses_left.get(v, 0) - 1

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def has(self, v: SSAValue) -> bool:
        return v in self.current

    def arg(self, v: SSAValue, t: plan.PlanTensorType) -> SSAValue:
        i = self.arg_map[v]
        pos = sum(1 for j in self.new_args if j < i)
        a = self.top.insert_arg(t, pos)
        a.name_hint = v.name_hint
        self.new_args[i] = a
        return a

    def get(self, v: SSAValue, want: plan.PlanTensorType | None, reason: str) -> SSAValue:
        """The plan value for graph value `v` in layout `want` (materializing or converting)."""
        if v not in self.current:
            shape = tuple(v.type.get_shape())
            t = want or plan_type(v.type, default_layout(shape, self.target.tiles) if shape else scalar_layout())
            if v in self.slices:
                # the stacked weight in the slice's layout, one block per iteration, sliced where
                # the consumer runs; in the slice's memory: an AMP that asks for it interleaved
                # reads its block in place (`IterationSliceOp.read_in_place`), no copy made
                sl = self.slices[v]
                n = sl.input.type.get_shape()[0]
                memory = t.layout_attr.memory.data
                want_stacked = plan_type(sl.input.type, plan.stacked_layout(t.layout, n), memory)
                if sl.input in self.params:
                    stacked = self.get(sl.input, want_stacked, reason)
                else:  # a computed value, rearranged once before the loop rather than on every trip
                    body, self.block = self.block, self.outer[-1][0]
                    try:
                        stacked = self.get(sl.input, want_stacked, "stacked for a loop")
                    finally:
                        self.block = body
                nv = self.emit(plan.IterationSliceOp.create(operands=[stacked], result_types=[t])).results[0]
                self.set(v, nv)
                return nv
            if v in self.params:
                p = self.params[v]
                # weights are loaded once by `initialize`: declared at function level even when a
                # repeat body uses them
                decl = plan.ParameterOp(p.sym_name.data, p.init, t)
                self.top.add_op(decl)
                nv = decl.results[0]
            else:
                nv = self.arg(v, t)
            nv.name_hint = v.name_hint
            self.current[v] = nv
            self.cache[(v, t)] = nv
            return nv
        cur = self.current[v]
        if want is None or cur.type == want:
            return cur
        if (v, want) in self.cache:
            return self.cache[(v, want)]
        r = plan.RearrangeOp(cur, want, reason)
        (self.block if reason in TRANSIENT else self.home_block(cur, want)).add_op(r)
        nv = r.results[0]
        nv.name_hint = f"{v.name_hint or 'v'}_r"
        self.cache[(v, want)] = nv
        self.conversions.append(reason)
        return nv

    def home_block(self, cur: SSAValue, want: plan.PlanTensorType) -> Block:
        """Where the conversion of plan value `cur` into `want` goes: the block being planned,
        or, for a value defined around the repeat bodies being planned, the block that defines it
        when the loops between run more than once: a loop-invariant conversion then runs once
        before the loop (the repeat op is added to that block after its body, so the conversion
        comes first) where every trip paid its words and, unless it shared one, a phase (BERT's
        tied zero biases, four conversions a layer: 36,537 cycles). Only small values are hoisted:
        the copy stays live through the loop (a weight fetched per trip is fetched to be freed)."""
        if want.layout.block_elements * esize_of(want) > HOIST_BYTES:
            return self.block
        trips = 1
        for b, n in ((self.block, 1), *reversed(self.outer)):
            trips *= n
            if defined_in(cur, b):
                return b if trips > 1 else self.block
        return self.block

    def set(self, v: SSAValue, nv: SSAValue) -> None:
        nv.name_hint = v.name_hint
        self.current[v] = nv
        self.cache[(v, nv.type)] = nv

    def event(self, message: str, **fields: object) -> None:
        if self.log:
            log_event(message, **fields)
