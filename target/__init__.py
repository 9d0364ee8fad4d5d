"""Machine models as data: `load_target("mk2")` reads `target/mk2.toml`.

The compiler's cost model and the emulator's cycle model both read these objects, so an
estimate and a measurement always start from the same numbers.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TARGET_DIR = Path(__file__).parent
DEFAULT_TARGET = "mk2"


class TargetError(ValueError):
    """An unknown or malformed target description."""


@dataclass(frozen=True)
class Region:
    """A contiguous SRAM range of one tile."""

    name: str
    start: int
    end: int
    interleaved: bool
    executable: bool

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Target:
    """One tile machine: geometry, rates and costs (all per tile)."""

    name: str
    description: str
    tiles: int
    clock_hz: int
    memory_base: int
    memory_size: int
    element_bytes: int
    tiles_per_send_bus: int
    code_reserve_bytes: int
    regions: tuple[Region, ...]
    rates: dict[str, int]
    costs: dict[str, int]
    exchange: dict[str, int]
    elementwise: dict[str, list[int]]  # op -> [half cycles, half elements, float cycles, float elements] a loop
    loadable_end: int = 0  # the loader cannot populate memory above this (0: memory_end)
    # AMP vertex cycles by their arguments: the planner prices the same few shapes thousands of
    # times (a target's numbers are never changed in place: `dataclasses.replace` starts afresh)
    _amp_memo: dict[tuple[int, ...], int] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def data_end(self) -> int:
        """Top of the memory the compiler may place data in."""
        return self.loadable_end or self.memory_end

    @property
    def memory_end(self) -> int:
        return self.memory_base + self.memory_size

    def region(self, name: str) -> Region:
        for r in self.regions:
            if r.name == name:
                return r
        raise TargetError(f"target {self.name} has no region '{name}'")

    # --- cost formulas shared by the compiler's estimates and the emulator's cycle counts ---
    # Graphcore's PopLibs cycle estimators restated (docs/cycle-model-sources.md, "PC"): one
    # tile's cycles for one kernel call. A supervisor kernel costs its supervisor cycles plus
    # `workers` x the slowest worker's cycles (PC 0): work is cut over the 6 worker contexts and
    # every worker-side fixed cost is paid 6 times. `esize` is the element size of the data the
    # kernel streams: 2 takes PopLibs' HALF row, 4 its FLOAT row (INT32 words take the FLOAT row:
    # [U] PopLibs' INT rows are slower, e.g. ADD 7 cycles an element).

    def _share(self, n: int) -> int:
        """Elements (rows) of the busiest worker: ceil(n / workers) (PC 0)."""
        return -(-n // self.costs["workers"])

    def _vector(self, esize: int) -> int:
        """Elements of one 64-bit data-path vector: 4 halves or 2 floats (PC 0: getVectorWidth)."""
        return self.costs["vector_bits"] // (8 * min(max(esize, 2), 4))

    def _amp_worker(self, rows: int, zeroing: bool) -> int:
        """One AMP worker's cycles for `rows` output rows (PC 1.1: 4 per row from the 3rd on)."""
        c = self.costs
        small = {0: c["amp_worker_0"], 1: c["amp_worker_1"], 2: c["amp_worker_2"]}
        base = small[rows] if rows in small else c["amp_worker"] + c["amp_row_cycles"] * rows
        return base - int(zeroing)

    def _amp_inner(self, m: int, zeroing: bool) -> int:
        """The workers' time for one AMP pass over m rows cut as floor((i+1)m/6) - floor(im/6),
        the least-loaded worker paying the tag cost (PC 1.1: inner loop estimate)."""
        w = self.costs["workers"]
        q = m // w  # every worker gets q or q + 1 rows
        t = (
            (self._amp_worker(q, zeroing), self._amp_worker(q + 1, zeroing))
            if m % w
            else (self._amp_worker(q, zeroing),)
        )
        return max(w * max(t), w * min(t) + self.costs["amp_tag"])

    def amp_matmul_cycles(self, m: int, k: int, n: int, accumulate: bool = False, partials_esize: int = 4) -> int:
        """AMP GEMM call on one tile: [m,k] x [k,n], fp16 in (PC 1.1, the 1x1 conv partial
        vertex's supervisor estimate). K is cut into 16-deep input groups, N into 16-column output
        groups of ceil(16 / conv units) passes, each pass loading the conv units' weights and then
        running the workers over the rows. The first input group zeroes the partials (an
        accumulating call never zeroes). fp32 partials use `amp_conv_units` conv units (8), fp16
        partials `amp_conv_units_half` (16 on IPU2/IPU21: half the passes)."""
        return self._amp_vertex(m, k, n, accumulate, partials_esize)

    def amp_conv_cycles(
        self, segments: int, width: int, k: int, n: int, kh: int, kw: int, partials_esize: int = 4
    ) -> int:
        """AMP convolution partials on one tile (PC 2, PopLibs' ConvPartialnx1): `segments` output
        rows of `width` pixels, k input and n output channels, a kh x kw kernel. The 1x1 vertex's
        structure (`amp_matmul_cycles`) with one pass per kernel position inside each output
        group: the first position of the first input group zeroes the partials, every later one
        accumulates; the inner loop pays 14 per kernel row and 12 per position, and each worker
        16 more for every output row segment past its first. `partials_esize` 2: fp16 partials, as
        `amp_matmul_cycles`."""
        c = self.costs
        w = c["workers"]
        seg = w * c["amp_segment"] * max(0, -(-segments // w) - 1)
        kernel = kh * c["amp_kernel_row"] + kh * kw * c["amp_kernel_position"]
        return self._amp_vertex(segments * width, k, n, False, partials_esize, kh * kw, kernel, seg)

    def dw_conv_cycles(self, segments: int, width: int, c: int, kh: int, kw: int, esize: int = 2) -> int:
        """A depthwise convolution on the vector path (PC 3): `segments` output rows of `width`
        pixels and c channels shared over the workers as whole rows; per row and kernel position
        a loop setup (`dw_row`, [U]) and a multiply-add per vector of the row's width x c values,
        at the ADD row's rate (PC 1.4); BinaryOp1D's supervisor and worker prologue."""
        co = self.costs
        w = co["workers"]
        cyc, per = self._row("add", esize)
        row = co["dw_row"] + -(-(width * c) // per) * cyc
        pro = co["binary_worker_float" if esize == 4 else "binary_worker"]
        return co["supervisor_overhead"] + w * (pro + -(-segments // w) * kh * kw * row)

    def pool_cycles(self, segments: int, width: int, c: int, kh: int, kw: int, esize: int = 2) -> int:
        """A max pool on the vector path (PC 1.14: popnn's MaxPooling vertex, `getPoolingCycles`):
        `segments` output rows of `width` pixels and c channels, the rows shared over the workers.
        The channels in groups of at most 16 halves (8 floats); per worker its fixed cost and the
        init of its share of the outputs; per row 15, per row and kernel position 23, per channel
        group 2 (4 more past the first) and per 64-bit vector of the group a run over the row's
        outputs at 3 cycles each (+ 4); 13 + 6 x the slowest worker."""
        co = self.costs
        w = co["workers"]
        vec = self._vector(esize)
        per_group = min(c, 4 * vec)
        groups, d = -(-c // per_group), -(-per_group // vec)
        group = co["pool_group"] + d * (co["pool_vector"] + co["pool_output"] * width)
        row = co["pool_row"] + kh * kw * (co["pool_position"] + groups * group + (groups - 1) * co["pool_group_later"])
        init = groups * (co["pool_init_group"] + -(-segments * width * d // w))
        return co["pool_supervisor"] + w * (co["pool_worker"] + init + -(-segments // w) * row)

    def _amp_vertex(
        self,
        m: int,
        k: int,
        n: int,
        accumulate: bool,
        partials_esize: int,
        positions: int = 1,
        kernel: int = 0,
        segments: int = 0,
    ) -> int:
        """The conv-partials supervisor over m output rows (PC 1.1; PC 2 for `positions` kernel
        positions, each a further pass group of every output group, with the inner loop's
        `kernel` cycles per input group and `segments` more per worker pass)."""
        key = (m, k, n, accumulate, partials_esize, positions, kernel, segments)
        hit = self._amp_memo.get(key)
        if hit is None:
            hit = self._amp_memo[key] = self._amp_vertex_cycles(*key)
        return hit

    def _amp_groups(self, k: int, n: int, partials_esize: int) -> tuple[int, int, int, int]:
        """(input groups, output groups, passes per output group, conv units) of an AMP call over k
        input and n output channels: 16-deep and 16-wide groups, ceil(16 / conv units) passes
        each (PC 1.1)."""
        c = self.costs
        units = c["amp_conv_units_half" if partials_esize == 2 else "amp_conv_units"]
        return -(-k // c["amp_in_chans"]), -(-n // c["amp_out_chans"]), -(-c["amp_out_chans"] // units), units

    def _amp_vertex_cycles(
        self, m: int, k: int, n: int, accumulate: bool, partials_esize: int, positions: int, kernel: int, segments: int
    ) -> int:
        c = self.costs
        w = c["workers"]
        gi, go, passes, units = self._amp_groups(k, n, partials_esize)
        load = units * c["amp_in_chans"] * 2 // c["amp_coeff_load_bytes_per_cycle"]
        first = self._amp_inner(m, zeroing=not accumulate) + segments
        later = self._amp_inner(m, zeroing=False) + segments
        step = passes * (c["amp_pass"] + load + later)  # a later pass group (input group or kernel position)
        return (
            c["amp_supervisor"]
            + w * (c["amp_retention"] + c["amp_retention_per_group"] * (gi - 1))
            + c["amp_group_entry"]
            + (gi - 1) * (c["amp_in_group"] + kernel + go * (c["amp_out_group"] + positions * step))
            + c["amp_first_in_group"]
            + kernel
            + go * (c["amp_first_out_group"] + passes * (c["amp_first_pass"] + load + first) + (positions - 1) * step)
        )

    def _row(self, op: str, esize: int) -> tuple[int, int]:
        """(cycles, elements) of one loop of elementwise op `op` (the [elementwise] table)."""
        r = self.elementwise[op]
        return (r[0], r[1]) if esize <= 2 else (r[2], r[3])

    def _loop(self, op: str, elements: int, esize: int) -> int:
        cyc, per = self._row(op, esize)
        return -(-self._share(elements) // per) * cyc

    def binary_cycles(self, op: str, elements: int, esize: int = 2, in_place: bool = False) -> int:
        """popops BinaryOp1D (PC 1.4): supervisor + 6 x (worker prologue + loops), the prologue
        29 cycles for FLOAT and 26 otherwise; in place (BinaryOp1DInPlace) the prologue is 58."""
        c = self.costs
        pro = c["binary_worker_in_place"] if in_place else c["binary_worker_float" if esize == 4 else "binary_worker"]
        return c["supervisor_overhead"] + c["workers"] * (pro + self._loop(op, elements, esize))

    def unary_cycles(self, op: str, elements: int, esize: int = 2, in_place: bool = False) -> int:
        """popops UnaryOp1D (PC 1.6): supervisor + 9 + 6 x (prologue + loops), the prologue 17
        (EXPONENT 33); in place (UnaryOp1DInPlace) 55."""
        c = self.costs
        pro = c["unary_worker_in_place"] if in_place else c["unary_worker_exp" if op == "exp" else "unary_worker"]
        return c["supervisor_overhead"] + c["unary_supervisor"] + c["workers"] * (pro + self._loop(op, elements, esize))

    def nonlinearity_cycles(self, op: str, elements: int, esize: int = 2) -> int:
        """popnn NonLinearity1D (PC 1.6: tanh GeLU and SWISH): 9 + 6 x (32 + op x vectors)."""
        c = self.costs
        return c["nonlinearity_supervisor"] + c["workers"] * (
            c["nonlinearity_worker"] + self._loop(op, elements, esize)
        )

    def transform_cycles(self, rows: int, cols: int, esize: int = 2) -> int:
        """Transpose of [rows, cols] (PC 1.8: Transpose2D's worker estimate, the rows cut over the
        workers in 4-row (half) or 2-row (float) blocks): the fast path moves 4x4 (half) or 2x2
        (float) blocks; a shape off the block grid takes the slow path, per element."""
        c = self.costs
        w = c["workers"]
        if esize <= 2 and rows % 4 == 0 and cols % 4 == 0 and cols >= 8:
            r = self._share(rows // 4) * 4
            work = c["transpose_worker"] + c["transpose_matrix"] + r // 4 * (15 + 4 * (cols // 4 - 2))
        elif esize <= 2:
            work = c["transpose_worker"] + -(-5 * self._share(rows) * cols // 2)
        elif rows % 2 == 0 and cols % 2 == 0:
            r = self._share(rows // 2) * 2
            work = c["transpose_worker_float"] + c["transpose_matrix_float"] + r // 2 * (6 + 3 * (cols // 2 - 1))
        else:
            work = c["transpose_worker_float"] + 2 * self._share(rows) * cols
        return c["transpose_supervisor"] + w * work

    def cast_cycles(self, elements: int) -> int:
        """popops Cast1D (PC 1.5): 12 + 6 x (37 + ceil(m / 2)), m the worker's elements: two
        elements a worker cycle, the 64-bit store (half -> float) or the loads (float -> half)
        binding. Same-dtype copies take the same path [U: Poplar's own Copy is not in PopLibs;
        PopLibs' DynamicSlice1D moves 64 bits per 2 worker cycles too, PC 1.9]."""
        c = self.costs
        return c["cast_supervisor"] + c["workers"] * (c["cast_worker"] + -(-self._share(elements) // 2))

    def dynamic_slice_cycles(self, elements: int, esize: int = 2) -> int:
        """popops DynamicSlice1D (PC 1.9): 25 + 6 x (63 + 2 floor(m / vw)), m the busiest
        worker's elements (rounded down, as PopLibs does) and vw the 64-bit vector's: one slice
        of a stacked block, picked by a run-time index (a loop's iteration)."""
        c = self.costs
        return c["dynamic_slice_supervisor"] + c["workers"] * (
            c["dynamic_slice_worker"] + 2 * (elements // c["workers"] // self._vector(esize))
        )

    def reduce_cycles(self, parts: int, elements: int, out_esize: int = 4, partials_esize: int = 4) -> int:
        """Sum of `parts` partial slices of `elements` each (PC 1.3: poplin ReduceAdd, all partials
        exchanged in): fp32 partials 6 x (32 + v x (3 parts + 7)), v = ceil(ceil(elements / 4) / 6)
        4-wide accumulations per worker, 3 parts + 6 for a half output (~5.3 B a cycle); fp16
        partials (`partials_esize` 2) in 8-wide accumulations, 3 parts + 8 (+ 1 for a float output)."""
        c = self.costs
        if partials_esize == 2:
            v = self._share(-(-elements // 8))
            per = 3 * parts + c["reduce_group_half_partials"] + (out_esize == 4)
            return c["workers"] * (c["reduce_worker"] + v * per)
        v = self._share(-(-elements // 4))
        per = 3 * parts + (c["reduce_group_half"] if out_esize == 2 else c["reduce_group"])
        return c["workers"] * (c["reduce_worker"] + v * per)

    def reduce_rows_cycles(self, rows: int, cols: int, esize: int = 2) -> int:
        """Each row of [rows, cols] reduced to one value (PC 1.3: popops continuous reduce,
        rows x (cols / w) + 12 rows + 17 worker cycles, w = 4 halves or 2 floats), the rows cut
        over the workers. With fewer rows than workers, PopLibs gives the idle workers pieces of
        the rows and adds a second stage that sums each row's float partials (PC 1.3:
        `splitTwoStageReductionsBetweenWorkers`, pieces of at least 2 elements; [U] both stages
        priced by the continuous reduce's formula), whenever that lowers the busiest worker."""
        c = self.costs
        w, workers = self._vector(esize), c["workers"]
        one = workers * (c["reduce_rows_worker"] + self._share(rows) * (-(-cols // w) + c["reduce_rows_row"]))
        pieces = min(workers // max(rows, 1), cols // 2)  # the busiest row's
        if pieces <= 1:
            return one
        first = workers * (c["reduce_rows_worker"] + -(-cols // (pieces * w)) + c["reduce_rows_row"])
        second = workers * (c["reduce_rows_worker"] + -(-pieces // self._vector(4)) + c["reduce_rows_row"])
        return min(one, first + second)

    def scan_rows_cycles(self, rows: int, cols: int, esize: int = 2) -> int:
        """The running sum of each row of [rows, cols], rows cut over the workers: a scan is a
        chain of dependent adds, so one element a worker cycle, not a vector [U: PopLibs has no
        scan vertex; priced as the continuous reduce's worker and row overheads (PC 1.3) around
        one add-and-store per element; PC 1.12]."""
        c = self.costs
        del esize  # the chain is one element a cycle at either width
        return c["workers"] * (c["reduce_rows_worker"] + self._share(rows) * (cols + c["reduce_rows_row"]))

    def softmax_cycles(self, rows: int, cols: int, esize: int = 2) -> int:
        """PopLibs' softmax steps (PC 1.7), each its own vertex: row max, subtract, exp in place,
        row sum into float, inverse of the sums, cast to the dtype (half only), multiply in place."""
        n = rows * cols
        cast = self.cast_cycles(rows) if esize == 2 else 0
        return (
            2 * self.reduce_rows_cycles(rows, cols, esize)
            + self.binary_cycles("sub", n, esize)
            + self.unary_cycles("exp", n, esize, in_place=True)
            + self.unary_cycles("reciprocal", rows, 4)
            + cast
            + self.binary_cycles("mul", n, esize, in_place=True)
        )

    def norm_cycles(self, rows: int, cols: int, esize: int = 2, shift: bool = True) -> int:
        """Layer norm (`shift`: with beta) or RMS norm composed from PopLibs steps (PC 1.3, 1.4,
        1.6): the squares, the row sums of x (layer norm only) and of the squares, one rsqrt per
        row (float statistics), then x - mean (layer norm only), x times the inverse deviation,
        times gamma, plus beta (layer norm only)."""
        n = rows * cols
        stats = (2 if shift else 1) * self.reduce_rows_cycles(rows, cols, esize)
        return stats + self.binary_cycles("mul", n, esize) + self._normalise_cycles(rows, n, esize, shift)

    def _normalise_cycles(self, rows: int, n: int, esize: int, shift: bool) -> int:
        """A norm's last steps over n elements of `rows` rows, given their statistics: one rsqrt
        per row, then x - mean (layer norm only), times the inverse deviation, times gamma, plus
        beta (layer norm only)."""
        return self.unary_cycles("rsqrt", rows, 4) + (4 if shift else 2) * self.binary_cycles("mul", n, esize)

    def norm_stats_cycles(self, rows: int, cols: int, esize: int = 2) -> int:
        """A column block's row statistics for a norm split over tiles (PopLibs reduces a norm's
        statistics across the tiles that hold the rows: PC 1.3, 1.4): the row sums, the block
        mean subtracted (one pass, the squares with it) and the sums of squares."""
        n = rows * cols
        return 2 * self.reduce_rows_cycles(rows, cols, esize) + self.binary_cycles("mul", n, esize)

    def norm_apply_cycles(self, rows: int, cols: int, parts: int, esize: int = 2, shift: bool = True) -> int:
        """The rest of `norm_cycles` on a column block, given every block's statistics: the
        `parts` float pairs of each row combined (a continuous reduce, PC 1.3), one rsqrt per row,
        then x - mean (layer norm only), times the inverse deviation, times gamma, plus beta."""
        return self.reduce_rows_cycles(rows, 2 * parts, 4) + self._normalise_cycles(rows, rows * cols, esize, shift)

    def amp_banded_cycles(self, m: int, k: int, n: int, rows: list[int], by_out: bool, accumulate: bool = False) -> int:
        """`amp_matmul_cycles` (fp32 partials) of a vertex whose 16-wide groups each run over
        their own leading-trimmed rows (a work list per group [U: PopLibs' 1x1 partials vertex
        shares one work list over its groups]): `rows[g]` of output group g (`by_out`: the
        scores q k^T, whose output groups are keys) or of input group g (p v, whose input groups
        are keys). Only the workers' passes change; every group and pass keeps its fixed costs."""
        gi, go, passes, _ = self._amp_groups(k, n, 4)
        full = self._amp_vertex(m, k, n, accumulate, 4)
        zero = not accumulate

        def trim(r: int, zeroing: bool) -> int:
            return self._amp_inner(r, zeroing) - self._amp_inner(m, zeroing)

        # only the groups with rows trimmed differ from the full vertex
        if by_out:
            delta = sum(trim(r, zero) + (gi - 1) * trim(r, False) for r in rows if r != m)
        else:
            delta = go * sum(trim(r, zero and g == 0) for g, r in enumerate(rows) if r != m)
        return full + passes * delta

    def attention_causal_cycles(
        self, qr: int, kr: int, d: int, esize: int, scaled: bool, start: bool, skips: list[int]
    ) -> int:
        """`attention_update_cycles` of a causal step that skips, in each 16-key group g, the
        `skips[g]` leading rows that precede all its keys (striped rows, the kernels'
        `attention_skipped_rows`):
        both AMPs run each key group over its own rows (`amp_banded_cycles`), the softmax's
        elementwise steps over the unmasked groups' elements (the row reductions at their mean
        length), and the skipped scores are filled with -inf."""
        g = self.costs["amp_out_chans"]
        rows = [qr - s for s in skips]
        live = sum(r * min(g, kr - i * g) for i, r in enumerate(rows))
        state = (
            0
            if start
            else self.unary_cycles("exp", qr, 4)
            + self.binary_cycles("mul", qr * (d + 1), 4, in_place=True)
            + self.binary_cycles("add", qr, 4, in_place=True)
        )
        return (
            self.amp_banded_cycles(qr, d, kr, rows, by_out=True)
            + (self.binary_cycles("mul", live, esize, in_place=True) if scaled else 0)
            + (self.fill_cycles(qr * kr - live, esize) if live < qr * kr else 0)
            + 2 * self.reduce_rows_cycles(qr, -(-live // qr), esize)
            + self.binary_cycles("sub", live, esize, in_place=True)
            + self.unary_cycles("exp", live, esize, in_place=True)
            + state
            + self.cast_cycles(qr if esize == 2 else live)
            + self.amp_banded_cycles(qr, kr, d, rows, by_out=False, accumulate=not start)
        )

    def attention_update_cycles(
        self, qr: int, kr: int, d: int, esize: int, scaled: bool = True, start: bool = False
    ) -> int:
        """One online-softmax step from PopLibs parts (PC 1.1, 1.3, 1.4, 1.6, 1.7), its qr x kr
        scores held in the inputs' dtype (`esize` bytes), as PopLibs' softmax holds a half
        model's: the AMP scores q k^T (fp32 partials), their scale (none when `scaled` is False:
        q came scaled), row max, subtract and exp in place, row sum into fp32, the state's
        correction exp and rescale (accumulator and running sum), and the accumulating AMP p v.
        Half scores need a half copy of the qr row maxima to subtract and are already the AMP's
        half probabilities; fp32 scores are cast to half for it. With `start` (attention_start:
        the state is empty) there is no correction or rescale, and the p v AMP writes its
        partials instead of adding to them. (`attention_causal_cycles` with no row skipped.)"""
        groups = -(-kr // self.costs["amp_out_chans"])
        return self.attention_causal_cycles(qr, kr, d, esize, scaled, start, [0] * groups)

    def attention_bias_update_cycles(
        self, qr: int, kr: int, d: int, esize: int, scaled: bool = True, start: bool = False
    ) -> int:
        """`attention_update` (`start`: `attention_start`) plus the bias block added to the
        scores in place."""
        return self.attention_update_cycles(qr, kr, d, esize, scaled, start) + self.binary_cycles(
            "add", qr * kr, esize, in_place=True
        )

    def attention_start_cycles(
        self, qr: int, kr: int, d: int, esize: int, scaled: bool = True, bias: bool = False
    ) -> int:
        """`attention_start` (or its bias form): the update from an empty state."""
        update = self.attention_bias_update_cycles if bias else self.attention_update_cycles
        return update(qr, kr, d, esize, scaled, start=True)

    def attention_steps_cycles(self, qr: int, kr: int, d: int, esize: int, steps: int, bias: bool = False) -> int:
        """An attention's updates at scale 1 (its query block came scaled) over `steps` key
        blocks of `kr`: the first starts the state, each later one updates it."""
        update = self.attention_bias_update_cycles if bias else self.attention_update_cycles
        return self.attention_start_cycles(qr, kr, d, esize, False, bias) + (steps - 1) * update(
            qr, kr, d, esize, scaled=False
        )

    def attention_prescale_cycles(self, qr: int, d: int, esize: int = 2) -> int:
        """The query block scaled once (popops BinaryOp1D MULTIPLY, PC 1.4), so that no
        `attention_update` scales its qr x kr scores: q k^T scale = (q scale) k^T."""
        return self.binary_cycles("mul", qr * d, esize)

    def attention_combine_cycles(self, parts: int, qr: int, d: int, out_esize: int = 2) -> int:
        """`parts` fp32 states [parts, qr, d + 2] combined from PopLibs steps over all parts at
        once (PC 1.3, 1.4, 1.6): the row maxima reduced over the parts (a reduce of `parts`
        partials, the ReduceAdd estimator's shape), each part's correction exp(m - max) (a
        subtract and an exp of parts x qr floats), each part's accumulator and running sum
        rescaled in place (the staged parts are the combine's own temporary) and reduced over the
        parts; then the inverse of the sums, the scale and the cast to the output dtype. One
        part is already on the one scale: only the last three steps run."""
        merge = 0
        if parts > 1:
            pq = parts * qr
            merge = (
                self.reduce_cycles(parts, qr)
                + self.binary_cycles("sub", pq, 4)
                + self.unary_cycles("exp", pq, 4, in_place=True)
                + self.binary_cycles("mul", pq * (d + 1), 4, in_place=True)
                + self.reduce_cycles(parts, qr * (d + 1))
            )
        cast = self.cast_cycles(qr * d) if out_esize == 2 else 0
        return merge + self.unary_cycles("reciprocal", qr, 4) + self.binary_cycles("mul", qr * d, 4) + cast

    def fill_cycles(self, elements: int, esize: int = 4) -> int:
        """popops Fill (PC 1.2: _fillCycleEstimate): 6 x (23 + ceil(m / 2)) for float,
        6 x (26 + ceil(m / 4)) for half, m the worker's elements."""
        c = self.costs
        pro = c["fill_worker_half"] if esize == 2 else c["fill_worker"]
        return c["workers"] * (pro + -(-self._share(elements) // self._vector(esize)))

    def multi_slice_cycles(self, indices: int, row_bytes: int) -> int:
        """An embedding slice on one tile: PopLibs multiSlice's per-index cost shape, a compare of
        each index with the tile's row range (`slice_index_cycles`) and then its row, or zeros,
        written at the local copy rate, behind one copy call [U: PopLibs' MultiSlice estimator
        is not restated in PC]."""
        c = self.costs
        return (
            c["local_copy_call"]
            + indices * c["slice_index_cycles"]
            + indices * -(-row_bytes // c["local_copy_bytes_per_cycle"])
        )

    def phase_overhead_cycles(self) -> int:
        """Sync plus the worst route tail: what an exchange phase pays above its horizon before
        tile mapping fixes its routes (the analytical plan cost's view)."""
        return self.exchange["sync_cycles"] + self.exchange["route_tail_cycles"]

    @property
    def columns(self) -> int:
        return -(-self.tiles // self.exchange["tiles_per_column"])

    def route_cycles(self, src_phys: np.ndarray, dst_phys: np.ndarray) -> np.ndarray:
        """Send-to-receiver-mux delay between physical tiles: a base plus a cost per column
        crossed (MF 1.5: the delay depends on the two tiles' positions). Vectorized."""
        tpc = self.exchange["tiles_per_column"]
        return self.column_route_cycles(np.abs(np.asarray(src_phys) // tpc - np.asarray(dst_phys) // tpc))

    def column_route_cycles(self, columns: np.ndarray | int) -> np.ndarray | int:
        """The send-to-mux delay of a route crossing `columns` columns."""
        x = self.exchange
        return x["route_base_cycles"] + x["route_cycles_per_column"] * columns

    def longest_route(self, src_phys: np.ndarray, dst_phys: np.ndarray) -> int:
        """The longest `route_cycles` among (source, destination) physical tile pairs (0 if none)."""
        return int(self.route_cycles(src_phys, dst_phys).max()) if len(src_phys) else 0

    def host_transfer_cycles(self, nbytes: int) -> int:
        """One host-exchange phase moving `nbytes` over the host link (a host call's write or read
        step): the phase's host sync plus the bytes at the link's rate. Host cycles, not device
        cycles: the tiles wait at the rendezvous, their programs' cycle counts leave it out."""
        r = self.rates
        return r["host_phase_cycles"] + -(-nbytes // r["host_bytes_per_cycle"])


def available_targets() -> list[str]:
    return sorted(p.stem for p in TARGET_DIR.glob("*.toml"))


@functools.cache
def load_target(name: str = DEFAULT_TARGET) -> Target:
    """The target of that name, read once per process (a `Target` is frozen); raises
    TargetError naming the known targets."""
    path = TARGET_DIR / f"{name}.toml"
    if not name or "/" in name or not path.is_file():
        raise TargetError(f"unknown target '{name}' (known: {', '.join(available_targets())})")
    try:
        raw = tomllib.loads(path.read_text())
        regions = tuple(Region(**r) for r in raw["regions"])
        t = Target(
            name=raw["name"],
            description=raw["description"],
            tiles=int(raw["tiles"]),
            clock_hz=int(raw["clock_hz"]),
            memory_base=int(raw["memory_base"]),
            memory_size=int(raw["memory_size"]),
            element_bytes=int(raw["element_bytes"]),
            tiles_per_send_bus=int(raw["tiles_per_send_bus"]),
            code_reserve_bytes=int(raw["code_reserve_bytes"]),
            regions=regions,
            rates=dict(raw["rates"]),
            costs=dict(raw["costs"]),
            exchange=dict(raw["exchange"]),
            elementwise={k: list(v) for k, v in raw["elementwise"].items()},
            loadable_end=int(raw.get("loadable_end", 0)),
        )
    except (KeyError, TypeError, tomllib.TOMLDecodeError) as e:
        raise TargetError(f"malformed target file {path.name}: {e}") from None
    _check(t)
    return t


def _check(t: Target) -> None:
    if t.tiles <= 0:
        raise TargetError(f"target {t.name}: tiles must be positive")
    prev = t.memory_base
    for r in t.regions:
        if r.start != prev or r.end <= r.start:
            raise TargetError(f"target {t.name}: regions must tile memory contiguously")
        prev = r.end
    if prev != t.memory_end:
        raise TargetError(f"target {t.name}: regions end at {prev:#x}, memory at {t.memory_end:#x}")
    if t.rates.get("host_bytes_per_cycle", 0) <= 0 or t.rates.get("host_phase_cycles", -1) < 0:
        raise TargetError(
            f"target {t.name}: [rates] needs a positive host_bytes_per_cycle and a non-negative host_phase_cycles"
        )
    x = t.exchange
    if (
        min(x.get("tiles_per_column", 0), x.get("route_base_cycles", 0)) <= 0
        or x.get("route_cycles_per_column", -1) < 0
    ):
        raise TargetError(
            f"target {t.name}: [exchange] needs positive tiles_per_column and route_base_cycles, "
            "non-negative route_cycles_per_column"
        )
    worst = x["route_base_cycles"] + x["route_cycles_per_column"] * (t.columns - 1)
    if x.get("route_tail_cycles") != worst:
        raise TargetError(f"target {t.name}: route_tail_cycles must be the longest route, {worst}")
    if t.loadable_end and not t.memory_base < t.loadable_end <= t.memory_end:
        raise TargetError(f"target {t.name}: loadable_end {t.loadable_end:#x} outside memory")
