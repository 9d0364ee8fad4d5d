"""Analytical cost of a planned function, read from the `plan` IR and the target.

Every figure is derived from the layouts the plan will emit (principle 2):
- compute cycles per op from the kernel each op lowers to (block shapes -> target formulas);
- exchange cycles per layout conversion: the words the busiest destination tile receives
  (4 bytes a cycle), one sync and one route tail per phase, and a control cost per incoming
  fragment (a source block overlapping the destination block: ST 3.4, 160 cycles);
- exchange-row bytes: 4 * (phases + 7 * fragments per tile) (ipu-stack's row footprint form);
- per-tile memory peaks by class over value lifetimes (weights live throughout), the worst
  tile's: a value occupies only its layout's tiles, as in place-storage; the largest standard
  allocation, and whether they fit the target's regions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue

from ipu.abi.isa import CODE_GRAIN, INSTRUCTION_WORDS, SIMPLE_WORDS, Opcode
from ipu.abi.kernels import KERNELS
from ipu.dialects import plan
from ipu.target import Target
from ipu.transforms.plan.families import cost_of
from ipu.transforms.plan.pricing import esize_of
from ipu.transforms.plan.state import function_reserve

METRIC_FIELDS = (
    "values",
    "operations",
    "estimated_cycles",
    "estimated_exchange_cycles",
    "exchange_row_bytes",
    "code_bytes",
    "peak_standard_bytes",
    "peak_interleaved_bytes",
    "peak_total_bytes",
    "maximum_standard_allocation_bytes",
)


@dataclass
class PlanMetrics:
    values: int = 0
    operations: int = 0
    estimated_cycles: int = 0
    estimated_exchange_cycles: int = 0
    exchange_row_bytes: int = 0
    code_bytes: int = 0  # the tile program's size, estimated from its kernel calls and phases
    peak_standard_bytes: int = 0
    peak_interleaved_bytes: int = 0
    peak_total_bytes: int = 0
    maximum_standard_allocation_bytes: int = 0
    active_tile_counts: set[int] = field(default_factory=set)
    padding_group_counts: set[int] = field(default_factory=set)
    conversion_sources: list[str] = field(default_factory=list)
    fits: bool = True

    def pareto_key(self) -> tuple[int, ...]:
        """Dimensions of Pareto dominance (smaller is better)."""
        return (
            self.estimated_cycles,
            self.estimated_exchange_cycles,
            self.peak_standard_bytes,
            self.peak_interleaved_bytes,
            self.peak_total_bytes,
            self.maximum_standard_allocation_bytes,
            self.exchange_row_bytes,
        )

    def log_fields(self) -> dict[str, object]:
        out: dict[str, object] = {k: getattr(self, k) for k in METRIC_FIELDS}
        out["active_tile_counts"] = "{" + ", ".join(str(x) for x in sorted(self.active_tile_counts)) + "}"
        out["padding_group_counts"] = "{" + ", ".join(str(x) for x in sorted(self.padding_group_counts)) + "}"
        out["conversion_sources"] = "[" + ", ".join(self.conversion_sources) + "]"
        return out


def dominates(a: PlanMetrics, b: PlanMetrics) -> bool:
    ka, kb = a.pareto_key(), b.pareto_key()
    return all(x <= y for x, y in zip(ka, kb, strict=True)) and ka != kb


def _bytes(v: SSAValue) -> int:
    return v.type.layout.block_elements * esize_of(v.type)


def _walk(block: Block, mult: int = 1) -> Iterator[tuple[Operation, int]]:
    for op in block.ops:
        yield op, mult
        if isinstance(op, plan.RepeatOp):
            yield from _walk(op.body.block, mult * op.count.value.data)


def estimate(f: func.FuncOp, t: Target) -> PlanMetrics:
    """The metrics of one planned function."""
    m = PlanMetrics()
    phases = frags = words = 0
    seq: list[Operation] = []
    for op, mult in _walk(f.body.block):
        seq.append(op)
        comp, exch, ph, fr = cost_of(op, t)
        m.estimated_cycles += mult * (comp + exch)
        m.estimated_exchange_cycles += mult * exch
        phases += ph
        frags += fr
        words += _PHASE_WORDS * ph + _CALL_WORDS * _kernel_calls(op)
        if isinstance(op, plan.RearrangeOp):
            m.conversion_sources.append(op.reason.data if op.reason else op.name)
        for r in op.results:
            if isinstance(r.type, plan.PlanTensorType):
                m.values += 1
                m.active_tile_counts.add(r.type.layout.tiles)
                m.padding_group_counts.update(r.type.layout.padding_groups)
        if not isinstance(op, plan.YieldOp | func.ReturnOp):
            m.operations += 1
    m.values += len(f.args)
    m.exchange_row_bytes = 4 * (phases + 7 * frags)
    m.code_bytes = -(-(words + 4 * INSTRUCTION_WORDS) * 4 // CODE_GRAIN) * CODE_GRAIN
    _memory(f, seq, m, t)
    return m


_PHASE_WORDS = SIMPLE_WORDS[Opcode.SYNC] + SIMPLE_WORDS[Opcode.EXCHANGE]
_CALL_WORDS = max(k.call_words for k in KERNELS.values())  # an upper bound: the kernel is map-tiles' choice

_NO_KERNEL = (plan.ParameterOp, plan.RearrangeOp, plan.YieldOp, func.ReturnOp)


def _kernel_calls(op: Operation) -> int:
    """Kernel calls one plan op puts in the tile program (beside its phases' exchange and sync
    instructions): a serial gemm one per step and its output copy, an attention its state fill
    and its update, a repeat its loop's two instructions; the body of a repeat is walked once."""
    if isinstance(op, plan.SerialGemmOp):
        return op.k_steps.value.data + 1
    if isinstance(op, plan.AttentionOp):
        return 2
    if isinstance(op, plan.RepeatOp):
        return 2
    return 0 if isinstance(op, _NO_KERNEL) or op.dialect_name() != "plan" else 1


def _peaks(m: PlanMetrics, occupied: np.ndarray) -> None:
    std, inter = occupied
    m.peak_standard_bytes = max(m.peak_standard_bytes, int(std.max()))
    m.peak_interleaved_bytes = max(m.peak_interleaved_bytes, int(inter.max()))
    m.peak_total_bytes = max(m.peak_total_bytes, int((std + inter).max()))


def _staging(op: Operation) -> tuple[int, slice]:
    """(bytes per tile, tiles) of the buffer map-tiles stages a partial sum's parts in before
    reducing or combining them ([parts, *result block] in standard memory on the result's tiles):
    no plan value, so the op adds it to the peaks itself; (0, empty) for other ops."""
    if isinstance(op, plan.ReduceOp | plan.AttentionCombineOp):
        src, lay = op.operands[0].type.layout, op.results[0].type.layout
        block = lay.block_elements  # a combine stages states [.., d + 2] of its result's [.., d] block
        if isinstance(op, plan.AttentionCombineOp):
            block = block // lay.block[-1] * src.shape[-1]
        e = esize_of(op.operands[0].type)  # the partials' type: f32, or f16 (half partials)
        return e * src.partials * block, slice(lay.first_tile, lay.first_tile + lay.tiles)
    return 0, slice(0, 0)


def _scratch(op: Operation) -> tuple[int, int, slice]:
    """(standard, interleaved) bytes per tile, and the tiles, of the buffers map-tiles gives an op
    beside its operands and result while it runs: a swapped gemm's transposed product; a serial
    gemm's windows (the rhs's interleaved) and fp32 accumulator (interleaved); an attention's
    score scratch (in the inputs' dtype), offsets, scaled query block and, streamed, one key and
    one value window (interleaved: the AMP streams them) and one bias window; a norm over
    column blocks' own and gathered statistics; (0, 0, empty) for other ops."""
    if isinstance(op, plan.GemmOp) and op.swapped is not None:  # the AMP's transposed product
        r = op.result.type.layout
        return r.block_elements * esize_of(op.result.type), 0, slice(r.first_tile, r.first_tile + r.tiles)
    if isinstance(op, plan.SerialGemmOp):  # a step's two windows and the fp32 accumulator
        r = op.result.type.layout
        e = esize_of(op.lhs.type)
        _, kc = plan.serial_window(op.lhs.type.shape[1], r.partials, op.k_steps.value.data)
        bm, bn = r.block
        # a split contraction's accumulator is its result (a plan value); else the copy's source
        acc = bm * bn * 4 if r.partial < 0 else 0
        return bm * kc * e, kc * bn * e + acc, slice(r.first_tile, r.first_tile + r.tiles)
    if isinstance(op, plan.RowwiseOp) and plan.split_norm_parts(op.input.type.layout) > 1:  # a norm's statistics
        own, gathered = plan.norm_stats_layouts(a := op.input.type.layout)
        return (own.block_elements + gathered.block_elements) * 4, 0, slice(a.first_tile, a.first_tile + a.tiles)
    if not isinstance(op, plan.AttentionOp):
        return 0, 0, slice(0, 0)
    st = op.result.type.layout
    qr, d = st.block[1], st.shape[2] - 2
    e = esize_of(op.q.type)
    std = 16 + (qr * d * e if op.scale.value.data != 1.0 else 0)
    if op.form.data == "materialized":
        return std + qr * op.k.type.layout.block_size(1) * e, 0, slice(st.first_tile, st.first_tile + st.tiles)
    kb = min(op.key_block.value.data, op.k.type.shape[1])
    std += qr * kb * e + (qr * (kb + kb % 2) * esize_of(op.bias.type) if op.bias is not None else 0)
    return std, 2 * kb * d * esize_of(op.k.type), slice(st.first_tile, st.first_tile + st.tiles)


def _memory(f: func.FuncOp, seq: list[Operation], m: PlanMetrics, t: Target) -> None:
    """Per-tile peaks by class: each value adds its block bytes (the per-tile upper bound) to the
    tiles of its layout, [first_tile, first_tile + tiles), from its definition to its last use, so
    values on disjoint tile ranges do not add up (place-storage gives them the same address)."""
    last: dict[SSAValue, int] = {}
    for i, op in enumerate(seq):
        for v in op.operands:
            last[v] = i
    values = list(f.args) + [r for op in seq for r in op.results if isinstance(r.type, plan.PlanTensorType)]
    ends = [v.type.layout.first_tile + v.type.layout.tiles for v in values]
    occupied = np.zeros((2, max([t.tiles, *ends])), np.int64)  # [standard, interleaved] bytes per tile
    live: list[SSAValue] = []

    def occupy(v: SSAValue, sign: int) -> None:
        lay = v.type.layout
        cls = int(v.type.layout_attr.memory.data == "interleaved")
        occupied[cls, lay.first_tile : lay.first_tile + lay.tiles] += sign * _bytes(v)

    weights = [op.result for op in seq if isinstance(op, plan.ParameterOp)]
    for v in [*f.args, *weights]:
        occupy(v, 1)
    live += f.args
    forever = set(weights)
    for i, op in enumerate(seq):
        born = [r for r in op.results if isinstance(r.type, plan.PlanTensorType) and r not in forever]
        for r in born:
            occupy(r, 1)
            live.append(r)
            if r.type.layout_attr.memory.data == "standard":
                m.maximum_standard_allocation_bytes = max(m.maximum_standard_allocation_bytes, _bytes(r))
        stage, tiles = _staging(op)
        if stage:  # live only while the op runs: with its input (the move), then with its result (the kernel)
            m.maximum_standard_allocation_bytes = max(m.maximum_standard_allocation_bytes, stage)
            src = op.operands[0]
            for step in (list(born), [src] if last.get(src, -1) <= i and src in live else []):
                for v in step:
                    occupy(v, -1)
                occupied[0, tiles] += stage
                _peaks(m, occupied)
                occupied[0, tiles] -= stage
                for v in step:
                    occupy(v, 1)
        std, inter, tiles = _scratch(op)
        if std or inter:  # live while the op runs, beside its operands and result
            occupied[:, tiles] += np.array([[std], [inter]])
            _peaks(m, occupied)
            occupied[:, tiles] -= np.array([[std], [inter]])
        if born or not i:  # peaks only grow where something was added
            _peaks(m, occupied)
        keep = []
        for v in live:
            if last.get(v, -1) <= i:
                occupy(v, -1)
            else:
                keep.append(v)
        live = keep
    m.fits = not overflow(m, t, function_reserve(f))


def code_and_rows(m: PlanMetrics, t: Target) -> tuple[int, int]:
    """The bytes per tile below a plan's data: its code (at least the target's reserve) and its
    exchange rows, taken to fill the rest of the executable region at most (see `overflow`)."""
    code = max(t.code_reserve_bytes, m.code_bytes)
    executable = sum(r.size for r in t.regions if r.executable)
    return code, min(m.exchange_row_bytes, max(0, executable - code))


def overflow(m: PlanMetrics, t: Target, reserve: int = 0) -> str:
    """Why a plan with metrics `m` does not fit target `t` (empty when it fits). Its code and
    exchange rows come first in the executable region; the estimate's rows are an upper bound
    (each op's busiest tile, summed), so they are taken to fill that region at most (whether
    they really fit it place-storage measures); the data peaks share what is left, less
    `PLACEMENT_SLACK` and the function's `reserve` (`plan.reserve`), which the interleaved
    peak leaves free too."""
    code, rows = code_and_rows(m, t)
    inter_cap = sum(r.size for r in t.regions if r.interleaved) - reserve
    if m.peak_interleaved_bytes > inter_cap:
        return f"interleaved data peaks at {m.peak_interleaved_bytes} bytes per tile of {inter_cap}"
    if m.peak_total_bytes + code + rows > t.memory_size - PLACEMENT_SLACK - reserve:
        return (
            f"data peaks at {m.peak_total_bytes} bytes per tile, beside {code} bytes of code and "
            f"{rows} of exchange rows, of {t.memory_size} less {PLACEMENT_SLACK + reserve} kept for placement"
        )
    return ""


PLACEMENT_SLACK = 32768
"""Bytes per tile a plan leaves free at its peak: the peaks count bytes, but place-storage needs
each buffer in one contiguous range among buffers on other tile ranges, and a plan at 95 % of
the tile (the transformer block's 4-way K split of its up-projection: 559 KB of 585) fails there."""
