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

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue

from ipu.abi.isa import CODE_GRAIN, INSTRUCTION_BYTES
from ipu.abi.kernels import KERNELS
from ipu.dialects import plan
from ipu.dialects.layout import Layout, _lift, conversion_load, overlap_pairs
from ipu.target import Target

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


def _esize(t: plan.PlanTensorType) -> int:
    return t.tensor.element_type.bitwidth // 8  # type: ignore[attr-defined]


def _bytes(v: SSAValue) -> int:
    return v.type.layout.block_elements * _esize(v.type)


@functools.lru_cache(maxsize=4096)
def fragments(src: Layout, dst: Layout, perm: tuple[int, ...] | None = None) -> int:
    """Source blocks overlapping one destination block (the worst one): incoming fragments."""
    s_shape, _, s_ranges, _ = _lift(src)
    d_shape, _, d_ranges, _ = _lift(dst)
    r = len(d_shape)
    perm = perm or tuple(range(r))
    if len(src.shape) == 1 and len(perm) == 1:
        perm = (0, 1)
    worst = 1
    for i in range(r):
        dst_parts = d_ranges[i]
        if len(dst_parts):
            per_part = np.bincount(overlap_pairs(s_ranges[perm[i]], dst_parts, 0)[0], minlength=len(dst_parts))
            worst *= int(per_part.max())
    return worst * src.partials


def conversion_cost(
    src: plan.PlanTensorType,
    dst: plan.PlanTensorType,
    t: Target,
    perm=None,
    s_l: Layout | None = None,
    d_l: Layout | None = None,
) -> tuple[int, int]:
    """(exchange cycles, incoming fragments per tile) of one layout conversion."""
    s_l, d_l = s_l or src.layout, d_l or dst.layout
    frag = fragments(s_l, d_l, perm)
    cycles = conversion_bound(s_l, d_l, _esize(dst), perm, t.tiles) + t.phase_overhead_cycles()
    return cycles, frag


@functools.lru_cache(maxsize=4096)
def conversion_bound(src: Layout, dst: Layout, esize: int, perm: tuple[int, ...] | None, tiles: int) -> int:
    """Words the busiest tile sends or receives in the move that converts `src` to `dst` (a
    multicast sent once): the endpoint bound the scheduler reaches, so the cycles the phase's
    transfers take."""
    seen = src.shape if perm is None else tuple(src.shape[a] for a in perm)
    if seen != dst.shape:  # a window or a broadcast, moved with an offset or replicated by
        # map-tiles: the destination block's words (this pricing knows no offset)
        return math.ceil(dst.block_elements * esize * src.partials / 4)
    sent, recv = conversion_load(src, dst, esize, perm, tiles)
    return int(max(sent.max(), recv.max()))


def _walk(block: Block, mult: int = 1) -> Iterator[tuple[Operation, int]]:
    for op in block.ops:
        yield op, mult
        if isinstance(op, plan.RepeatOp):
            yield from _walk(op.body.block, mult * op.count.value.data)


def serial_gemm_cost(t: Target, bm: int, bn: int, k: int, steps: int, esize: int) -> tuple[int, int]:
    """(compute, exchange) cycles of the output-stationary serial GEMM with [bm, bn] output
    blocks (as map-tiles builds it): per contraction step receive the two windows and multiply
    into the f32 accumulator (the first step's AMP writes it, later ones accumulate), then copy
    out."""
    kc = math.ceil(k / steps)
    kw = kc + kc % 2
    words = (bm * kc + kc * bn) * esize // 4
    comp = (
        t.amp_matmul_cycles(bm, kw, bn)
        + (steps - 1) * t.amp_matmul_cycles(bm, kw, bn, accumulate=True)
        + t.cast_cycles(bm * bn)
    )
    return comp, steps * (words + t.phase_overhead_cycles())


def op_cost(op: Operation, t: Target) -> tuple[int, int, int, int]:
    """(compute cycles, exchange cycles, phases, fragments) of one plan op."""
    if isinstance(op, plan.GemmOp):
        a, b = op.lhs.type.layout, op.rhs.type.layout
        return t.amp_matmul_cycles(a.block[0], a.block[1], b.block[1]), 0, 0, 0
    if isinstance(op, plan.ReduceOp):
        x, f = conversion_cost(op.input.type, op.result.type, t)
        r = op.result.type.layout
        return t.reduce_cycles(op.input.type.layout.partials, r.block_elements, _esize(op.result.type)), x, 1, f
    if isinstance(op, plan.RearrangeOp):
        x, f = conversion_cost(op.input.type, op.result.type, t)
        return 0, x, 1, f
    if isinstance(op, plan.PermuteOp):
        x, f = conversion_cost(op.input.type, op.result.type, t, op.permutation())
        return 0, x, 1, f
    if isinstance(op, plan.WindowOp):
        x, f = conversion_cost(op.input.type, op.result.type, t)
        return 0, x, 1, f
    if isinstance(op, plan.SplitHeadsOp):
        r_l = op.result.type.layout
        if plan.one_head_blocks(r_l):
            x, f = conversion_cost(op.input.type, op.result.type, t, d_l=plan.heads_2d(r_l))
            return 0, x, 1, f
        view = plan.heads_view(op.input.type.layout, op.result.type.shape[2])
        x, f = conversion_cost(op.input.type, op.result.type, t, (1, 0, 2), s_l=view)
        return 0, x, 1, f
    if isinstance(op, plan.MergeHeadsOp):
        view = plan.heads_view(op.result.type.layout, op.input.type.shape[2])
        x, f = conversion_cost(op.input.type, op.result.type, t, (1, 0, 2), d_l=view)
        return 0, x, 1, f
    if isinstance(op, plan.UnaryOp):
        n = op.result.type.layout.block_elements
        return KERNELS[op.kind.data].cycles(t, {"elements": n}, _esize(op.result.type)), 0, 0, 0
    if isinstance(op, plan.BinaryOp):
        n = op.result.type.layout.block_elements
        p = {"m": 1, "n": n, "b_rows": 1, "b_cols": n}
        return KERNELS[op.kind.data].cycles(t, p, _esize(op.result.type)), 0, 0, 0
    if isinstance(op, plan.SelectOp):
        n = op.result.type.layout.block_elements
        return KERNELS["select"].cycles(t, {"elements": n}, _esize(op.result.type)), 0, 0, 0
    if isinstance(op, plan.IterationSliceOp):  # `iteration_slice`: a DynamicSlice1D of the block
        n = op.result.type.layout.block_elements
        p = {"iterations": op.input.type.shape[0], "elements": n}
        return KERNELS["iteration_slice"].cycles(t, p, _esize(op.result.type)), 0, 0, 0
    if isinstance(op, plan.CastOp | plan.ReshapeOp):  # `copy` (or `repad`): a Cast1D of the block
        return KERNELS["copy"].cycles(t, {"elements": op.result.type.layout.block_elements}), 0, 0, 0
    if isinstance(op, plan.TransposeOp):
        m, n = op.input.type.layout.block
        return KERNELS["transpose"].cycles(t, {"m": m, "n": n}, _esize(op.result.type)), 0, 0, 0
    if isinstance(op, plan.RowwiseOp):
        a = op.input.type.layout
        rows, cols = math.prod(a.block[:-1]), a.block[-1]
        k, e = op.kind.data, _esize(op.result.type)
        if k == "softmax":
            return t.softmax_cycles(rows, cols, e), 0, 0, 0
        if k in ("layer_norm", "rms_norm"):
            return t.norm_cycles(rows, cols, e, shift=k == "layer_norm"), 0, 0, 0
        return t.reduce_rows_cycles(rows, cols, e), 0, 0, 0
    if isinstance(op, plan.AttentionOp):
        st = op.result.type.layout
        qr, d = st.block[1], st.shape[2] - 2
        e = _esize(op.q.type)  # the scores' dtype
        scaled = op.scale.value.data != 1.0  # then the query block is scaled once, not the scores
        pre = t.attention_prescale_cycles(qr, d, e) if scaled else 0
        bias = op.bias is not None
        if op.form.data == "materialized":  # one attention_start over the tile's key block
            kr = op.k.type.layout.block_size(1)
            return pre + t.attention_steps_cycles(qr, kr, d, e, 1, bias), 0, 0, 0
        kb = op.key_block.value.data
        steps = math.ceil(op.k.type.shape[1] / kb)
        win_words = 2 * kb * d * _esize(op.k.type) // 4
        if op.bias is not None:  # each window's bias columns of the tile's rows move in too
            win_words += qr * kb * _esize(op.bias.type) // 4
        exch = steps * (win_words + t.phase_overhead_cycles() + t.exchange["fragment_cycles"])
        return pre + t.attention_steps_cycles(qr, kb, d, e, steps, bias), exch, 2 * steps, 2
    if isinstance(op, plan.AttentionCombineOp):
        src = op.input.type.layout
        full = Layout(src.shape, src.grid, (src.split[0], src.split[1] + (src.partial,), ()), -1, src.first_tile)
        x, f = conversion_cost(op.input.type, op.input.type, t, d_l=full)
        r = op.result.type.layout
        return t.attention_combine_cycles(src.partials, r.block[1], r.shape[2], _esize(op.result.type)), x, 1, f
    if isinstance(op, plan.SerialGemmOp):
        r = op.result.type.layout
        steps = op.k_steps.value.data
        comp, x = serial_gemm_cost(t, r.block[0], r.block[1], op.lhs.type.shape[1], steps, _esize(op.lhs.type))
        return comp, x, 2 * steps, 2
    if isinstance(op, plan.EmbeddingSliceOp):
        r = op.result.type.layout
        p = {"indices": r.shape[0], "rows": op.table.type.layout.block[0], "cols": r.block[1]}
        return KERNELS["embedding_slice"].cycles(t, p, _esize(op.result.type)), 0, 0, 0
    return 0, 0, 0, 0


def estimate(f: func.FuncOp, t: Target) -> PlanMetrics:
    """The metrics of one planned function."""
    m = PlanMetrics()
    phases = frags = instructions = 0
    seq: list[Operation] = []
    for op, mult in _walk(f.body.block):
        seq.append(op)
        comp, exch, ph, fr = op_cost(op, t)
        m.estimated_cycles += mult * (comp + exch)
        m.estimated_exchange_cycles += mult * exch
        phases += ph
        frags += fr
        instructions += 2 * ph + _kernel_calls(op)
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
    m.code_bytes = -(-(instructions + 4) * INSTRUCTION_BYTES // CODE_GRAIN) * CODE_GRAIN
    _memory(f, seq, m, t)
    return m


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
    """(bytes per tile, tiles) of the f32 buffer map-tiles stages a partial sum's parts in before
    reducing or combining them ([parts, *result block] in standard memory on the result's tiles):
    no plan value, so the op adds it to the peaks itself; (0, empty) for other ops."""
    if isinstance(op, plan.ReduceOp | plan.AttentionCombineOp):
        src, lay = op.operands[0].type.layout, op.results[0].type.layout
        block = lay.block_elements  # a combine stages states [.., d + 2] of its result's [.., d] block
        if isinstance(op, plan.AttentionCombineOp):
            block = block // lay.block[-1] * src.shape[-1]
        return 4 * src.partials * block, slice(lay.first_tile, lay.first_tile + lay.tiles)
    return 0, slice(0, 0)


def _scratch(op: Operation) -> tuple[int, int, slice]:
    """(standard, interleaved) bytes per tile, and the tiles, of the buffers map-tiles gives an
    attention beside its operands and state while it runs: the score scratch (in the inputs'
    dtype), the offsets, the scaled query block and, streamed, one key and one value window
    (interleaved: the AMP streams them) and one bias window; (0, 0, empty) for other ops."""
    if not isinstance(op, plan.AttentionOp):
        return 0, 0, slice(0, 0)
    st = op.result.type.layout
    qr, d = st.block[1], st.shape[2] - 2
    e = _esize(op.q.type)
    std = 16 + (qr * d * e if op.scale.value.data != 1.0 else 0)
    if op.form.data == "materialized":
        return std + qr * op.k.type.layout.block_size(1) * e, 0, slice(st.first_tile, st.first_tile + st.tiles)
    kb = min(op.key_block.value.data, op.k.type.shape[1])
    std += qr * kb * e + (qr * (kb + kb % 2) * _esize(op.bias.type) if op.bias is not None else 0)
    return std, 2 * kb * d * _esize(op.k.type), slice(st.first_tile, st.first_tile + st.tiles)


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
    m.fits = not overflow(m, t)


def code_and_rows(m: PlanMetrics, t: Target) -> tuple[int, int]:
    """The bytes per tile below a plan's data: its code (at least the target's reserve) and its
    exchange rows, taken to fill the rest of the executable region at most (see `overflow`)."""
    code = max(t.code_reserve_bytes, m.code_bytes)
    executable = sum(r.size for r in t.regions if r.executable)
    return code, min(m.exchange_row_bytes, max(0, executable - code))


def overflow(m: PlanMetrics, t: Target) -> str:
    """Why a plan with metrics `m` does not fit target `t` (empty when it fits). Its code and
    exchange rows come first in the executable region; the estimate's rows are an upper bound
    (each op's busiest tile, summed), so they are taken to fill that region at most (whether
    they really fit it place-storage measures); the data peaks share what is left, less
    `PLACEMENT_SLACK`."""
    code, rows = code_and_rows(m, t)
    inter_cap = sum(r.size for r in t.regions if r.interleaved)
    if m.peak_interleaved_bytes > inter_cap:
        return f"interleaved data peaks at {m.peak_interleaved_bytes} bytes per tile of {inter_cap}"
    if m.peak_total_bytes + code + rows > t.memory_size - PLACEMENT_SLACK:
        return (
            f"data peaks at {m.peak_total_bytes} bytes per tile, beside {code} bytes of code and "
            f"{rows} of exchange rows, of {t.memory_size} less {PLACEMENT_SLACK} kept for placement"
        )
    return ""


PLACEMENT_SLACK = 32768
"""Bytes per tile a plan leaves free at its peak: the peaks count bytes, but place-storage needs
each buffer in one contiguous range among buffers on other tile ranges, and a plan at 95 % of
the tile (the transformer block's 4-way K split of its up-projection: 559 KB of 585) fails there."""
