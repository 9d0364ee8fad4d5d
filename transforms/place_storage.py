"""`place-storage`: give every buffer an address, shared by all tiles of its group.

Lifetimes run from a buffer's defining op to its last use (weights live for the whole
program). Interleaved buffers are placed first-fit from the top of the interleaved region down;
standard buffers first-fit from the end of the code up, through the non-interleaved region and
on into the interleaved one (the regions are adjacent, and standard data has no element rule).
A model that does not fit gets a diagnostic naming the value, the bytes needed, the bytes live
(and the largest live values) and the capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import exchange, tilemap
from ipu.target import Target, load_target
from ipu.transforms.log import log_event

ALIGN = 32  # AMP operands are 32-byte aligned (MF 1.3)


def _ranges(target: Target, memory: str) -> list[tuple[int, int, str]]:
    """Where a class may live. Standard data may use all data memory (the regions are adjacent,
    so a standard buffer may straddle them); interleaved data only the interleaved region."""
    if memory == "interleaved":
        return [(r.start, r.end, r.name) for r in target.regions if r.interleaved]
    lo = target.memory_base + target.code_reserve_bytes
    return [(lo, target.memory_end, "standard")]


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


def place_function(f: func.FuncOp, target: Target) -> dict[str, int]:
    ops = list(f.body.block.ops)
    last: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for v in op.operands:
            last[v] = i
    live: list[tuple[int, int, SSAValue]] = []  # (address, end, value)
    peaks = {"standard": 0, "interleaved": 0, "total": 0}
    biggest_std = 0
    # weights are loaded by `initialize` before the program starts: place them first
    order = [(i, op) for i, op in enumerate(ops) if isinstance(op, tilemap.WeightOp)]
    order += [(i, op) for i, op in enumerate(ops) if not isinstance(op, tilemap.WeightOp)]
    for i, op in order:
        live = [x for x in live if last.get(x[2], -1) >= i or isinstance(x[2].owner, tilemap.WeightOp)]
        if not op.results or not isinstance(op.results[0].type, tilemap.BufferType):
            continue
        v = op.results[0]
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
            op.attributes["slot"] = s_slot
            continue
        addr = None
        for lo, hi, region in _ranges(target, bt.memory.data):
            # standard data grows up from the code, interleaved data down from the top of memory
            top_down = bt.memory.data == "interleaved"
            a = _fit(live, lo, hi, size, top_down)
            if a is not None:
                addr, reg = a, region
                break
        if addr is None:
            live_bytes = sum(e - s for s, e, _ in live)
            cap = sum(hi - lo for lo, hi, _ in _ranges(target, bt.memory.data))
            biggest = sorted(live, key=lambda x: x[0] - x[1])[:4]
            names = ", ".join(f"%{x[2].name_hint} {x[1] - x[0]}" for x in biggest)
            raise DiagnosticException(
                f"model does not fit target {target.name}: value %{v.name_hint or i} ({op.name}) needs {size} "
                f"bytes of {bt.memory.data} memory on tiles [{bt.first.data}, {bt.first.data + bt.count.data}) "
                f"while {live_bytes} bytes are live (largest: {names}); {bt.memory.data} capacity is {cap} "
                "bytes per tile"
            )
        live.append((addr, addr + size, v))
        op.attributes["slot"] = exchange.SlotAttr(addr, size, reg)
        inter = sum(e - s for s, e, x in live if x.type.memory.data == "interleaved")
        total = sum(e - s for s, e, _ in live)
        peaks["interleaved"] = max(peaks["interleaved"], inter)
        peaks["standard"] = max(peaks["standard"], total - inter)
        peaks["total"] = max(peaks["total"], total)
        if bt.memory.data == "standard":
            biggest_std = max(biggest_std, size)
    figures = {
        "peak_standard_bytes": peaks["standard"],
        "peak_interleaved_bytes": peaks["interleaved"],
        "peak_total_bytes": peaks["total"],
        "maximum_standard_allocation_bytes": biggest_std,
    }
    f.attributes["exchange.memory"] = DictionaryAttr({k: IntegerAttr(v, 64) for k, v in figures.items()})
    return figures


def slot(v: SSAValue) -> exchange.SlotAttr:
    s = v.owner.attributes.get("slot")  # type: ignore[union-attr]
    if not isinstance(s, exchange.SlotAttr):
        raise DiagnosticException(f"value %{v.name_hint} has no storage slot; run place-storage first")
    return s


@dataclass(frozen=True)
class PlaceStoragePass(ModulePass):
    """Assign each buffer an address within its memory class's regions."""

    name = "place-storage"
    target: str = "mk2"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        t = load_target(self.target)
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and "tilemap.mapping" in f.attributes:
                figures = place_function(f, t)
                log_event("placed storage", function=f.sym_name.data, **figures)
