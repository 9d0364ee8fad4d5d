"""The planner's search space: every implementation an op may take, with its estimated cycles
and working set per tile from the target's cost formulas, and the per-op memory budget."""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects.layout import Layout
from ipu.target import Target
from ipu.transforms.plan.cost import fragments, serial_gemm_cost
from ipu.transforms.plan.layouts import GemmLayouts, drop_align, gemm_layouts

MEMORY_FRACTION = 0.85  # of data memory, per-op working-set budget; place-storage checks what is really live
WEIGHT_FRACTION = 0.12  # tile memory for weights kept resident in their consumer's (replicated) layout


def op_budget(target: Target, reserved: int = 0) -> float:
    """Bytes per tile one op's working set may use beside `reserved` bytes live elsewhere."""
    return MEMORY_FRACTION * (target.memory_size - target.code_reserve_bytes) - reserved


def divisor_like(n: int, limit: int) -> list[int]:
    out = {1}
    p = 1
    while p * 2 <= min(n, limit):
        p *= 2
        out.add(p)
    out |= {d for d in range(1, min(n, limit) + 1) if n % d == 0 and d <= 64}
    return sorted(out)


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
) -> GemmChoice:
    """One (pm, pn, pk) grid priced: cycles (compute, exchange, reduce) and working set per tile.

    `r_want` (the layout the result's consumer reads it in, when the graph says) adds the
    conversion of the result into it, fragments included: a grid whose output is cut into many
    column blocks pays for the gather a norm or softmax after it needs. (The lhs side is priced
    by its words only: its producer often takes the layout this op asks for.)"""
    pm, pn, pk = grid
    lays = gemm_layouts(m, k, n, pm, pn, pk, head, b_moves)
    (bm, bk), bn = lays.a.block, lays.b.block[1]
    a_moves_here = a_moves and lays.a != a_current
    a, b = bm * bk * esize, bk * bn * esize
    p = bm * bn * (4 if pk > 1 else esize)
    # peak of the gemm step (a, b, partial) and the reduce step (partial, staging, result)
    work = max(a + b + p, 2 * p + lays.result.block_elements * esize if pk > 1 else 0)
    exch = (a // 4 if a_moves_here else 0) + (b // 4 if b_moves else 0)
    if r_want is not None and drop_align(lays.result) != drop_align(r_want):
        words = math.ceil(r_want.block_elements * esize / 4)
        exch += words + fragments(lays.result, r_want) * target.exchange["fragment_cycles"]
        exch += target.phase_overhead_cycles()
    cyc = target.amp_matmul_cycles(bm, bk, bn)
    phases = int(a_moves_here or b_moves)
    if pk > 1:
        exch += (p - p // pk) // 4
        cyc += target.reduce_cycles(pk, lays.result.block_elements)
        phases += 1
    exch += phases * target.phase_overhead_cycles()
    return GemmChoice(pm, pn, pk, cyc + exch, exch, work, b, lays)


def gemm_grids(m: int, k: int, n: int, tiles: int, head: int = 1) -> list[tuple[int, int, int]]:
    """The (pm, pn, pk) grids the planner considers for an [m x k] x [k x n] matmul."""
    out = []
    n_parts = max(1, -(-n // max(head, 16)))
    for pm in divisor_like(m, tiles):
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
) -> tuple[GemmChoice, ...]:
    """Every (pm, pn, pk) grid with its estimated cycles and working set per tile.

    `a_moves` says the lhs exists already (in `a_current` if given: a candidate whose lhs layout
    equals it needs no exchange); `b_moves` says the rhs must be exchanged into place.
    Memoized per target object: the plan search prices the same few matmuls once per plan."""
    key = (m, k, n, esize, a_moves, b_moves, head, a_current, r_want)
    found, hit = _GEMM_MEMO.get(key, target)
    if found and hit is not None:
        return hit
    out = tuple(
        gemm_candidate(m, k, n, esize, a_moves, target, b_moves, head, a_current, g, r_want)
        for g in gemm_grids(m, k, n, target.tiles, head)
    )
    _GEMM_MEMO.put(key, target, out)
    return out


T = TypeVar("T")


class _TargetMemo(Generic[T]):
    """A bounded LRU of results per target object: the plan search prices the same few shapes
    once per plan. Entries hold their target, so a key's `id(target)` is never reused."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.items: OrderedDict[tuple, tuple[Target, T]] = OrderedDict()

    def get(self, key: tuple, target: Target) -> tuple[bool, T | None]:
        hit = self.items.get((id(target), *key))
        if hit is None or hit[0] is not target:
            return False, None
        self.items.move_to_end((id(target), *key))
        return True, hit[1]

    def put(self, key: tuple, target: Target, value: T) -> None:
        self.items[(id(target), *key)] = (target, value)
        if len(self.items) > self.limit:
            self.items.popitem(last=False)


_GEMM_MEMO: _TargetMemo[tuple[GemmChoice, ...]] = _TargetMemo(512)


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
) -> GemmChoice:
    """The `rank`-th cheapest candidate whose working set fits beside `reserved` bytes live
    elsewhere (rank 0: the cheapest); `counts` receives how many fit."""
    cands = gemm_candidates(m, k, n, esize, a_moves, target, b_moves, head, a_current, r_want)
    budget = op_budget(target, reserved)
    fits = [c for c in cands if c.bytes_per_tile <= budget]
    if not fits:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {target.name}: matmul [{m}x{k}] x [{k}x{n}] needs at least "
            f"{best.bytes_per_tile} bytes per tile (grid {best.pm}x{best.pn}x{best.pk}); "
            f"per-op budget is {int(budget)} of {target.memory_size} bytes ({reserved} held by live values)"
        )
    fits.sort(key=lambda c: (c.cycles, c.bytes_per_tile))
    if counts is not None:
        counts.append(len(fits))
    return fits[min(rank, len(fits) - 1)]


@dataclass(frozen=True)
class SerialChoice:
    pm: int
    pn: int
    steps: int
    cycles: int
    bytes_per_tile: int


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


def serial_grids(m: int, n: int, tiles: int) -> list[tuple[int, int]]:
    """The (pm, pn) output grids the serial GEMM weighs: every distinct row split, and for each
    every distinct column split (blocks of at least 16 columns) that uses at least 3/4 of the
    tiles, or the most column parts when none does. Near-square output blocks receive the
    fewest words per step ((bm + bn) kc), many column parts give the AMP longer rows: only the
    priced cost can tell which wins."""
    out = []
    for pm in block_parts(m, tiles):
        most = min(tiles // pm, max(1, n // 16))
        out += [(pm, pn) for pn in block_parts(n, most) if 4 * pm * pn >= 3 * tiles or pn == most]
    return out


_SERIAL_MEMO: _TargetMemo[SerialChoice | None] = _TargetMemo(256)


def serial_candidate(m: int, k: int, n: int, esize: int, target: Target, pm: int, pn: int, steps: int) -> SerialChoice:
    """An output-stationary (pm, pn) grid stepping the contraction in `steps` chunks, priced as
    the plan's `plan.gemm_serial` is (`serial_gemm_cost`)."""
    bm, bn = math.ceil(m / pm), math.ceil(n / pn)
    bn += bn % 2
    kc = math.ceil(k / steps)
    kc += kc % 2
    mem = bm * kc * esize + kc * bn * esize + bm * bn * (4 + esize)
    comp, x = serial_gemm_cost(target, bm, bn, k, steps, esize)
    return SerialChoice(pm, pn, steps, comp + x, mem)


def choose_serial_gemm(
    m: int, k: int, n: int, esize: int, target: Target, reserved: int, cap: float | None = None
) -> SerialChoice | None:
    """Output-stationary (pm, pn) grid and the fewest contraction steps that fit the per-op
    budget. With a `cap` (bytes per tile, for a matmul leaned to make the plan fit): the
    cheapest within the cap, else the smallest working set within the budget."""
    key = (m, k, n, esize, reserved, cap)
    found, hit = _SERIAL_MEMO.get(key, target)  # the search prices a thousand grids: once per shape
    if found:
        return hit
    budget = op_budget(target, reserved)
    best: SerialChoice | None = None
    leanest: SerialChoice | None = None
    limit = budget if cap is None else min(cap, budget)
    for pm, pn in serial_grids(m, n, target.tiles):
        for steps in SERIAL_STEPS:
            c = serial_candidate(m, k, n, esize, target, pm, pn, steps)
            if c.bytes_per_tile <= budget and (leanest is None or c.bytes_per_tile < leanest.bytes_per_tile):
                leanest = c
            if c.bytes_per_tile > limit:
                continue
            if best is None or (c.cycles, c.bytes_per_tile) < (best.cycles, best.bytes_per_tile):
                best = c
            break
    out = best if best is not None or cap is None else leanest
    _SERIAL_MEMO.put(key, target, out)
    return out


@dataclass(frozen=True)
class AttentionChoice:
    form: str
    grid: tuple[int, int, int, int]
    rows: int  # query rows per tile (state block)
    out_rows: int  # rows per tile after the combine
    keys: int  # keys per update call (materialized: the tile's key block; streamed: the window)
    cycles: int
    bytes_per_tile: int
    interleaved_bytes: int  # of bytes_per_tile, those the AMP streams (query, key and value blocks)


def attention_candidates(
    hq: int, hkv: int, s: int, sk: int, d: int, esize: int, form: str, target: Target, bias: bool = False
) -> list[AttentionChoice]:
    """Grids (kv heads, group, query blocks, key blocks) and block sizes with estimated cycles.
    With an additive `bias`, each tile also holds its bias block, laid out like its scores
    (materialized: [qr, kr]; streamed: [qr, Sk], all keys), and adds it in every update.
    Candidates are priced as map-tiles builds them: the query block scaled once, the first key
    block starting the state (`attention_start`), every update at scale 1. (With fp32 scores,
    ranking so had moved the transformer block's attention to a grid whose neighbours cost
    more; with the scores in the inputs' dtype it picks the same grids as ranking by scaled
    updates on every mk2 example.)"""
    g = hq // hkv
    per = target.tiles // hq
    if per < 1:
        raise DiagnosticException(
            f"plan-ops: {hq} query heads need at least {hq} tiles; {target.name} has {target.tiles}"
        )
    over = target.phase_overhead_cycles()
    cands: list[AttentionChoice] = []
    if form == "materialized":
        for pk in range(1, per + 1):
            pq = min(per // pk, s)
            ob = math.ceil(s / (pq * pk))
            qr, kr = ob * pk, math.ceil(sk / pk)
            kr += kr % 2
            mem = (
                qr * d * esize
                + 2 * kr * d * esize
                + qr * kr * esize
                + qr * (d + 2) * 4
                + pk * ob * (d + 2) * 4
                + ob * d * esize
                + 16
                + (qr * kr * esize if bias else 0)
            )
            exch = (qr * d * esize + 2 * kr * d * esize + (pk - 1) * ob * (d + 2) * 4) // 4 + 2 * over
            cyc = (
                target.attention_prescale_cycles(qr, d, esize)
                + target.attention_steps_cycles(qr, kr, d, esize, 1, bias)
                + target.attention_combine_cycles(pk, ob, d)
                + exch
            )
            inter = (qr + 2 * kr) * d * esize
            cands.append(AttentionChoice(form, (hkv, g, pq, pk), qr, ob, kr, cyc, mem, inter))
    else:
        pq = min(per, s)
        qr = math.ceil(s / pq)
        for kb in (32, 64, 128, 256, 512, 1024):
            if kb > max(sk, 32):
                break
            steps = math.ceil(sk / kb)
            # the windows' source tiles (`attention_window`) also keep their key and value blocks
            inter = (qr + 4 * kb) * d * esize
            mem = qr * d * esize + 4 * kb * d * esize + qr * kb * esize + 2 * qr * (d + 2) * 4 + qr * d * esize + 16
            mem += qr * (sk + sk % 2) * esize if bias else 0
            moves = steps * ((2 * kb * d + (qr * kb if bias else 0)) * esize // 4 + over)
            cyc = (
                target.attention_prescale_cycles(qr, d, esize)
                + target.attention_steps_cycles(qr, kb, d, esize, steps, bias)
                + moves
                + target.attention_combine_cycles(1, qr, d)
            )
            cands.append(AttentionChoice(form, (hkv, g, pq, 1), qr, qr, kb, cyc, mem, inter))
    return cands


def choose_attention(
    hq: int,
    hkv: int,
    s: int,
    sk: int,
    d: int,
    esize: int,
    form: str,
    target: Target,
    rank: int = 0,
    counts: list[int] | None = None,
    bias: bool = False,
) -> AttentionChoice:
    """The `rank`-th cheapest attention candidate that fits (rank 0: the cheapest)."""
    cands = attention_candidates(hq, hkv, s, sk, d, esize, form, target, bias)
    budget = op_budget(target)
    inter_cap = MEMORY_FRACTION * sum(r.size for r in target.regions if r.interleaved)
    fits = [c for c in cands if c.bytes_per_tile <= budget and c.interleaved_bytes <= inter_cap]
    if not fits:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {target.name}: {form} attention [{hq}x{s}x{d}] over {sk} keys needs at "
            f"least {best.bytes_per_tile} bytes per tile (grid {'x'.join(map(str, best.grid))}); per-op budget is "
            f"{int(budget)} of {target.memory_size} bytes"
            + ('; try form = "streamed"' if form == "materialized" else "")
        )
    fits.sort(key=lambda c: (c.cycles, c.bytes_per_tile))
    if counts is not None:
        counts.append(len(fits))
    return fits[min(rank, len(fits) - 1)]


@dataclass(frozen=True)
class GatherChoice:
    """An embedding lookup's (row blocks pv, column blocks pd) grid, priced: the slice kernel,
    and when pv > 1 the exchange of the f32 partials and their reduce."""

    pv: int
    pd: int
    cycles: int
    bytes_per_tile: int
    table_bytes: int  # the table block per tile (resident)

    @property
    def grid(self) -> tuple[int, int]:
        return (self.pv, self.pd)


def gather_result_rows(s: int, pv: int) -> int:
    """Row parts of the reduced result: the partials are summed into row blocks of the S rows."""
    return max(1, min(pv, s))


def gather_candidate(v: int, d: int, s: int, esize: int, target: Target, pv: int, pd: int) -> GatherChoice:
    rb = math.ceil(v / pv)
    cb = math.ceil(math.ceil(d / pd) / 2) * 2
    table = rb * cb * esize
    out_e = 4 if pv > 1 else esize
    part = s * cb * out_e
    work = table + s * 4 + 8 + part
    cyc = target.multi_slice_cycles(s, cb * out_e)
    if pv > 1:
        rr = math.ceil(s / gather_result_rows(s, pv))
        stage, res = pv * rr * cb * 4, rr * cb * esize
        work = max(work, table + part + stage + res)
        exch = (part - part // pv) // 4 + target.phase_overhead_cycles()
        cyc += target.reduce_cycles(pv, rr * cb) + exch
    return GatherChoice(pv, pd, cyc, work, table)


def gather_grids(v: int, d: int, tiles: int) -> list[tuple[int, int]]:
    """(pv, pd) grids: column blocks of at least two elements (whole 32-bit words), row blocks
    of at least one row, over at most `tiles` tiles."""
    return [(pv, pd) for pd in divisor_like(max(d // 2, 1), tiles) for pv in divisor_like(v, tiles // pd)]


def choose_gather(
    v: int,
    d: int,
    s: int,
    esize: int,
    target: Target,
    reserved: int = 0,
    pin: tuple[int, int] | None = None,
    where: str = "graph.gather",
    rank: int = 0,
    counts: list[int] | None = None,
    prefer: tuple[int, int] | None = None,
) -> GatherChoice:
    """The `rank`-th cheapest grid (rank 0: the cheapest) whose working set fits beside
    `reserved` bytes and whose table block, a resident weight, stays within the weights' share of
    tile memory (the fewest bytes when no grid keeps it there); `counts` receives how many such
    grids there are. `prefer` (the grid the table already lives on, placed by an earlier lookup)
    ranks first when it fits: another grid would exchange the whole table on every run. A pinned
    grid is priced and refused when it does not fit."""
    budget = op_budget(target, reserved)
    if pin is not None:
        if pin[0] > v or pin[1] > max(d // 2, 1) or pin[0] * pin[1] > target.tiles:
            raise DiagnosticException(
                f"plan-ops: {where}: gather grid {pin[0]}x{pin[1]} does not fit table [{v}x{d}] on {target.name} "
                f"({target.tiles} tiles; at most {v} row blocks and {max(d // 2, 1)} column blocks of two columns)"
            )
        c = gather_candidate(v, d, s, esize, target, *pin)
        if c.bytes_per_tile > budget:
            raise DiagnosticException(
                f"plan-ops: {where}: gather grid {pin[0]}x{pin[1]} needs {c.bytes_per_tile} bytes per tile; "
                f"target {target.name}'s per-op budget is {int(budget)}"
            )
        return c
    grids = gather_grids(v, d, target.tiles)
    if prefer is not None and prefer not in grids:
        grids.append(prefer)  # the table's grid (a valid one: the emitter read it from its layout)
    cands = [gather_candidate(v, d, s, esize, target, pv, pd) for pv, pd in grids]
    fits = [c for c in cands if c.bytes_per_tile <= budget]
    if not fits:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {target.name}: gather from table [{v}x{d}] needs at least "
            f"{best.bytes_per_tile} bytes per tile (grid {best.pv}x{best.pd}); per-op budget is {int(budget)} of "
            f"{target.memory_size} bytes ({reserved} held by live values)"
        )
    share = WEIGHT_FRACTION * target.memory_size
    small = sorted((c for c in fits if c.table_bytes <= share), key=lambda c: (c.cycles, c.bytes_per_tile, c.pv))
    order = small or sorted(fits, key=lambda c: (c.table_bytes, c.cycles, c.pv))
    order.sort(key=lambda c: c.grid != prefer)  # stable: the rest keep their order
    if counts is not None:
        counts.append(len(order))
    return order[min(rank, len(order) - 1)]
