"""The GEMM family: `graph.matmul` as an AMP matmul over a (pm, pn, pk) tile grid (`plan.gemm`,
with `plan.reduce` summing a K split's partials), or, when no grid's working set fits, the
output-stationary serial GEMM (`plan.gemm_serial`). Its decision point is the grid, the AMP's
orientation (plain: the lhs rows are the AMP's rows; swapped: the rhs columns are, as PopLibs
swaps a fully connected layer's operands, and each tile transposes its block of the product)
and, for a weight operand, whether the weight stays resident in its consumer's layout or is
stored once and fetched; `#plan.choice<gemm, grid = [pm, pn, pk], weight = …, orientation = …>`
or `<gemm_serial, …>` records it."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects import builtin
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import KERNELS
from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.target import Target
from ipu.transforms.plan.budget import WEIGHT_FRACTION, TargetMemo, divisor_like, op_budget
from ipu.transforms.plan.families.base import (
    DecisionFamily,
    Decisions,
    OpCost,
    check_fit,
    check_tiles,
    grid_text,
    partials_field,
    pinned_partials,
)
from ipu.transforms.plan.layouts import (
    GemmLayouts,
    drop_align,
    gemm_layouts,
    plan_type,
    row_layout,
    serial_gemm_layouts,
    shifted,
)
from ipu.transforms.plan.pricing import esize_of, fragments, serial_gemm_cost, stage_fill_cycles
from ipu.transforms.plan.state import Planner, describe, value_attr, value_name

# ---------------------------------------------------------------- candidates


@dataclass(frozen=True)
class GemmChoice:
    pm: int
    pn: int
    pk: int
    cycles: int
    exchange_cycles: int
    bytes_per_tile: int
    weight_bytes: int  # the B block per tile
    layouts: GemmLayouts
    half: bool = False  # fp16 partials
    swapped: bool = False  # the AMP on the transposed product (`amp_matmul_swapped`)

    @property
    def grid(self) -> tuple[int, int, int]:
        return (self.pm, self.pn, self.pk)


def gemm_candidate(
    m: int,
    k: int,
    n: int,
    esize: int,
    a_moves: bool,
    target: Target,
    b_moves: bool,
    head: int,
    a_current: Layout | None,
    grid: tuple[int, int, int],
    r_want: Layout | None = None,
    half: bool = False,
    swapped: bool = False,
) -> GemmChoice:
    """One (pm, pn, pk) grid priced: cycles (compute, exchange, reduce) and working set per tile;
    `half`: with fp16 partials (the AMP at 16 conv units, half the partials' bytes); `swapped`:
    the AMP on the transpose (b's block columns as its rows, then a transpose of the product's
    block through a scratch of its size; the lhs moves into interleaved memory as the AMP's
    weights, even where its layout is already the grid's).

    `r_want` (the layout the result's consumer reads it in, when the graph says) adds the
    conversion of the result into it, fragments included: a grid whose output is cut into many
    column blocks pays for the gather a norm or softmax after it needs. (The lhs side is priced
    by its words only: its producer often takes the layout this op asks for.)"""
    pm, pn, pk = grid
    lays = gemm_layouts(m, k, n, pm, pn, pk, head, b_moves, swapped)
    (bm, bk), bn = lays.a.block, lays.b.block[1]
    a_moves_here = a_moves and (swapped or lays.a != a_current)
    a, b = bm * bk * esize, bk * bn * esize
    pe = 2 if half else 4
    p = bm * bn * (pe if pk > 1 else esize)
    # peak of the gemm step (a, b, partial, the swapped AMP's transposed partial) and the reduce
    # step (partial, staging, result)
    work = max(a + b + p * (2 if swapped else 1), 2 * p + lays.result.block_elements * esize if pk > 1 else 0)
    exch = (a // 4 if a_moves_here else 0) + (b // 4 if b_moves else 0)
    if r_want is not None and drop_align(lays.result) != drop_align(r_want):
        words = math.ceil(r_want.block_elements * esize / 4)
        exch += words + fragments(lays.result, r_want) * target.exchange["fragment_cycles"]
        exch += target.phase_overhead_cycles()
    kernel = KERNELS[plan.gemm_kernel(swapped, half)]  # priced as the tile runs it
    cyc = kernel.cycles(target, {"m": bm, "k": bk, "n": bn}, pe if pk > 1 else esize)
    phases = int(a_moves_here or b_moves)
    if pk > 1:
        exch += (p - p // pk) // 4
        cyc += target.reduce_cycles(pk, lays.result.block_elements, esize, pe)
        cyc += stage_fill_cycles(lays.partial, lays.result, pe, target)
        phases += 1
    exch += phases * target.phase_overhead_cycles()
    return GemmChoice(pm, pn, pk, cyc + exch, exch, work, b, lays, half, swapped)


UNEVEN_PARTS = 16
UNEVEN_ROWS = 256
"""Row splits into up to `UNEVEN_PARTS` parts are also tried when they do not divide a matmul of
at most `UNEVEN_ROWS` rows (the last block padded): GPT-2's 128 tokens in 3 blocks of 43 leave
490 tiles to the columns and K, where 2 blocks leave 736 that 768 columns fill worse. Chosen
only when 10 % cheaper than the best even split (`UNEVEN_GAIN`): GPT-2 medium's [128 x 1024] x
[1024 x 1024] in 5 row blocks is priced 4 % below 2, and its pipeline stages ran 2 % slower."""

UNEVEN_GAIN = 0.9
"""An uneven row split is chosen only below this fraction of the best even split's cycles."""


SWAP_GAIN = 0.95
"""A swapped candidate is chosen only below this fraction of the best plain one's cycles:
transformer_block's output projection swapped on grid 16x11x8 is priced 5.3 % below the best
plain grid, and every plan the search built around it refined 0.3-1.6 % slower than the plain
plan (1,967,676 cycles) once scheduled: a gain that small is within the price's own error."""


def gemm_grids(m: int, k: int, n: int, tiles: int, head: int = 1, uneven: bool = True) -> list[tuple[int, int, int]]:
    """The (pm, pn, pk) grids the planner considers for an [m x k] x [k x n] matmul; `uneven`:
    with the row splits that do not divide a short matmul (`UNEVEN_ROWS`)."""
    out = []
    n_parts = max(1, -(-n // max(head, 16)))
    rows = set(divisor_like(m, tiles))
    if uneven and m <= UNEVEN_ROWS:
        rows.update(block_parts(m, min(UNEVEN_PARTS, tiles)))
    for pm in sorted(rows):
        for pk in divisor_like(max(k // 16, 1), tiles // pm):
            pn = min(tiles // (pm * pk), max(1, n_parts // pk) if head > 1 else n_parts)
            if pn >= 1:
                out.append((pm, pn, pk))
    return out


def gemm_candidates(
    m: int,
    k: int,
    n: int,
    esize: int,
    a_moves: bool,
    target: Target,
    b_moves: bool = False,
    head: int = 1,
    a_current: Layout | None = None,
    r_want: Layout | None = None,
    half: bool = False,
    uneven: bool = True,
) -> tuple[GemmChoice, ...]:
    """Every (pm, pn, pk) grid in both orientations with its estimated cycles and working set
    per tile.

    `a_moves` says the lhs exists already (in `a_current` if given: a candidate whose lhs layout
    equals it needs no exchange); `b_moves` says the rhs must be exchanged into place.
    Memoized per target object: the plan search prices the same few matmuls once per plan."""
    key = (m, k, n, esize, a_moves, b_moves, head, r_want, half, uneven)
    found, hit = GEMM_MEMO.get(key, target)
    if not found or hit is None:
        out = tuple(
            gemm_candidate(m, k, n, esize, a_moves, target, b_moves, head, None, g, r_want, half, swapped)
            for g in gemm_grids(m, k, n, target.tiles, head, uneven)
            for swapped in (False, True)
        )
        by_lhs: dict[Layout, list[int]] = {}
        for i, c in enumerate(out):
            if not c.swapped:
                by_lhs.setdefault(c.layouts.a, []).append(i)
        hit = (out, by_lhs)
        GEMM_MEMO.put(key, target, hit)
    out, by_lhs = hit
    if not a_moves or a_current not in by_lhs:
        return out
    # the lhs's current layout only spares the plain grids laid out as it is their move: the
    # rest are priced once for every plan the search builds (its lhs layouts differ)
    again = list(out)
    for i in by_lhs[a_current]:
        again[i] = gemm_candidate(m, k, n, esize, a_moves, target, b_moves, head, a_current, out[i].grid, r_want, half)
    return tuple(again)


GEMM_MEMO: TargetMemo[tuple[tuple[GemmChoice, ...], dict[Layout, list[int]]]] = TargetMemo(512)
"""Per key: the candidates priced with the lhs moving, and the plain ones' indices by lhs layout."""
SPREAD_SLACK = 1.25  # a spread weight's blocks may take this much over the weight itself (padding)


def choose_gemm(
    m: int,
    k: int,
    n: int,
    esize: int,
    a_moves: bool,
    target: Target,
    b_moves: bool = False,
    head: int = 1,
    a_current: Layout | None = None,
    reserved: int = 0,
    rank: int = 0,
    counts: list[int] | None = None,
    r_want: Layout | None = None,
    half: bool = False,
    weight_cap: int | None = None,
    uneven: bool = True,
    swap_room: int | None = None,
    offered: list[bool] | None = None,
) -> GemmChoice:
    """The `rank`-th cheapest candidate whose working set fits beside `reserved` bytes live
    elsewhere (rank 0: the cheapest); `counts` receives how many fit. With a `weight_cap` (bytes
    of the weight's blocks over all the grid's tiles: replicas and padding included): only
    candidates within it, else the one whose blocks take least. With a `swap_room`, the
    cheapest swapped grid that keeps more of a resident weight a tile than the best plain grid,
    up to that many bytes, is the second candidate (rank 1): a plan search tries it in place of
    the same grid's other orientation, the cheapest plan never takes it by default; `offered`
    receives whether there was one."""
    cands = gemm_candidates(m, k, n, esize, a_moves, target, b_moves, head, a_current, r_want, half, uneven)
    budget = op_budget(target, reserved)
    fits = [c for c in cands if c.bytes_per_tile <= budget]
    if uneven:
        # an uneven row split must win clearly: its padded row blocks cost its consumers'
        # conversions more fragments than the candidate's price sees
        rows = set(divisor_like(m, target.tiles))
        even = [c.cycles for c in fits if c.pm in rows and not c.swapped]
        if even:
            fits = [c for c in fits if c.pm in rows or c.cycles < UNEVEN_GAIN * min(even)]
    plain = [c for c in fits if not c.swapped]
    replicated: GemmChoice | None = None
    if plain:
        # a swapped grid must win clearly: the per-op price is a local choice in a greedy
        # search, and its error on a grid's exchange is of the gain's order. Where the weight
        # stays resident it must also hold no more of it a tile: swapped grids cut the rows
        # into 16-row groups, each with its replica of the weight, and weights kept beyond the
        # residency share send later layers' weights to fetch on every trip, which this op's
        # price does not see (a search may still try one, `swap_room`)
        best = min(plain, key=lambda c: (c.cycles, c.bytes_per_tile))
        gain = SWAP_GAIN * best.cycles

        def light(c: GemmChoice) -> bool:
            return b_moves or c.weight_bytes <= best.weight_bytes

        if swap_room is not None and weight_cap is None:
            heavy = (c for c in fits if c.swapped and c.cycles < gain and not light(c) and c.weight_bytes <= swap_room)
            replicated = min(heavy, key=lambda c: (c.cycles, c.bytes_per_tile), default=None)
        fits = [c for c in fits if not c.swapped or (c.cycles < gain and light(c))]
    if weight_cap is not None and fits:
        capped = [c for c in fits if c.weight_bytes * c.layouts.b.tiles <= weight_cap]
        fits = capped or [min(fits, key=lambda c: (c.weight_bytes * c.layouts.b.tiles, c.cycles))]
    if not fits:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {target.name}: matmul [{m}x{k}] x [{k}x{n}] needs at least "
            f"{best.bytes_per_tile} bytes per tile (grid {best.pm}x{best.pn}x{best.pk}); "
            f"per-op budget is {int(budget)} of {target.memory_size} bytes ({reserved} held by live values)"
        )
    # one candidate a grid (its cheaper orientation): the search's ranks explore grids, not
    # the same grid twice
    by_grid: dict[tuple[int, int, int], GemmChoice] = {}
    for c in sorted(fits, key=lambda c: (c.cycles, c.bytes_per_tile)):
        by_grid.setdefault(c.grid, c)
    fits = list(by_grid.values())
    if replicated is not None:
        fits = [c for c in fits if c.grid != replicated.grid]
        fits.insert(1, replicated)
    if counts is not None:
        counts.append(len(fits))
    if offered is not None:
        offered.append(replicated is not None)
    return fits[min(rank, len(fits) - 1)]


@dataclass(frozen=True)
class SerialChoice:
    pm: int
    pn: int
    steps: int
    cycles: int
    bytes_per_tile: int
    pk: int = 1  # contraction parts, each stepping its share on its own (pm, pn) tiles

    @property
    def grid(self) -> tuple[int, ...]:
        return (self.pm, self.pn) if self.pk == 1 else (self.pm, self.pn, self.pk)


SERIAL_STEPS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)


def block_parts(n: int, limit: int) -> list[int]:
    """For each block size ceil(n / p) with p <= limit, the fewest parts p that give it: every
    distinct split of n elements, without the part counts that only add empty blocks."""
    out, p = [], 1
    while p <= limit:
        out.append(p)
        b = -(-n // p)
        if b == 1:
            break
        p = -(-n // (b - 1))
    return out


SERIAL_K_PARTS = (1, 2, 3, 4, 6, 8)
"""Contraction parts the serial GEMM weighs (2.5-D: each part steps its share of K on its own
(pm, pn) tiles, then a reduce sums the fp32 partials): fewer words per tile in the windows for
a reduce of the output. attention_long's [4096 x 4096] x [4096 x 4096] projections on mk2:
2,303,568 cycles in one part, 2,015,472 in 4 (with the whole per-op budget)."""


def serial_grids(m: int, n: int, tiles: int, k: int = 0) -> list[tuple[int, int, int]]:
    """The (pm, pn, pk) grids the serial GEMM weighs: for each contraction split (of at least 32
    deep, `SERIAL_K_PARTS`; with `k` 0 only 1) every distinct row split, and for each every
    distinct column split (blocks of at least 16 columns) that uses at least 3/4 of its tiles,
    or the most column parts when none does. Near-square output blocks receive the fewest
    words per step ((bm + bn) kc), many column parts give the AMP longer rows: only the priced
    cost can tell which wins."""
    out = []
    for pk in (p for p in SERIAL_K_PARTS if p == 1 or k >= 32 * p):
        share = tiles // pk
        for pm in block_parts(m, share):
            most = min(share // pm, max(1, n // 16))
            out += [(pm, pn, pk) for pn in block_parts(n, most) if 4 * pm * pn >= 3 * share or pn == most]
    return out


SERIAL_MEMO: TargetMemo[SerialChoice | None] = TargetMemo(256)
SERIAL_TABLES: TargetMemo[SerialTable] = TargetMemo(64)


class SerialTable:
    """A shape's serial grids (`serial_grids`), each priced at a step count when first asked: the
    prices do not depend on the memory left beside the op, so the plan search, which asks again
    for each budget, prices each once."""

    def __init__(self, m: int, k: int, n: int, esize: int, target: Target, split: bool) -> None:
        self.shape, self.target = (m, k, n, esize), target
        self.grids = serial_grids(m, n, target.tiles, k if split else 0)
        self.priced: dict[tuple[int, int], SerialChoice] = {}

    def price(self, i: int, steps: int) -> SerialChoice:
        c = self.priced.get((i, steps))
        if c is None:
            pm, pn, pk = self.grids[i]
            c = self.priced[i, steps] = serial_candidate(*self.shape, self.target, pm, pn, steps, pk)
        return c


def serial_table(m: int, k: int, n: int, esize: int, target: Target, split: bool) -> SerialTable:
    key = (m, k, n, esize, split)
    found, hit = SERIAL_TABLES.get(key, target)
    if not found or hit is None:
        hit = SerialTable(m, k, n, esize, target, split)
        SERIAL_TABLES.put(key, target, hit)
    return hit


def serial_candidate(
    m: int, k: int, n: int, esize: int, target: Target, pm: int, pn: int, steps: int, pk: int = 1
) -> SerialChoice:
    """An output-stationary (pm, pn) grid stepping the contraction in `steps` chunks, priced as
    the plan's `plan.gemm_serial` is (`serial_gemm_cost`); with `pk` parts, each part's share of
    the contraction on its own tiles, and the `plan.reduce` of the fp32 partials after it."""
    bm, bn = math.ceil(m / pm), math.ceil(n / pn)
    bn += bn % 2
    kp, kc = plan.serial_window(k, pk, steps)
    acc = bm * bn * 4
    # the two windows, the accumulator and its copy out; a split's also beside the operands'
    # homes (live while the op runs, and not in the budget's `reserved`), which the unsplit
    # grids' budget has always left to its slack
    homes = serial_homes(m, k, n, esize, pm * pn * pk) if pk > 1 else 0
    mem = homes + bm * kc * esize + kc * bn * esize + acc + (bm * bn * esize if pk == 1 else 0)
    comp, x = serial_gemm_cost(target, bm, bn, kp, steps, esize, cast=pk == 1)
    if pk > 1:  # the reduce: each tile keeps 1/pk of its block's columns, received from the others
        kept = _reduced_block(m, k, n, pm, pn, pk)
        mem = max(mem, homes + 2 * acc + kept * esize)
        comp += target.reduce_cycles(pk, kept, esize, 4)
        x += (acc - acc // pk) // 4 + target.phase_overhead_cycles()
    return SerialChoice(pm, pn, steps, comp + x, mem, pk)


@functools.lru_cache(maxsize=4096)
def _reduced_block(m: int, k: int, n: int, pm: int, pn: int, pk: int) -> int:
    """Elements of a tile's block of a split serial GEMM's reduced result (one per grid: the
    search prices every step count of a grid)."""
    return serial_gemm_layouts(m, k, n, pm, pn, pk)[3].block_elements


def serial_homes(m: int, k: int, n: int, esize: int, tiles: int) -> int:
    """Bytes a tile holds of a serial GEMM's two operands, each spread once over its `tiles`."""
    return (math.ceil(m * k / tiles) + math.ceil(k * n / tiles)) * esize


def choose_serial_gemm(
    m: int, k: int, n: int, esize: int, target: Target, reserved: int, cap: float | None = None, split: bool = False
) -> SerialChoice | None:
    """Output-stationary (pm, pn, pk) grid and the fewest contraction steps that fit the per-op
    budget. With a `cap` (bytes per tile, for a matmul leaned to make the plan fit): the
    cheapest within the cap, else the smallest working set within the budget. With `split`,
    contraction splits too, taken only where one also holds no more a tile than the best
    unsplit grid: a serial gemm runs where memory is tight, and its placement, not the budget,
    binds there (attention_long's q projection split 14 x 26 x 4 took 462 KB a tile against 401
    KB, and the k projection after it no longer placed)."""
    key = (m, k, n, esize, reserved, cap, split)
    found, hit = SERIAL_MEMO.get(key, target)  # the search prices a thousand grids: once per shape
    if found:
        return hit
    budget = op_budget(target, reserved)
    plain: SerialChoice | None = None  # the cheapest unsplit grid, at its fewest steps that fit
    splits: list[SerialChoice] = []  # split grids at every step count that fits
    leanest: SerialChoice | None = None
    limit = budget if cap is None else min(cap, budget)
    table = serial_table(m, k, n, esize, target, split)
    for i in range(len(table.grids)):
        for steps in SERIAL_STEPS:
            c = table.price(i, steps)
            if c.bytes_per_tile <= budget and (leanest is None or c.bytes_per_tile < leanest.bytes_per_tile):
                leanest = c
            if c.bytes_per_tile > limit:
                continue
            if c.pk > 1:
                splits.append(c)
                continue
            if plain is None or (c.cycles, c.bytes_per_tile) < (plain.cycles, plain.bytes_per_tile):
                plain = c
            break
    if plain is not None:  # compared with the unsplit grid's homes counted too
        held = plain.bytes_per_tile + serial_homes(m, k, n, esize, plain.pm * plain.pn)
        splits = [c for c in splits if c.bytes_per_tile <= held]
    found = [*splits, *([plain] if plain is not None else [])]
    out = min(found, key=lambda c: (c.cycles, c.bytes_per_tile)) if found else None
    out = out if out is not None or cap is None else leanest
    SERIAL_MEMO.put(key, target, out)
    return out


# ---------------------------------------------------------------- the decision


@dataclass(frozen=True)
class MatmulContext:
    """What a matmul's choice depends on, as the emitter has it when it reaches the op."""

    op: graph.MatmulOp
    index: int
    m: int
    k: int
    n: int
    esize: int
    a_moves: bool  # the lhs exists already
    b_moves: bool  # the rhs exists already (must be exchanged into place)
    a_current: Layout | None
    reserved: int  # bytes per tile held by resident weights and live values
    resident: int  # bytes per tile of weights kept resident so far
    weight: bool  # the rhs is a parameter not yet placed: resident or fetched is a choice
    home_bytes: int  # per tile, a fetched weight's distributed home
    r_want: Layout | None = None  # the layout the result's consumer will read it in, if known
    half_default: bool = False  # the function's AMP ops take fp16 partials (half operands only)
    spread: bool = False  # weights spread over the machine: a resident weight's grid near its fair share
    uneven: bool = True  # uneven row splits too (not when the weights take much of the machine)


@dataclass(frozen=True)
class MatmulPlan:
    """A matmul's implementation: a (pm, pn, pk) gemm, or the serial gemm when none fits."""

    gemm: GemmChoice | None = None
    serial: SerialChoice | None = None
    fetch: bool = False  # the weight is stored spread over the grid and fetched before use
    weight: bool = False  # the rhs was a parameter not yet placed (resident or fetched)
    half_default: bool = False  # the function's partials (a choice records only a departure)

    def attr(self) -> plan.ChoiceAttr:
        if self.gemm is not None:
            mode = ("fetched" if self.fetch else "resident") if self.weight else ""
            partials = partials_field(self.gemm.half, self.half_default)
            orientation = "swapped" if self.gemm.swapped else ""
            return plan.ChoiceAttr("gemm", self.gemm.grid, weight=mode, partials=partials, orientation=orientation)
        assert self.serial is not None
        return plan.ChoiceAttr("gemm_serial", self.serial.grid, k_steps=self.serial.steps)


# ---------------------------------------------------------------- emission


def _plan_matmul(p: Planner, op: graph.MatmulOp, index: int) -> None:
    if any(op.flags()):
        raise DiagnosticException("plan-ops: transposed matmul operands are not planned yet; use graph.transpose")
    (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
    esize = op.lhs.type.element_type.bitwidth // 8
    ctx = MatmulContext(
        op,
        index,
        m,
        k,
        n,
        esize,
        p.has(op.lhs),
        p.has(op.rhs),
        p.current[op.lhs].type.layout if p.has(op.lhs) else None,
        p.resident + p.live_bytes(exclude=(op.lhs, op.rhs)),
        p.resident,
        p.is_weight(op.rhs) and not p.has(op.rhs),
        math.ceil(k * n / p.target.tiles) * esize,
        _consumer_layout(p, op.result),
        p.half_default(op.lhs, op.rhs),
        p.spread,
        not p.heavy,
    )
    mp = p.chooser.decide(GEMM, ctx, p.target)
    if mp.serial is not None:
        _emit_serial_gemm(p, op, index, mp.serial)
        return
    c = mp.gemm
    assert c is not None
    lays = c.layouts
    if mp.weight:
        copies = p.weight_copies(op.rhs)
        p.resident += (ctx.home_bytes if mp.fetch else c.weight_bytes) * copies
        # what its tiles hold: a fetched weight's home is spread over the grid's tiles, not the
        # machine's (the budget's `home_bytes` assumes the machine)
        held = (lays.home if mp.fetch and lays.home is not None else lays.b).block_elements * ctx.esize * copies
        first = p.spread_weight(lays.partial.tiles, held)
        if first:  # the whole gemm moves with its weight: its operands and result follow
            lays = shifted(lays, first)
    el = op.result.type.element_type
    if mp.fetch:
        assert lays.home is not None
        p.get(op.rhs, plan_type(op.rhs.type, lays.home), "weight home")
    a = p.get(op.lhs, plan_type(op.lhs.type, lays.a, "interleaved" if c.swapped else "standard"), op.name)
    b = p.get(op.rhs, plan_type(op.rhs.type, lays.b, "interleaved"), "weight fetch" if mp.fetch else op.name)
    r_t = TensorType((builtin.f16 if c.half else builtin.f32) if c.pk > 1 else el, [m, n])
    value = None if c.pk > 1 else value_name(op)  # a partial sum is checked after its reduce
    g = p.emit(plan.GemmOp(a, b, plan_type(r_t, lays.partial, "interleaved"), value, c.half, c.swapped)).results[0]
    p.gemms += 1
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        grid=f"{c.pm}x{c.pn}x{c.pk}",
        weight="fetched" if mp.fetch else "resident",
        estimated_cycles=c.cycles,
        estimated_exchange_cycles=c.exchange_cycles,
        bytes_per_tile=c.bytes_per_tile,
        partials="f16" if c.half else "f32",
        orientation="swapped" if c.swapped else "plain",
    )
    if c.pk > 1:
        g.name_hint = f"{op.result.name_hint or 'mm'}_partial"
        g = p.emit(plan.ReduceOp(g, plan_type(op.result.type, lays.result), value_name(op))).results[0]
    p.set(op.result, g)


ROWWISE = (graph.LayerNormOp, graph.RmsNormOp, graph.SoftmaxOp)


def _consumer_layout(p: Planner, v: SSAValue, depth: int = 3) -> Layout | None:
    """The layout a consumer of `v` will convert it to, looking through elementwise ops that
    keep their lhs's layout: whole rows for a norm or softmax (`_plan_rowwise`), the lhs's layout
    when `v` is the rhs of a binary op whose lhs is planned. None when the graph does not say."""
    shape = tuple(v.type.get_shape())
    for use in v.uses:
        op = use.operation
        if isinstance(op, ROWWISE) and use.index == 0:
            return row_layout(shape, p.target.tiles)
        if isinstance(op, graph.ElementwiseUnaryOp) and depth:
            want = _consumer_layout(p, op.results[0], depth - 1)
        elif isinstance(op, graph._Binary) and tuple(op.results[0].type.get_shape()) == shape:
            lhs = op.operands[0]
            if use.index == 1 and lhs is not v and p.has(lhs):
                want = p.current[lhs].type.layout
            elif use.index == 0 and depth:
                want = _consumer_layout(p, op.results[0], depth - 1)
            else:
                want = None
        else:
            want = None
        if want is not None and want.shape == shape:
            return want
    return None


def _emit_serial_gemm(p: Planner, op: graph.MatmulOp, index: int, c: SerialChoice) -> None:
    (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
    la, lb, lo, lr = serial_gemm_layouts(m, k, n, c.pm, c.pn, c.pk)
    a = p.get(op.lhs, plan_type(op.lhs.type, la), op.name)
    b = p.get(op.rhs, plan_type(op.rhs.type, lb), "weight home")
    split = c.pk > 1  # fp32 partials, summed by the reduce after it
    r_t = plan_type(TensorType(builtin.f32, [m, n]), lo) if split else plan_type(op.result.type, lo)
    r = plan.SerialGemmOp.create(
        operands=[a, b],
        result_types=[r_t],
        attributes={"k_steps": builtin.IntegerAttr(c.steps, 64), **({} if split else value_attr(op))},
    )
    g = p.emit(r).results[0]
    if split:
        g.name_hint = f"{op.result.name_hint or 'mm'}_partial"
        g = p.emit(plan.ReduceOp(g, plan_type(op.result.type, lr), value_name(op))).results[0]
    p.set(op.result, g)
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        grid="x".join(map(str, c.grid)),
        serial_k_steps=c.steps,
        estimated_cycles=c.cycles,
        bytes_per_tile=c.bytes_per_tile,
    )


class GemmFamily(DecisionFamily):
    """`graph.matmul` -> `plan.gemm` (+ `plan.reduce`) or `plan.gemm_serial`."""

    name = "gemm"
    graph_ops: ClassVar[tuple[type[Operation], ...]] = (graph.MatmulOp,)
    plan_ops: ClassVar[tuple[type[Operation], ...]] = (plan.GemmOp, plan.SerialGemmOp)
    impls = ("gemm", "gemm_serial")

    def emit(self, p: Planner, op: Operation, index: int) -> None:
        assert isinstance(op, graph.MatmulOp)
        _plan_matmul(p, op, index)

    def cost(self, op: Operation, t: Target) -> OpCost:
        if isinstance(op, plan.GemmOp):
            a, b = op.lhs.type.layout, op.rhs.type.layout
            mkn = {"m": a.block[0], "k": a.block[1], "n": b.block[1]}
            return KERNELS[op.kernel].cycles(t, mkn, esize_of(op.result.type)), 0, 0, 0
        assert isinstance(op, plan.SerialGemmOp)
        r = op.result.type.layout
        steps, pk = op.k_steps.value.data, r.partials
        kp = plan.serial_k_share(op.lhs.type.shape[1], pk)
        comp, x = serial_gemm_cost(t, r.block[0], r.block[1], kp, steps, esize_of(op.lhs.type), cast=pk == 1)
        return comp, x, 2 * steps, 2

    def choose(self, ctx: MatmulContext, t: Target, d: Decisions) -> MatmulPlan:
        cap = d.lean.get(ctx.index)
        lean = None if cap is None else choose_serial_gemm(ctx.m, ctx.k, ctx.n, ctx.esize, t, ctx.reserved, cap)
        mp = MatmulPlan(serial=lean) if lean is not None else _cheapest(ctx, t, d)
        working = mp.gemm.bytes_per_tile if mp.gemm is not None else mp.serial.bytes_per_tile  # type: ignore[union-attr]
        d.pressure[ctx.index] = ctx.reserved - ctx.resident + working  # every weight is live throughout
        d.working[ctx.index] = working
        return mp

    def resolve(self, ctx: MatmulContext, attr: plan.ChoiceAttr, t: Target) -> MatmulPlan:
        return _resolve(ctx, attr, t)

    def attr(self, choice: MatmulPlan) -> plan.ChoiceAttr:
        return choice.attr()


def _holds_weight_once(grid: tuple[int, int, int]) -> bool:
    """A grid of one row block holds its weight once: a fetched home (stored once over the grid's
    tiles) would be its very blocks, copied into interleaved memory every run, so it stays resident."""
    return grid[0] == 1


def _cheapest(ctx: MatmulContext, t: Target, d: Decisions) -> MatmulPlan:
    assigned = d.weights.assignment(ctx.index) if ctx.weight else None
    if assigned is not None:  # the whole function's residency choice (`plan.residency`)
        grid, swapped, resident = assigned
        attr = plan.ChoiceAttr(
            "gemm", grid, weight="resident" if resident else "fetched", orientation="swapped" if swapped else ""
        )
        return _resolve(ctx, attr, t)
    m, k, n, es, half = ctx.m, ctx.k, ctx.n, ctx.esize, ctx.half_default
    rank = d.ranks.get(ctx.index, 0)
    counts: list[int] = []
    offered: list[bool] = []
    # spreading weights: a resident weight takes a grid whose blocks hold it about once (not
    # replicated over the rows, little padding), and the spreading places those blocks apart
    cap = int(SPREAD_SLACK * k * n * es) if ctx.spread and ctx.weight else None
    share = d.weights.share * t.memory_size
    room = int(share) - ctx.resident if ctx.weight and d.weights.swap_replicas else None

    def pick(b_moves: bool, reserved: int) -> GemmChoice:
        return choose_gemm(
            m, k, n, es, ctx.a_moves, t, b_moves, 1, ctx.a_current, reserved, rank, counts, ctx.r_want, half, cap,
            ctx.uneven, room, offered,
        )  # fmt: skip

    try:
        c = pick(ctx.b_moves, ctx.reserved)
    except DiagnosticException as no_fit:
        return _serial(ctx, t, ctx.reserved, no_fit)
    fetch = False
    if ctx.weight and ctx.resident + c.weight_bytes > share:
        # too big to keep replicated: store it once, spread over the grid, and fetch it before
        # use; the distributed home stays resident
        fetch = True
        reserved = ctx.reserved + ctx.home_bytes
        counts.clear()
        offered.clear()
        try:
            c = pick(True, reserved)
        except DiagnosticException as no_fit:
            return _serial(ctx, t, reserved, no_fit)
        if _holds_weight_once(c.grid):  # keep its blocks where the AMP reads them
            fetch = False
            c = gemm_candidate(
                m, k, n, es, ctx.a_moves, t, False, 1, ctx.a_current, c.grid, ctx.r_want, half, c.swapped
            )
    d.counts[ctx.index] = counts[-1] if counts else 1
    if offered and offered[-1]:
        d.replicas.add(ctx.index)
    return MatmulPlan(gemm=c, fetch=fetch, weight=ctx.weight, half_default=half)


def _serial(ctx: MatmulContext, t: Target, reserved: int, no_fit: DiagnosticException) -> MatmulPlan:
    """The serial gemm of a matmul no grid fits beside `reserved`. Its contraction may split
    only where no grid fits even an empty tile (attention_long's [4096 x 4096] projections): a
    split serial gemm made a cheap fallback for a matmul that fits when less is live, and the
    plan search then settled on plans around it (transformer_block's FFN down-projection:
    2,144,953 cycles against 1,965,364)."""
    budget = op_budget(t, 0)
    cands = gemm_candidates(ctx.m, ctx.k, ctx.n, ctx.esize, ctx.a_moves, t, True, 1, ctx.a_current)
    inherent = all(c.bytes_per_tile > budget for c in cands)
    c = choose_serial_gemm(ctx.m, ctx.k, ctx.n, ctx.esize, t, reserved, split=inherent)
    if c is None:
        raise no_fit
    return MatmulPlan(serial=c)


def _resolve(ctx: MatmulContext, attr: plan.ChoiceAttr, t: Target) -> MatmulPlan:
    """The matmul implementation `attr` names, priced in the emitter's current state."""
    where = describe(ctx.op, ctx.index)
    grid = attr.grid_dims
    check_tiles(where, grid, t)
    if attr.impl.data == "gemm_serial":
        pm, pn, pk = (*grid, 1)[:3]
        if pm > ctx.m or pn > ctx.n or 2 * pk > ctx.k:
            raise DiagnosticException(
                f"plan-ops: {where}: pinned serial grid {grid_text(grid)} has more parts than the "
                f"[{ctx.m}x{ctx.n}] output (or than half the {ctx.k} contraction columns)"
            )
        budget = op_budget(t, ctx.reserved)
        tries = (attr.k_steps.data,) if attr.k_steps.data else SERIAL_STEPS
        cands = [serial_candidate(ctx.m, ctx.k, ctx.n, ctx.esize, t, pm, pn, s, pk) for s in tries]
        c = next((c for c in cands if c.bytes_per_tile <= budget), cands[-1])
        check_fit(where, f"serial grid {grid_text(grid)} in {c.steps} steps", c.bytes_per_tile, budget, t, ctx.reserved)
        return MatmulPlan(serial=c)
    grids = gemm_grids(ctx.m, ctx.k, ctx.n, t.tiles)
    if grid not in grids:
        raise DiagnosticException(
            f"plan-ops: {where}: grid {grid_text(grid)} does not divide matmul [{ctx.m}x{ctx.k}] x [{ctx.k}x{ctx.n}] "
            f"on {t.name}; the grids the planner can emit are {', '.join(grid_text(g) for g in grids)}"
        )

    half = pinned_partials(where, attr, ctx.half_default, ctx.esize)
    swapped = attr.orientation.data == "swapped"

    def price(b_moves: bool) -> GemmChoice:
        return gemm_candidate(
            ctx.m, ctx.k, ctx.n, ctx.esize, ctx.a_moves, t, b_moves, 1, ctx.a_current, gemm, ctx.r_want, half, swapped
        )

    gemm = (grid[0], grid[1], grid[2])

    mode = attr.weight.data
    if mode and not ctx.weight:
        raise DiagnosticException(
            f"plan-ops: {where}: weight = {mode} applies only when the rhs is a parameter used here first"
        )
    c = price(ctx.b_moves)
    if not mode:
        over = ctx.resident + c.weight_bytes > WEIGHT_FRACTION * t.memory_size
        fetch = ctx.weight and over and not _holds_weight_once(gemm)
    else:
        fetch = mode == "fetched"
    reserved = ctx.reserved + (ctx.home_bytes if fetch else 0)
    if fetch:
        c = price(True)
    check_fit(where, f"grid {grid_text(grid)}", c.bytes_per_tile, op_budget(t, reserved), t, reserved)
    return MatmulPlan(gemm=c, fetch=fetch, weight=ctx.weight, half_default=ctx.half_default)


GEMM = GemmFamily()
FAMILY = GEMM

__all__ = [
    "FAMILY",
    "GEMM",
    "SERIAL_K_PARTS",
    "SERIAL_STEPS",
    "GemmChoice",
    "GemmFamily",
    "MatmulContext",
    "MatmulPlan",
    "SerialChoice",
    "block_parts",
    "choose_gemm",
    "choose_serial_gemm",
    "gemm_candidate",
    "gemm_candidates",
    "gemm_grids",
    "serial_candidate",
    "serial_grids",
]
