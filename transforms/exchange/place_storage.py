"""`place-storage`: give every buffer one address, shared by all tiles of its group.

Reserved first, at the bottom of the executable region: the code reserve, then the exchange
rows (the instructions of every exchange phase, sized from the scheduled tables: 4 bytes per
phase plus 28 per transfer family a tile takes part in, the busiest tile's count). Data lives
above them and below the loader's limit. Lifetimes run from a buffer's defining op to its last
use (weights live for the whole program), and dead buffers' space is reused.

Memory is per tile, so a buffer's address must avoid only the live buffers whose tile range
(`first`, `count` of its `!tilemap.buffer`) intersects its own: buffers on disjoint tile ranges
(the rotated row layouts of successive norms, say) may share an address. Each buffer keeps one
address for all its tiles, so the IR does not grow with the tile count; the fits are interval
checks over the live buffers' address and tile ranges (numpy masks, no loop over tiles).
Interleaved buffers are placed first-fit from the top of the interleaved region down; standard
buffers first-fit from the end of the reserved ranges up, through the non-interleaved region
and on into the interleaved one (the regions are adjacent, and standard data has no element
rule). An AMP call's output never shares a memory element (an element pair in the interleaved
region) with its left operand, whose stream it reads in the same cycles. Every address is
32-byte aligned (AMP operands; MF 1.3). A model that does not fit gets a diagnostic naming the
value, its op, its tiles, the bytes needed, the largest free range on its tiles, the bytes live
on its busiest tile (and the largest values there) and the capacity. The function records peak
bytes by class and in total, each the worst tile's (a tile's bytes are those of the live buffers
on it), the largest standard allocation, the exchange-row reservation and the largest free range
on the busiest tile at the peak.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.isa import CODE_GRAIN
from ipu.abi.kernels import AMP_KERNELS, KERNELS
from ipu.abi.transfers import D_TILE, MC, MCS, PC, PDS, PSS, S_TILE, member_index, split_start
from ipu.dialects import exchange, tasm, tilemap
from ipu.dialects.table import table_of
from ipu.log import log_event, quiet
from ipu.target import Target
from ipu.transforms.exchange.join_phases import group_of
from ipu.transforms.exchange.slots import carried_in_place, set_slots, slot
from ipu.transforms.levels import expect_level
from ipu.transforms.target_of import module_target

ALIGN = 32  # AMP operands are 32-byte aligned (MF 1.3)
ROW_WORDS_PER_FAMILY = 7  # exchange-row words per transfer family a tile takes part in (ST 3.4)


def exchange_row_bytes(f: func.FuncOp, tiles: int) -> int:
    """Bytes of exchange instructions the busiest tile holds: 4 per phase plus 28 per transfer
    family it sends or receives in (ipu-stack's row footprint, ST 3.4)."""
    phases = 0
    per_tile = np.zeros(tiles, np.int64)
    for ph in f.walk():
        if not isinstance(ph, exchange.PhaseOp):
            continue
        phases += 1
        t = table_of(ph.transfers)
        if not len(t):
            continue
        per_tile += _families_per_tile(split_start(t)[1], tiles)
    return 4 * (phases + ROW_WORDS_PER_FAMILY * int(per_tile.max(initial=0)))


def _families_per_tile(t: np.ndarray, tiles: int) -> np.ndarray:
    """How many of move table `t`'s families each tile sends or receives in (a tile counted once
    per family and side). Member p of a family sends from src + p*pss; (p, c) receives at
    dst + p*pds + c*mcs: those are distinct tiles unless a step is zero or the multicast runs
    overlap, and only such families need their tiles deduplicated."""
    pc, mc, pss, pds, mcs = (t[:, c] for c in (PC, MC, PSS, PDS, MCS))
    one_src = pss == 0
    cnt = np.where(one_src, 1, pc)
    fam = np.repeat(np.arange(len(t)), cnt)
    p = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    out = np.bincount(t[fam, S_TILE] + p * pss[fam], minlength=tiles)
    distinct = (
        ((pc == 1) | (pds != 0))
        & ((mc == 1) | (mcs != 0))
        & ((pc == 1) | (mc == 1) | (np.abs(pds) >= mc * np.abs(mcs)) | (np.abs(mcs) >= pc * np.abs(pds)))
    )
    fam, p, c = member_index(pc, mc)
    dst = t[fam, D_TILE] + p * pds[fam] + c * mcs[fam]
    keep = distinct[fam]
    out += np.bincount(dst[keep], minlength=tiles)
    if not keep.all():
        pairs = np.unique(fam[~keep] * tiles + dst[~keep])
        out += np.bincount(pairs % tiles, minlength=tiles)
    return out


def _ranges(target: Target, memory: str, data_start: int) -> list[tuple[int, int, str]]:
    """Where a class may live. Standard data may use all data memory (the regions are adjacent,
    so a standard buffer may straddle them); interleaved data only the interleaved region."""
    if memory == "interleaved":
        return [
            (max(r.start, data_start), min(r.end, target.data_end), r.name) for r in target.regions if r.interleaved
        ]
    return [(data_start, target.data_end, "standard")]


def _element_span(target: Target, lo: int, hi: int) -> tuple[int, int]:
    """The memory elements [lo, hi) touches, as an address range: 16 KiB elements in the
    non-interleaved region, 32 KiB element pairs in the interleaved one."""

    def granule(a: int) -> tuple[int, int]:
        for r in target.regions:
            if r.start <= a < r.end:
                return r.start, target.element_bytes * (2 if r.interleaved else 1)
        return target.memory_base, target.element_bytes

    b0, g0 = granule(lo)
    b1, g1 = granule(hi - 1)
    return b0 + (lo - b0) // g0 * g0, b1 + -(-(hi - b1) // g1) * g1


def _gaps(s: np.ndarray, e: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Lengths of the runs of [lo, hi) that no interval [s, e) covers, in address order (the
    intervals may overlap: buffers on disjoint tiles share addresses)."""
    m = (e > lo) & (s < hi)
    if not m.any():
        return np.array([hi - lo], np.int64)
    o = np.argsort(s[m], kind="stable")
    s0, e0 = np.maximum(s[m][o], lo), np.minimum(e[m][o], hi)
    reach = np.maximum.accumulate(e0)  # the highest covered address up to each interval
    before = np.concatenate(([lo], reach[:-1]))
    return np.append(np.maximum(s0 - before, 0), hi - reach[-1])


def _largest_free(s: np.ndarray, e: np.ndarray, lo: int, hi: int) -> int:
    """Longest run of [lo, hi) that no interval [s, e) covers."""
    return int(_gaps(s, e, lo, hi).max())


def _free_bytes(s: np.ndarray, e: np.ndarray, lo: int, hi: int) -> int:
    """Bytes of [lo, hi) that no interval [s, e) covers."""
    return int(_gaps(s, e, lo, hi).sum())


def _fit(s: np.ndarray, e: np.ndarray, lo: int, hi: int, size: int, top_down: bool) -> int | None:
    """Lowest (or highest) 32-byte aligned address in [lo, hi) where `size` bytes miss every
    interval [s, e); the intervals may overlap one another."""
    m = (e > lo) & (s < hi)
    s, e = s[m], e[m]
    if not top_down:
        o = np.argsort(s, kind="stable")
        s, e = s[o], e[o]
        # a candidate before interval k starts above every earlier interval's (aligned) end
        a = np.maximum(lo, np.concatenate(([lo], np.maximum.accumulate(-(-e // ALIGN) * ALIGN))))
        ok = np.flatnonzero(a[:-1] + size <= s)
        addr = int(a[ok[0]] if len(ok) else a[-1])
        return addr if addr + size <= hi else None
    o = np.argsort(-e, kind="stable")
    s, e = s[o], e[o]
    # a candidate above interval k (by descending end) ends below every higher interval's start
    top = (hi - size) // ALIGN * ALIGN
    a = np.minimum(top, np.concatenate(([top], np.minimum.accumulate((s - size) // ALIGN * ALIGN))))
    ok = np.flatnonzero(a[:-1] >= e)
    addr = int(a[ok[0]] if len(ok) else a[-1])
    return addr if addr >= lo else None


def _flatten(block: Block, seq: list[Operation], loops: list[tuple[tilemap.RepeatOp, int, int]]) -> None:
    """Pre-order op sequence; each repeat spans [its position, its yield's position]."""
    for op in block.ops:
        seq.append(op)
        if isinstance(op, tilemap.RepeatOp):
            start = len(seq) - 1
            _flatten(op.body.block, seq, loops)
            loops.append((op, start, len(seq) - 1))


def _lifetimes(seq: list[Operation], loops: list[tuple[tilemap.RepeatOp, int, int]]) -> dict[SSAValue, int]:
    """Last use of every buffer. A value read inside a loop but defined before it (or carried
    by it) lives to the loop's end; a carried value also lives as long as the loop's result."""
    pos = {op: i for i, op in enumerate(seq)}

    def defined_at(v: SSAValue) -> int:
        if isinstance(v, BlockArgument):
            return pos[v.block.parent_op()]  # type: ignore[index]
        return pos[v.owner]  # type: ignore[index]

    last: dict[SSAValue, int] = {}
    for i, op in enumerate(seq):
        for v in op.operands:
            u = i
            for _, s0, e0 in loops:
                if s0 < i <= e0 and defined_at(v) <= s0:
                    u = max(u, e0)
            last[v] = max(last.get(v, -1), u)
    for rep, _, e0 in loops:
        for arg, res in zip(rep.body.block.args, rep.results, strict=True):
            last[arg] = max(last.get(arg, -1), e0, last.get(res, -1))

    def live_to(v: SSAValue, i: int) -> None:
        """`v`'s allocation lives to `i`: through the views of it before `i` (one allocation, the
        view's input read by nothing after it), the last of them lives to `i`."""
        while True:
            view = next((u.operation for u in v.uses if isinstance(u.operation, tilemap.ViewOp)), None)
            if view is None or pos[view] >= i:
                break
            v = view.result
        last[v] = max(last.get(v, -1), i)

    for i, op in enumerate(seq):  # a joined phase's exchange is its group's: earlier parts' buffers live on,
        if isinstance(op, exchange.PhaseOp) and op.joined is not None:  # and what a checkpoint between samples
            group = group_of(op)
            for part in group:
                if part is op:
                    break
                live_to(part.input, i)
                live_to(part.result, i)
            for mid in seq[pos[group[0]] + 1 : i]:
                if isinstance(mid, tilemap.CheckpointOp):
                    live_to(mid.input, i)
    return last


class _Live:
    """The buffers live at one point of the program: address interval, tile interval and memory
    class per buffer, as arrays (one slot per buffer of the function), and each tile's live bytes
    by class, so that a placement query is a few interval masks rather than a loop over tiles."""

    def __init__(self, n: int, tiles: int) -> None:
        self.addr = np.zeros(n, np.int64)
        self.end = np.zeros(n, np.int64)
        self.t0 = np.zeros(n, np.int64)
        self.t1 = np.zeros(n, np.int64)
        self.last = np.zeros(n, np.int64)  # last use; weights never die
        self.alive = np.zeros(n, bool)
        self.values: list[SSAValue] = []
        self.index: dict[SSAValue, int] = {}
        self.occupied = np.zeros((2, tiles), np.int64)  # [standard, interleaved] bytes per tile

    def add(self, v: SSAValue, addr: int, size: int, last: int) -> None:
        bt: tilemap.BufferType = v.type  # type: ignore[assignment]
        k = len(self.values)
        self.values.append(v)
        self.index[v] = k
        t0, t1 = bt.first.data, bt.first.data + bt.count.data
        self.addr[k], self.end[k], self.t0[k], self.t1[k], self.last[k] = addr, addr + size, t0, t1, last
        self.alive[k] = True
        self.occupied[int(bt.memory.data == "interleaved"), t0:t1] += size

    def drop(self, k: int) -> None:
        bt: tilemap.BufferType = self.values[k].type  # type: ignore[assignment]
        self.alive[k] = False
        self.occupied[int(bt.memory.data == "interleaved"), self.t0[k] : self.t1[k]] -= self.end[k] - self.addr[k]

    def expire(self, i: int) -> None:
        """Free the buffers whose last use is before op `i`."""
        for k in np.flatnonzero(self.alive & (self.last < i)):
            self.drop(int(k))

    def on(self, t0: int, t1: int) -> np.ndarray:
        """Indices of the live buffers on some tile of [t0, t1)."""
        return np.flatnonzero(self.alive & (self.t0 < t1) & (self.t1 > t0))

    def find(self, v: SSAValue) -> int:
        return self.index[v]


class NoFit(DiagnosticException):
    """A buffer found no free range on its tiles (the message says which, and why); `shortfall`:
    its bytes beyond the largest free range there; `stranded`: the free bytes of its tiles' data
    memory outside that range (what fragmentation and the other region kept from it)."""

    def __init__(self, message: str, shortfall: int = 0, stranded: int = 0) -> None:
        super().__init__(message)
        self.shortfall = shortfall
        self.stranded = stranded


def _values(op: Operation) -> list[SSAValue]:
    """The buffers op defines: a repeat's carried buffers (its results share their slots) or its
    first result."""
    if isinstance(op, tilemap.RepeatOp):
        return list(op.body.block.args)
    if op.results and isinstance(op.results[0].type, tilemap.BufferType):
        return [op.results[0]]
    return []


def _inplace_source(op: Operation) -> SSAValue | None:
    """The buffer whose allocation `op`'s result takes over: an in-place run's operand, a view's."""
    if isinstance(op, tilemap.RunOp) and op.inplace_operand() is not None:
        return op.inputs[op.inplace_operand()]
    if isinstance(op, tilemap.ViewOp):
        return op.input
    return None


def _amp_lhs(op: Operation) -> SSAValue | None:
    """The left operand an AMP call reads while it writes its output; None for other calls and
    for a swapped AMP (it writes its scratch, and the transpose after it the output)."""
    if isinstance(op, tilemap.RunOp) and op.kernel.data in AMP_KERNELS and op.inputs:
        return op.inputs[0] if KERNELS[op.kernel.data].amp_weights == 1 else None
    return None


def _pack(
    order: list[tuple[int, Operation]], last: dict[SSAValue, int], forever: int, target: Target, data_start: int
) -> dict[SSAValue, tuple[int, str]] | None:
    """Offline packing, for when first-fit in program order fragments the tile: every lifetime is
    known, so the allocations (an in-place chain is one) are placed interleaved first, then
    largest first, each at the first free range among the allocations whose lifetime and tiles
    it shares (interleaved from the top, standard from the bottom, as first-fit does). An AMP
    call's output and left operand share no memory element. None when some allocation still
    finds no range."""
    size: list[int] = []
    rows: list[tuple[int, int, int, int, bool]] = []  # t0, t1, start, end, interleaved
    group: dict[SSAValue, int] = {}
    partners: list[tuple[int, int]] = []
    members: list[list[SSAValue]] = []
    for i, op in order:
        for v in _values(op):
            bt: tilemap.BufferType = v.type  # type: ignore[assignment]
            weight = isinstance(op, tilemap.WeightOp)
            until = max(forever if weight else last.get(v, -1), i)
            src = _inplace_source(op)
            if src is not None and src in group:
                k = group[src]
                t0, t1, s0, e0, inter = rows[k]
                rows[k] = (t0, t1, s0, max(e0, until), inter)
                group[v] = k
                members[k].append(v)
                continue
            k = len(rows)
            group[v] = k
            members.append([v])
            size.append(-(-bt.nbytes // ALIGN) * ALIGN)
            rows.append(
                (
                    bt.first.data,
                    bt.first.data + bt.count.data,
                    0 if weight else i,
                    until,
                    bt.memory.data == "interleaved",
                )
            )
            lhs = _amp_lhs(op)
            if lhs is not None and lhs in group:
                partners.append((k, group[lhs]))
    if not rows:
        return {}
    t0, t1, s0, e0, inter = (np.array(c) for c in zip(*rows, strict=True))
    sizes = np.array(size, np.int64)
    addr = np.full(len(rows), -1, np.int64)
    region = [""] * len(rows)
    pair: dict[int, list[int]] = {}
    for a, b in partners:
        pair.setdefault(a, []).append(b)
        pair.setdefault(b, []).append(a)
    for k in np.lexsort((s0, -sizes, ~inter)):
        k = int(k)
        near = (addr >= 0) & (t0 < t1[k]) & (t1 > t0[k]) & (s0 <= e0[k]) & (e0 >= s0[k])
        s, e = addr[near], addr[near] + sizes[near]
        for o in pair.get(k, []):
            if addr[o] >= 0:
                c0, c1 = _element_span(target, int(addr[o]), int(addr[o] + sizes[o]))
                s, e = np.append(s, c0), np.append(e, c1)
        for lo, hi, name in _ranges(target, "interleaved" if inter[k] else "standard", data_start):
            a = _fit(s, e, lo, hi, int(sizes[k]), bool(inter[k]))
            if a is not None:
                addr[k], region[k] = a, name
                break
        else:
            return None
    return {v: (int(addr[k]), region[k]) for k, vs in enumerate(members) for v in vs}


def _first_fit(
    live: _Live, target: Target, op: Operation, i: int, v: SSAValue, size: int, data_start: int
) -> tuple[int, str]:
    """The first free range for buffer `v` (op `i` defines it) among the live buffers on its
    tiles, and its region; raises `NoFit`, naming what is live there, when there is none."""
    bt: tilemap.BufferType = v.type  # type: ignore[assignment]
    t0, t1 = bt.first.data, bt.first.data + bt.count.data
    near = live.on(t0, t1)  # only buffers sharing a tile constrain the address
    s, e = live.addr[near], live.end[near]
    # an AMP output keeps clear of its left operand's memory elements (for this fit only)
    lhs_v = _amp_lhs(op)
    if lhs_v is not None:
        lhs = slot(lhs_v)
        c0, c1 = _element_span(target, lhs.address.data, lhs.address.data + lhs.size.data)
        s, e = np.append(s, c0), np.append(e, c1)
    ranges = _ranges(target, bt.memory.data, data_start)
    for lo, hi, region in ranges:
        # standard data grows up from the reserved ranges, interleaved data down from the top
        a = _fit(s, e, lo, hi, size, bt.memory.data == "interleaved")
        if a is not None:
            return a, region
    per_tile = live.occupied[:, t0:t1].sum(axis=0)
    worst = int(np.argmax(per_tile))
    cap = sum(hi - lo for lo, hi, _ in ranges)
    free = max(_largest_free(s, e, lo, hi) for lo, hi, _ in ranges)
    stranded = _free_bytes(s, e, data_start, target.data_end) - free  # free elsewhere on its tiles, any region
    here = [int(k) for k in near if live.t0[k] <= t0 + worst < live.t1[k]]
    biggest = sorted(here, key=lambda k: live.addr[k] - live.end[k])[:4]
    names = ", ".join(f"%{live.values[k].name_hint} {live.end[k] - live.addr[k]}" for k in biggest)
    raise NoFit(
        f"model does not fit target {target.name}: value %{v.name_hint or i} ({op.name}) needs {size} "
        f"bytes of {bt.memory.data} memory on tiles [{t0}, {t1}) (tile {t0} first); the largest "
        f"free range is {free} bytes, {per_tile[worst]} bytes are live on tile {t0 + worst} (largest: "
        f"{names}); {bt.memory.data} capacity is {cap} bytes per tile",
        size - free,
        stranded,
    )


def place_function(f: func.FuncOp, target: Target, code_bytes: int | None = None) -> dict[str, int]:
    """Place every buffer of `f` above the code region (`code_bytes`, default the target's
    `code_reserve_bytes`) and the exchange rows; returns the memory figures it records.
    First-fit in program order; when that leaves some buffer no free range, the offline packing
    (`_pack`), and the first-fit diagnostic if that fails too."""
    code = target.code_reserve_bytes if code_bytes is None else code_bytes
    xrows = -(-exchange_row_bytes(f, target.tiles) // ALIGN) * ALIGN
    data_start = target.memory_base + code + xrows
    executable_end = max((r.end for r in target.regions if r.executable), default=target.memory_base)
    if data_start > executable_end:
        raise DiagnosticException(
            f"model does not fit target {target.name}: code ({code} bytes) and exchange rows "
            f"({xrows} bytes per tile) exceed the executable region ({executable_end - target.memory_base} bytes)"
        )
    seq: list[Operation] = []
    loops: list[tuple[tilemap.RepeatOp, int, int]] = []
    _flatten(f.body.block, seq, loops)
    last = _lifetimes(seq, loops)
    forever = len(seq)  # weights are live for the whole program
    # weights are loaded by `initialize` before the program starts and never die: place them
    # first, the largest blocks first (spread weights share tiles in many overlapping ranges:
    # in program order their first fits left holes no later block fitted)
    weights = [(i, op) for i, op in enumerate(seq) if isinstance(op, tilemap.WeightOp)]
    order = sorted(weights, key=lambda w: (-w[1].results[0].type.nbytes, w[0]))
    order += [(i, op) for i, op in enumerate(seq) if not isinstance(op, tilemap.WeightOp)]
    try:
        figures = _place(target, seq, order, last, data_start, code, xrows)
    except NoFit:
        packed = _pack(order, last, forever, target, data_start)
        if packed is None:
            raise
        figures = _place(target, seq, order, last, data_start, code, xrows, packed)
        log_event("packed storage offline", function=f.sym_name.data, buffers=len(packed))
    f.attributes["exchange.memory"] = DictionaryAttr({k: IntegerAttr(v, 64) for k, v in figures.items()})
    return figures


def _place(
    target: Target,
    seq: list[Operation],
    order: list[tuple[int, Operation]],
    last: dict[SSAValue, int],
    data_start: int,
    code: int,
    xrows: int,
    given: dict[SSAValue, tuple[int, str]] | None = None,
) -> dict[str, int]:
    """Walk the program in `order`, giving each buffer its `given` address or else the first
    fit among the live buffers on its tiles; sets the slots and returns the memory figures."""
    forever = len(seq)
    buffers = [v for op in seq for v in _values(op)]
    tiles = max([target.tiles] + [v.type.first.data + v.type.count.data for v in buffers])  # type: ignore[attr-defined]
    live = _Live(len(buffers), tiles)
    peaks = {"standard": 0, "interleaved": 0, "total": 0}
    biggest_std = 0
    free_at_peak = target.data_end - data_start
    for i, op in order:
        live.expire(i)
        values = _values(op)
        if not values:
            continue
        slots = []
        for v in values:
            bt: tilemap.BufferType = v.type
            size = -(-bt.nbytes // ALIGN) * ALIGN
            until = forever if isinstance(op, tilemap.WeightOp) else last.get(v, -1)
            src = _inplace_source(op)
            if src is not None:
                through = carried_in_place(op, src)
                if last.get(src, -1) != i and not through:
                    raise DiagnosticException(
                        f"place-storage: in-place operand %{src.name_hint} is used after %{v.name_hint}"
                    )
                s_slot = slot(src)
                live.drop(live.find(src))
                live.add(v, s_slot.address.data, s_slot.size.data, max(until, last.get(src, -1)) if through else until)
                slots.append(s_slot)
                continue
            addr, reg = given[v] if given is not None else _first_fit(live, target, op, i, v, size, data_start)
            live.add(v, addr, size, until)
            slots.append(exchange.SlotAttr(addr, size, reg))
            if bt.memory.data == "standard":
                biggest_std = max(biggest_std, size)
        set_slots(op, slots)
        std, inter = live.occupied
        total = std + inter
        worst = int(np.argmax(total))
        peaks["standard"] = max(peaks["standard"], int(std.max()))
        peaks["interleaved"] = max(peaks["interleaved"], int(inter.max()))
        if total[worst] >= peaks["total"]:
            peaks["total"] = int(total[worst])
            here = live.on(worst, worst + 1)
            free_at_peak = _largest_free(live.addr[here], live.end[here], data_start, target.data_end)
    return {
        "peak_standard_bytes": peaks["standard"],
        "peak_interleaved_bytes": peaks["interleaved"],
        "peak_total_bytes": peaks["total"],
        "maximum_standard_allocation_bytes": biggest_std,
        "exchange_row_bytes": xrows,
        "largest_free_bytes_at_peak": free_at_peak,
        "code_bytes": code,
    }


@dataclass(frozen=True)
class PlaceStoragePass(ModulePass):
    """Assign each buffer an address within its memory class's regions."""

    name = "place-storage"
    target: str | None = None  # unset: the module's #ipu.target

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("exchange", "tilemap"))
        t = module_target(op, self.target, self.name)
        funcs = [f for f in op.walk() if isinstance(f, func.FuncOp) and "tilemap.mapping" in f.attributes]
        code = t.code_reserve_bytes
        for f in funcs:
            place_function(f, t, code)
        need = measured_code_bytes(ctx, op) if funcs else 0
        if need > code:  # the programs outgrow the reserve: give them what they need, place again
            code = -(-need // CODE_GRAIN) * CODE_GRAIN
            log_event("code region enlarged", reserve_bytes=t.code_reserve_bytes, code_bytes=code)
        for f in funcs:
            figures = place_function(f, t, code) if code != t.code_reserve_bytes else _figures(f)
            log_event("placed storage", function=f.sym_name.data, **figures)


def _figures(f: func.FuncOp) -> dict[str, int]:
    return {k: v.value.data for k, v in f.attributes["exchange.memory"].data.items()}  # type: ignore[union-attr]


def measured_code_bytes(ctx: Context, module: builtin.ModuleOp) -> int:
    """The largest tile program's code bytes, measured by lowering a copy of the placed module
    (instruction counts do not depend on the addresses)."""
    from ipu.transforms.tasm.lower_to_tasm import LowerToTasmPass

    m = module.clone()
    with quiet():
        LowerToTasmPass().apply(ctx, m)
    return max((p.code_bytes() for p in m.walk() if isinstance(p, tasm.ProgramOp)), default=0)
