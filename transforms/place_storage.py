"""`place-storage`: give every buffer an address, shared by all tiles of its group.

Reserved first, at the bottom of the executable region: the code reserve, then the exchange
rows (the instructions of every exchange phase, sized from the scheduled tables: 4 bytes per
phase plus 28 per transfer family a tile takes part in, the busiest tile's count). Data lives
above them and below the loader's limit. Lifetimes run from a buffer's defining op to its last
use (weights live for the whole program), and dead buffers' space is reused. Interleaved
buffers are placed first-fit from the top of the interleaved region down; standard buffers
first-fit from the end of the reserved ranges up, through the non-interleaved region and on into
the interleaved one (the regions are adjacent, and standard data has no element rule). An AMP
call's output never shares a memory element (an element pair in the interleaved region) with
its left operand, whose stream it reads in the same cycles. Every address is 32-byte aligned
(AMP operands; MF 1.3). A model that does not fit gets a diagnostic naming the value, its op,
its tiles, the bytes needed, the largest free range, the bytes live (and the largest live
values) and the capacity. The function records peak bytes by class, the largest standard
allocation, the exchange-row reservation and the largest free range at the peak.
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

from ipu.abi.kernels import AMP_KERNELS
from ipu.abi.transfers import expand_members
from ipu.dialects import exchange, tasm, tilemap
from ipu.dialects.table import table_of
from ipu.target import Target
from ipu.transforms.log import log_event, quiet
from ipu.transforms.storage import set_slots, slot
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
        m = expand_members(t)
        for tile in (m.src, m.dst):
            pairs = np.unique(m.fam * tiles + tile)
            per_tile += np.bincount(pairs % tiles, minlength=tiles)
    return 4 * (phases + ROW_WORDS_PER_FAMILY * int(per_tile.max(initial=0)))


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


def _largest_free(live: list, lo: int, hi: int) -> int:
    busy = sorted((max(s, lo), min(e, hi)) for s, e, _ in live if e > lo and s < hi)
    best, a = 0, lo
    for s, e in busy:
        best = max(best, s - a)
        a = max(a, e)
    return max(best, hi - a)


def _fit(live: list, lo: int, hi: int, size: int, top_down: bool) -> int | None:
    """Lowest (or highest) 32-byte aligned address in [lo, hi) where `size` bytes are free."""
    busy = sorted((s, e) for s, e, _ in live if e > lo and s < hi)
    if not top_down:
        a = lo
        for s, e in busy:
            if a + size <= s:
                break
            a = max(a, -(-e // ALIGN) * ALIGN)
        return a if a + size <= hi else None
    a = (hi - size) // ALIGN * ALIGN
    for s, e in reversed(busy):
        if a >= e:
            break
        a = min(a, (s - size) // ALIGN * ALIGN)
    return a if a >= lo else None


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
    return last


def place_function(f: func.FuncOp, target: Target, code_bytes: int | None = None) -> dict[str, int]:
    """Place every buffer of `f` above the code region (`code_bytes`, default the target's
    `code_reserve_bytes`) and the exchange rows; returns the memory figures it records."""
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
    live: list[tuple[int, int, SSAValue]] = []  # (address, end, value)
    peaks = {"standard": 0, "interleaved": 0, "total": 0}
    biggest_std = 0
    free_at_peak = target.data_end - data_start
    # weights are loaded by `initialize` before the program starts: place them first
    order = [(i, op) for i, op in enumerate(seq) if isinstance(op, tilemap.WeightOp)]
    order += [(i, op) for i, op in enumerate(seq) if not isinstance(op, tilemap.WeightOp)]
    for i, op in order:
        live = [x for x in live if last.get(x[2], -1) >= i or isinstance(x[2].owner, tilemap.WeightOp)]
        if isinstance(op, tilemap.RepeatOp):
            values = list(op.body.block.args)  # carried buffers; the results share their slots
        elif op.results and isinstance(op.results[0].type, tilemap.BufferType):
            values = [op.results[0]]
        else:
            continue
        slots = []
        for v in values:
            bt: tilemap.BufferType = v.type
            size = -(-bt.nbytes // ALIGN) * ALIGN
            if isinstance(op, tilemap.RunOp) and op.inplace_operand() is not None:
                src = op.inputs[op.inplace_operand()]
                if last.get(src, -1) != i:
                    raise DiagnosticException(
                        f"place-storage: in-place operand %{src.name_hint} is used after %{v.name_hint}"
                    )
                s_slot = slot(src)
                live = [x for x in live if x[2] is not src]
                live.append((s_slot.address.data, s_slot.address.data + s_slot.size.data, v))
                slots.append(s_slot)
                continue
            addr = None
            # an AMP output keeps clear of its left operand's memory elements (for this fit only)
            keep_clear = []
            if isinstance(op, tilemap.RunOp) and op.kernel.data in AMP_KERNELS and op.inputs:
                lhs = slot(op.inputs[0])
                keep_clear = [(*_element_span(target, lhs.address.data, lhs.address.data + lhs.size.data), None)]
            for lo, hi, region in _ranges(target, bt.memory.data, data_start):
                # standard data grows up from the reserved ranges, interleaved data down from the top
                a = _fit(live + keep_clear, lo, hi, size, bt.memory.data == "interleaved")
                if a is not None:
                    addr, reg = a, region
                    break
            if addr is None:
                ranges = _ranges(target, bt.memory.data, data_start)
                live_bytes = sum(e - s for s, e, _ in live)
                cap = sum(hi - lo for lo, hi, _ in ranges)
                free = max(_largest_free(live + keep_clear, lo, hi) for lo, hi, _ in ranges)
                biggest = sorted(live, key=lambda x: x[0] - x[1])[:4]
                names = ", ".join(f"%{x[2].name_hint} {x[1] - x[0]}" for x in biggest)
                raise DiagnosticException(
                    f"model does not fit target {target.name}: value %{v.name_hint or i} ({op.name}) needs {size} "
                    f"bytes of {bt.memory.data} memory on tiles [{bt.first.data}, {bt.first.data + bt.count.data}) "
                    f"(tile {bt.first.data} first); the largest free range is {free} bytes, {live_bytes} bytes "
                    f"are live (largest: {names}); {bt.memory.data} capacity is {cap} bytes per tile"
                )
            live.append((addr, addr + size, v))
            slots.append(exchange.SlotAttr(addr, size, reg))
            if bt.memory.data == "standard":
                biggest_std = max(biggest_std, size)
        set_slots(op, slots)
        inter = sum(e - s for s, e, x in live if x.type.memory.data == "interleaved")
        total = sum(e - s for s, e, _ in live)
        peaks["interleaved"] = max(peaks["interleaved"], inter)
        peaks["standard"] = max(peaks["standard"], total - inter)
        if total >= peaks["total"]:
            peaks["total"] = total
            free_at_peak = _largest_free(live, data_start, target.data_end)
    figures = {
        "peak_standard_bytes": peaks["standard"],
        "peak_interleaved_bytes": peaks["interleaved"],
        "peak_total_bytes": peaks["total"],
        "maximum_standard_allocation_bytes": biggest_std,
        "exchange_row_bytes": xrows,
        "largest_free_bytes_at_peak": free_at_peak,
        "code_bytes": code,
    }
    f.attributes["exchange.memory"] = DictionaryAttr({k: IntegerAttr(v, 64) for k, v in figures.items()})
    return figures


@dataclass(frozen=True)
class PlaceStoragePass(ModulePass):
    """Assign each buffer an address within its memory class's regions."""

    name = "place-storage"
    target: str | None = None  # unset: the module's #ipu.target

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
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


CODE_GRAIN = 4096
"""A code region larger than the target's reserve is a whole number of these bytes."""


def _figures(f: func.FuncOp) -> dict[str, int]:
    return {k: v.value.data for k, v in f.attributes["exchange.memory"].data.items()}  # type: ignore[union-attr]


def measured_code_bytes(ctx: Context, module: builtin.ModuleOp) -> int:
    """The largest tile program's code bytes, measured by lowering a copy of the placed module
    (instruction counts do not depend on the addresses)."""
    from ipu.transforms.lower_to_tasm import LowerToTasmPass

    m = module.clone()
    with quiet():
        LowerToTasmPass().apply(ctx, m)
    return max((p.code_bytes() for p in m.walk() if isinstance(p, tasm.ProgramOp)), default=0)
