"""Block layouts over a tile grid, and the tables derived from them.

A layout places a logical tensor (any rank >= 1) on `prod(grid)` consecutive tiles starting at
`first_tile`. Tensor axis `a` is cut into `parts(a)` equal blocks along the grid dimensions
`split[a]` (major first); grid dimensions that split no axis hold replicas, except `partial`,
whose copies are partial sums still to be added. Every tile of the layout keeps one padded
block of the same shape at the same address, so programs and addresses are shared by the
whole group (one program for all its tiles: IR size independent of the tile count).

This module is pure arithmetic: planner, lowering, placement and codegen all derive shard
views, transfer families and host bindings from the same function, so a plan is priced as it
will be emitted (principle 2).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ipu.abi.arrays import lex_order
from ipu.abi.kernels import conv_reach
from ipu.abi.tables import MOVE, SLICE

Windows = tuple[tuple[int, int, int] | None, ...]
"""Per destination axis, (step, lo, extent) of every block's source range, or None (see
`conversion_records`)."""


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Layout:
    shape: tuple[int, ...]
    grid: tuple[int, ...]
    split: tuple[tuple[int, ...], ...]
    partial: int = -1
    first_tile: int = 0
    align: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if len(self.split) != len(self.shape):
            raise ValueError(f"split has {len(self.split)} entries for rank {len(self.shape)}")
        used = [d for s in self.split for d in s]
        if len(set(used)) != len(used) or any(d < 0 or d >= len(self.grid) for d in used):
            raise ValueError("each grid dimension may split at most one axis")
        if self.partial in used or self.partial >= len(self.grid):
            raise ValueError("the partial grid dimension may not split an axis")
        if any(g <= 0 for g in self.grid):
            raise ValueError("grid dimensions must be positive")

    def __hash__(self) -> int:
        # the planner hashes the same layouts many times (memo keys): hashed once each
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.shape, self.grid, self.split, self.partial, self.first_tile, self.align))
            self.__dict__["_hash"] = h
        return h

    @functools.cached_property
    def tiles(self) -> int:
        return math.prod(self.grid)

    def parts(self, axis: int) -> int:
        return math.prod(self.grid[d] for d in self.split[axis])

    @functools.cached_property
    def block(self) -> tuple[int, ...]:
        """Padded per-tile block; the last axis is even so rows are whole 32-bit words."""
        out = []
        for axis, n in enumerate(self.shape):
            b = ceil_div(n, self.parts(axis))
            m = self.align[axis] if self.align else 1
            if axis == len(self.shape) - 1:
                m = math.lcm(m, 2)
            out.append(ceil_div(b, m) * m)
        return tuple(out)

    def block_size(self, axis: int) -> int:
        return self.block[axis]

    @functools.cached_property
    def padded_shape(self) -> tuple[int, ...]:
        """The extent the blocks tile along each axis (the shape plus every block's padding)."""
        return tuple(self.parts(a) * b for a, b in enumerate(self.block))

    @property
    def has_padding(self) -> bool:
        """Whether some tile's block extends past the tensor (its tail holds no data)."""
        return self.padded_shape != self.shape

    @property
    def data_prefix(self) -> int:
        """How many leading elements of the block (row-major) hold data on every tile: the block
        of the smallest extent along each padded axis (the last block) contains them, so a move
        into this layout writes them all and only the rest can be padding."""
        n = self.block_elements
        stride = 1
        for a in reversed(range(len(self.shape))):
            b = self.block_size(a)
            full = self.shape[a] - (self.parts(a) - 1) * b
            if full < b:
                n = min(n, max(full, 0) * stride)
            stride *= b
        return n

    @property
    def padding_groups(self) -> tuple[int, ...]:
        """Group counts of the axes split in whole `align`-element groups (such as heads) whose
        blocks are padded because the groups do not divide evenly among the axis's parts. An
        alignment of 2 only keeps 32-bit words whole and forms no groups."""
        out = []
        for a, n in enumerate(self.shape):
            unit = self.align[a] if self.align else 1
            if unit > 2 and n % unit == 0 and self.parts(a) > 1 and self.parts(a) * self.block_size(a) > n:
                out.append(ceil_div(n, unit))
        return tuple(out)

    @functools.cached_property
    def block_elements(self) -> int:
        return math.prod(self.block)

    @property
    def replica_dims(self) -> tuple[int, ...]:
        used = {d for s in self.split for d in s} | {self.partial}
        return tuple(d for d in range(len(self.grid)) if d not in used)

    @property
    def replicas(self) -> int:
        return math.prod(self.grid[d] for d in self.replica_dims)

    @property
    def partials(self) -> int:
        return self.grid[self.partial] if self.partial >= 0 else 1

    def coords(self) -> np.ndarray:
        """Grid coordinates of every tile of the layout, [tiles, len(grid)], tile order."""
        return np.stack(np.unravel_index(np.arange(self.tiles), self.grid), axis=1)

    def part_index(self, axis: int, coords: np.ndarray) -> np.ndarray:
        dims = self.split[axis]
        if not dims:
            return np.zeros(len(coords), np.int64)
        return np.ravel_multi_index(tuple(coords[:, d] for d in dims), tuple(self.grid[d] for d in dims))

    def tile_blocks(self) -> np.ndarray:
        """Block index per axis for every tile: [tiles, rank]."""
        c = self.coords()
        return np.stack([self.part_index(a, c) for a in range(len(self.shape))], axis=1).reshape(
            self.tiles, len(self.shape)
        )

    def extent(self, axis: int, part: int) -> tuple[int, int]:
        """Logical [lo, hi) of block `part` along `axis` (may be empty at the end)."""
        b = self.block_size(axis)
        lo = min(part * b, self.shape[axis])
        return lo, min(lo + b, self.shape[axis])


def as_2d(shape: tuple[int, ...]) -> tuple[int, int]:
    return (1, shape[0]) if len(shape) == 1 else (math.prod(shape[:-1]), shape[-1])


def conv_patch(
    x_shape: tuple[int, ...],
    result: Layout,
    kernel: tuple[int, int],
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    pads: tuple[int, ...],
    channels: int = 3,
) -> tuple[Layout, Windows]:
    """The patch each tile of a `plan.conv` receives: for its block of the result [N, OH, OW, O]
    (`result`, on a (batch, rows, output channels, input channels) grid) the zero-padded input
    rows and columns its output rows reach, halo included, and its block of the input channels,
    split over grid dimension `channels` (3; a depthwise convolution's are its output channels,
    2). Returned as a layout of [N, row blocks x rows, width, C] on the result's grid and the
    windows that place each row block at its output rows' first input row (`conversion_records`)."""
    n, _, _, c = x_shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    bh, ow = result.block_size(1), result.shape[2]
    rows, width = conv_reach(bh, sh, kh, dh), conv_reach(ow, sw, kw, dw)
    gh = result.grid[1]
    lay = Layout((n, gh * rows, width, c), result.grid, ((0,), (1,), (), (channels,)), -1, result.first_tile)
    return lay, (None, (bh * sh, -pads[0], rows), (0, -pads[1], width), None)


def _ranges(lay: Layout) -> list[np.ndarray]:
    """Per axis: [parts, 2] array of logical [lo, hi)."""
    out = []
    for a, n in enumerate(lay.shape):
        lo = np.minimum(np.arange(lay.parts(a), dtype=np.int64) * lay.block_size(a), n)
        out.append(np.stack([lo, np.minimum(lo + lay.block_size(a), n)], axis=1))
    return out


def window_ranges(lay: Layout, windows: Windows) -> list[np.ndarray]:
    """Per axis: [parts, 2] logical [lo, hi) of each block, an axis's window (step, lo, extent)
    in place of its own blocks where `windows` gives one (ranges that may overlap and reach past
    the shape)."""
    out = _ranges(lay)
    for a, w in enumerate(windows):
        if w is not None:
            lo = np.arange(lay.parts(a), dtype=np.int64) * w[0] + w[1]
            out[a] = np.stack([lo, lo + w[2]], axis=1)
    return out


def patch_covered(x_shape: tuple[int, ...], patch: Layout, windows: Windows) -> bool:
    """Whether every element of every tile's patch is an element of the input (of `x_shape`), so
    no zero fill is needed: every window inside the input, and no other axis's blocks padded past it."""
    ranges = window_ranges(patch, windows)
    return all(
        patch.padded_shape[a] == n if w is None else bool(rng[:, 0].min() >= 0 and rng[:, 1].max() <= n)
        for a, (n, rng, w) in enumerate(zip(x_shape, ranges, windows, strict=True))
    )


def _strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides."""
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return tuple(out)


def _ragged(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A ragged expansion: (owner, local) with owner i repeated counts[i] times and local counting
    0..counts[i]-1 within it (owners in order), the vectorized form of a nested loop."""
    counts = np.asarray(counts, np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    return owner, np.arange(len(owner)) - (np.cumsum(counts) - counts)[owner]


def _group_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of `keys` [n, k] grouped by value, groups numbered in order of first occurrence (as a
    dict filled in row order would hold them): (first row of each group, rows in (group, row)
    order, the group of each of those rows)."""
    _, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    g = rank[inv.reshape(-1)]
    rows = np.argsort(g, kind="stable")
    return first[order], rows, g[rows]


def _starts(*cols: np.ndarray) -> np.ndarray:
    """Where a sorted sequence of keys (given column by column) begins a new key."""
    n = len(cols[0])
    out = np.zeros(n, bool)
    if n:
        out[0] = True
        for c in cols:
            out[1:] |= c[1:] != c[:-1]
    return out


def split_runs(
    vals: np.ndarray, first: np.ndarray, zero_single: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy maximal runs with a constant step of the rows of `vals` [n, k], each group (sorted;
    `first` marks its first row) cut on its own, the way `arithmetic_runs` cuts a list
    (`zero_single` False) or, with `zero_single`, the way a run of tuples whose first component
    does not advance is cut into single rows. Returns (first row, count, step [., k]) of every
    run in row order; a single row has step 0.

    Vectorized: the steps between neighbours form segments of equal steps. A run entered at a
    segment's first row (`free`) or second row (`late`: its first row ended the previous run)
    reaches the row after the segment's last step; a one-step segment entered late is skipped,
    and the next is entered free. So whether a segment is entered late alternates along
    one-step segments and is known after every other kind (free after a group start or a
    non-advancing segment, late after a longer one): a parity from the last such segment."""
    n, k = vals.shape
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, k), np.int64)
    d = vals[1:] - vals[:-1]
    valid = ~first[1:]  # step i joins rows i and i + 1 of one group
    same = np.zeros(n - 1, bool)
    if n > 2:
        same[1:] = valid[1:] & valid[:-1] & (d[1:] == d[:-1]).all(axis=1)
    a = np.flatnonzero(valid & ~same)  # first and last step of every segment
    b = np.flatnonzero(valid & ~np.append(same[1:], False))
    length = b - a + 1
    flat = d[a, 0] == 0 if zero_single else np.zeros(len(a), bool)
    one = ~flat & (length == 1)
    longer = ~flat & (length >= 2)
    known = first[a].copy()
    known[1:] |= flat[:-1] | longer[:-1]
    late_known = np.zeros(len(a), np.int64)
    late_known[1:] = ~first[a[1:]] & longer[:-1]
    i = np.arange(len(a))
    last_known = np.maximum.accumulate(np.where(known, i, 0))
    late = late_known[last_known] ^ ((i - last_known) & 1)
    entered = longer | (one & (late == 0))
    r_start = a[entered] + late[entered]
    r_count = length[entered] + 1 - late[entered]
    r_step = d[a[entered]]
    # single rows: those of non-advancing segments, and a group's last row no run ended on
    owner, local = _ragged(np.where(flat, length - late, 0))
    covered = np.zeros(n, bool)
    covered[b[entered] + 1] = True
    single = np.concatenate([a[owner] + late[owner] + local, np.flatnonzero(np.append(first[1:], True) & ~covered)])
    start = np.concatenate([r_start, single])
    count = np.concatenate([r_count, np.ones(len(single), np.int64)])
    step = np.concatenate([r_step, np.zeros((len(single), k), np.int64)])
    o = np.argsort(start, kind="stable")
    return start[o], count[o], step[o]


def _tile_runs(tiles: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, ...]:
    """`arithmetic_runs` of every group of sorted `tiles` (`group` sorted): (group, first, count,
    step) per run, in order."""
    start, count, step = split_runs(tiles[:, None], _starts(group))
    return group[start], tiles[start], count, np.where(step[:, 0] != 0, step[:, 0], 1)


def _csr(owner: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(first index, count) per owner 0..n-1 of a sorted owner array."""
    cnt = np.bincount(owner, minlength=n).astype(np.int64)
    return np.cumsum(cnt) - cnt, cnt


def binding_slices(lay: Layout, esize: int, address: int, replicas: bool) -> np.ndarray:
    """Host binding slice families (ipu.abi.tables.SLICE) for a value at `address`.

    With `replicas` every copy is written (inputs, weights); otherwise one holder of each block
    is listed (outputs, checkpoints). Partial layouts cannot be bound. Rows come block by block
    (in order of the block's first tile), then by leading index, then by run of holder tiles.
    """
    if lay.partial >= 0:
        raise ValueError("a partial-sum layout has no host binding")
    shape, block, ranges, tp = _lift(lay)
    rank = len(shape)
    lstr, bstr = _strides(shape), _strides(block)
    first, rows, group = _group_rows(tp)
    parts = tp[first]
    lo = np.stack([ranges[a][parts[:, a], 0] for a in range(rank)], axis=1)
    hi = np.stack([ranges[a][parts[:, a], 1] for a in range(rank)], axis=1)
    if replicas:
        run_g, run_t0, run_cnt, run_step = _tile_runs(rows + lay.first_tile, group)
    else:
        run_g = np.arange(len(first))
        run_t0, run_cnt, run_step = first + lay.first_tile, np.ones_like(run_g), np.ones_like(run_g)
    rptr, rcnt = _csr(run_g, len(first))
    g = np.flatnonzero((hi > lo).all(axis=1))
    loff = lo[g, -2] * lstr[-2] + lo[g, -1]
    boff = np.zeros(len(g), np.int64)
    for a in range(rank - 2):
        own, loc = _ragged(hi[g, a] - lo[g, a])
        g = g[own]
        loff = loff[own] + (lo[g, a] + loc) * lstr[a]
        boff = boff[own] + loc * bstr[a]
    own, loc = _ragged(rcnt[g])
    run = rptr[g[own]] + loc
    g, loff, boff = g[own], loff[own], boff[own]
    n = len(g)
    return (
        np.stack(
            [
                loff,
                np.full(n, lstr[-2]),
                hi[g, -2] - lo[g, -2],
                hi[g, -1] - lo[g, -1],
                run_t0[run],
                run_cnt[run],
                run_step[run],
                address + boff * esize,
                np.full(n, bstr[-2] * esize),
            ],
            axis=1,
        )
        .astype(np.int64, copy=False)
        .reshape(-1, len(SLICE))
    )


def arithmetic_runs(values) -> list[tuple[int, int, int]]:
    """Split a sorted int sequence into maximal arithmetic runs (first, count, step)."""
    v = values if isinstance(values, list) else [int(x) for x in values]
    out: list[tuple[int, int, int]] = []
    i, n = 0, len(v)
    while i < n:
        if i + 1 == n:
            out.append((v[i], 1, 1))
            break
        step = v[i + 1] - v[i]
        j = i + 1
        while j + 1 < n and v[j + 1] - v[j] == step:
            j += 1
        out.append((v[i], j - i + 1, step if step else 1))
        i = j + 1
    return out


def _lift(lay: Layout) -> tuple[tuple[int, ...], tuple[int, ...], list[np.ndarray], np.ndarray]:
    """Shape, block, per-axis ranges and tile parts, with rank-1 layouts seen as [1, n]."""
    ranges, tp = _ranges(lay), lay.tile_blocks()
    if len(lay.shape) > 1:
        return lay.shape, lay.block, ranges, tp
    tp = np.concatenate([np.zeros((lay.tiles, 1), np.int64), tp], axis=1)
    return (1, *lay.shape), (1, *lay.block), [np.array([[0, 1]], np.int64), *ranges], tp


def overlap_pairs(src: np.ndarray, dst: np.ndarray, shift: int) -> tuple[np.ndarray, ...]:
    """(dst part, src part, lo, hi) of every overlap of a dst part with a src part, in src
    coordinates (dst coordinate + shift = src coordinate), by dst part then src part. Parts are
    sorted, so each dst part overlaps a range of src parts that a binary search finds."""
    lo_d, hi_d = dst[:, 0] + shift, dst[:, 1] + shift
    first = np.searchsorted(src[:, 1], lo_d, side="right")
    end = np.maximum(np.searchsorted(src[:, 0], hi_d, side="left"), first)
    dp, loc = _ragged(end - first)
    sp = first[dp] + loc
    lo, hi = np.maximum(lo_d[dp], src[sp, 0]), np.minimum(hi_d[dp], src[sp, 1])
    keep = hi > lo
    return dp[keep], sp[keep], lo[keep], hi[keep]


@functools.lru_cache(maxsize=512)
def conversion_transfers(
    src: Layout,
    dst: Layout,
    src_esize: int,
    dst_esize: int,
    perm: tuple[int, ...] | None = None,
    offset: tuple[int, ...] | None = None,
    clip: bool = False,
    windows: Windows | None = None,
) -> np.ndarray:
    """Transfer families (ipu.abi.tables.MOVE) that rebuild `dst` from `src`: the records of
    `conversion_records` folded into families, int64 [n, 13], read-only (memoized)."""
    recs, src_stride, dst_stride = conversion_records(src, dst, src_esize, dst_esize, perm, offset, clip, windows)
    table = _fold(recs, src_stride, dst_stride)
    table.setflags(write=False)
    return table


def conversion_load(
    src: Layout,
    dst: Layout,
    esize: int,
    perm: tuple[int, ...] | None,
    tiles: int,
    windows: Windows | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(words sent, words received) per tile by the move that rebuilds `dst` from `src`, a
    multicast run sent once: the endpoint loads of `conversion_transfers`' table, from its
    records (folding them changes no member)."""
    recs, _, _ = conversion_records(src, dst, esize, esize, perm, windows=windows)
    return multicast_words(recs[:, 0], recs[:, 2], recs[:, 3], recs[:, 4], recs[:, 6] * recs[:, 7], tiles)


def multicast_words(
    src: np.ndarray, first: np.ndarray, count: np.ndarray, step: np.ndarray, words: np.ndarray, tiles: int
) -> tuple[np.ndarray, np.ndarray]:
    """(words sent, words received) per tile of multicast runs: run i sends `words[i]` once from
    `src[i]` to tiles `first[i] + j step[i]`, j < `count[i]` (an empty run sends nothing). Each
    destination run is an arithmetic progression, so it is added to a difference array, one per
    distinct step, and summed along that stride: no per-destination expansion (a weight
    broadcast to 1,472 tiles is one entry, not 1,472)."""
    sent = np.bincount(src, weights=words * (count > 0), minlength=tiles).astype(np.int64)
    recv = np.zeros(tiles, np.int64)
    single = count == 1
    if single.any():
        recv += np.bincount(first[single], weights=words[single], minlength=tiles).astype(np.int64)
    multi = ~single & (count > 0)
    for s in np.unique(step[multi]).tolist():
        sel = multi & (step == s)
        f, n, w = first[sel], count[sel], words[sel]
        if s < 1:  # not a progression over distinct tiles: expand it
            run, j = _ragged(n)
            recv += np.bincount(f[run] + j * s, weights=w[run], minlength=tiles).astype(np.int64)
            continue
        size = -(-(tiles + s) // s) * s
        diff = np.bincount(f, weights=w, minlength=size) - np.bincount(f + n * s, weights=w, minlength=size)
        recv += np.cumsum(diff[:size].reshape(-1, s), axis=0).reshape(-1)[:tiles].astype(np.int64)
    return sent, recv


def conversion_records(
    src: Layout,
    dst: Layout,
    src_esize: int,
    dst_esize: int,
    perm: tuple[int, ...] | None = None,
    offset: tuple[int, ...] | None = None,
    clip: bool = False,
    windows: Windows | None = None,
) -> tuple[np.ndarray, int, int]:
    """The multicast records (source tile, source offset, first destination tile, destinations,
    destination tile step, destination offset, rows, words), int64 [n, 8], that rebuild `dst`
    from `src`, with the source and destination row strides in bytes.

    Destination axis i reads source axis perm[i] (default identity; the last axis must stay
    last) at source coordinate dst + offset[i] (a window of the source). Offsets are bytes
    relative to each buffer's base. A partial `src` sends copy p of each block to slot p of a
    staging buffer [partials, *dst.block] on the destination tiles. Every replica of a
    destination block reads the same source holder, so replicas become one multicast.
    `perm` and `offset` are tuples (`conversion_transfers` memoizes on them: finalists of one
    model share most conversions, and the selected finalist is mapped once more after
    selection). With `clip` the window may reach outside the source (offsets of any sign): only
    the destination elements it overlaps are written.

    `windows` (which clip) gives destination axis i's blocks their own extents instead of a
    partition of the axis: part k covers source coordinates [k step + lo, k step + lo + extent)
    for `(step, lo, extent)` (None: the layout's own blocks). Blocks may overlap and reach
    outside the source: a convolution's input patches, each with its halo and zero padding.

    One record per (destination block, overlapping source block, leading index, partial,
    multicast run of the block's holders), built as arrays by ragged expansion axis by axis;
    destination block k (in order of its first tile) reads holder k mod (holders) of its source.
    """
    if src_esize != dst_esize:
        raise ValueError("a conversion moves bytes; element sizes must match")
    clip = clip or windows is not None  # windowed blocks may reach past the source
    es = src_esize
    s_shape, s_block, s_ranges, s_tp = _lift(src)
    d_shape, d_block, d_ranges, d_tp = _lift(dst)
    r = len(d_shape)
    if perm is None:
        perm = tuple(range(r))
    elif len(src.shape) == 1:
        perm = (0, *[p + 1 for p in perm])
    off = tuple(offset) if offset is not None else (0,) * r
    if len(dst.shape) == 1 and offset is not None:
        off = (0, *off)
    if len(perm) != r or sorted(perm) != list(range(r)) or perm[-1] != r - 1 or len(s_shape) != r:
        raise ValueError(f"conversion {src.shape} -> {dst.shape}: bad axis permutation {perm}")
    for i in range(r):
        if not clip and (off[i] < 0 or d_shape[i] + off[i] > s_shape[perm[i]]):
            raise ValueError(f"conversion {src.shape} -> {dst.shape}: window does not fit the source")
    s_str, d_str = _strides(s_block), _strides(d_block)
    # source holders of each (block, partial), in tile order: holder id in mixed radix
    partials = src.partials
    s_partial = src.coords()[:, src.partial] if src.partial >= 0 else np.zeros(src.tiles, np.int64)
    radix = [len(x) for x in s_ranges] + [partials]
    mult = [math.prod(radix[a + 1 :]) for a in range(r)]
    hid = np.ravel_multi_index((*s_tp.T, s_partial), radix)
    h_tiles = np.argsort(hid, kind="stable") + src.first_tile
    h_ptr, h_cnt = _csr(np.sort(hid), math.prod(radix))
    # destination blocks in order of first tile, and their holders as multicast runs
    first, rows, group = _group_rows(d_tp)
    k_parts = d_tp[first]
    run_key, run_d0, run_cnt, run_step = _tile_runs(rows + dst.first_tile, group)
    r_ptr, r_cnt = _csr(run_key, len(first))
    # expand the destination blocks over the overlapping source blocks, axis by axis
    key = np.arange(len(first))
    s_acc = np.zeros(len(key), np.int64)
    d_acc = np.zeros(len(key), np.int64)
    h_acc = np.zeros(len(key), np.int64)
    nrows = words = np.zeros(len(key), np.int64)
    if windows is not None:
        if len(windows) != r or len(dst.shape) != r:
            raise ValueError(f"conversion {src.shape} -> {dst.shape}: windows {windows} need one entry an axis")
        d_ranges = window_ranges(dst, windows)
    for i in range(r):
        s_rng, a = s_ranges[perm[i]], perm[i]
        dp, sp, lo, hi = overlap_pairs(s_rng, d_ranges[i], off[i])
        if i < r - 2:  # a leading axis: one record per index
            own, loc = _ragged(hi - lo)
            dp, sp, idx = dp[own], sp[own], lo[own] + loc
        elif i == r - 2:
            idx = lo
            item_rows = hi - lo
        else:
            c0, c1 = lo, hi
            if es == 2:
                c0, c1 = c0 - c0 % 2, c1 + c1 % 2
            idx = c0
            item_words = (c1 - c0) * es // 4
        s_term = (idx - s_rng[sp, 0]) * s_str[a]
        d_term = (idx - d_ranges[i][dp, 0] - off[i]) * d_str[i]
        i_ptr, i_cnt = _csr(dp, len(d_ranges[i]))
        kdp = k_parts[key, i]
        own, loc = _ragged(i_cnt[kdp])
        item = i_ptr[kdp[own]] + loc
        key = key[own]
        s_acc = s_acc[own] + s_term[item]
        d_acc = d_acc[own] + d_term[item]
        h_acc = h_acc[own] + sp[item] * mult[a]
        nrows, words = nrows[own], words[own]
        if i == r - 2:
            nrows = item_rows[item]
        elif i == r - 1:
            words = item_words[item]
    # every partial copy to its staging slot, from holder (key mod holders)
    n = len(key)
    p = np.tile(np.arange(partials), n)
    own = np.repeat(np.arange(n), partials)
    key, hsel = key[own], h_acc[own] + p
    h = h_tiles[h_ptr[hsel] + key % h_cnt[hsel]]
    so = s_acc[own] * es
    do = p * (dst.block_elements * es) + d_acc[own] * es
    nrows, words = nrows[own], words[own]
    # and to every multicast run of the block's holders
    own, loc = _ragged(r_cnt[key])
    run = r_ptr[key[own]] + loc
    recs = np.stack(
        [h[own], so[own], run_d0[run], run_cnt[run], run_step[run], do[own], nrows[own], words[own]], axis=1
    )
    return recs.astype(np.int64, copy=False), s_str[perm[-2]] * es, d_str[-2] * es


def compress_transfers(recs: np.ndarray, src_stride: int, dst_stride: int) -> np.ndarray:
    """Fold single transfers (src, src_off, dst, dst_off, rows, words) into families.

    1. one source block to an arithmetic run of destination tiles: a multicast;
    2. equal offsets on runs of source and destination tiles: members run together;
    3. what is left, one tile sending to (or gathering from) a run of tiles with offsets that
       step evenly: members run one after another (time step = transfer length).
    Returns int64 [n, 16] (ipu.abi.tables.MOVE).
    """
    recs = np.asarray(recs, np.int64).reshape(-1, 6)
    s, so, d, do, r, w = recs.T
    o = lex_order(s, so, do, r, w, d)
    s, so, d, do, r, w = s[o], so[o], d[o], do[o], r[o], w[o]
    start, cnt, step = split_runs(d[:, None], _starts(s, so, do, r, w))
    folded = np.stack(
        [s[start], so[start], d[start], cnt, np.where(step[:, 0] != 0, step[:, 0], 1), do[start], r[start], w[start]],
        axis=1,
    )
    return _fold(folded, src_stride, dst_stride)


def fold_families(recs: list[tuple[int, ...]], src_stride: int, dst_stride: int) -> np.ndarray:
    """Steps 2 and 3 of `compress_transfers` on multicast records
    (src, src_off, first dst, dst count, dst step, dst_off, rows, words)."""
    return _fold(np.array(recs, np.int64).reshape(-1, 8), src_stride, dst_stride)


def _fold(recs: np.ndarray, src_stride: int, dst_stride: int) -> np.ndarray:
    """`fold_families` on an int64 [n, 8] array. The result is sorted, so it depends only on
    the records, not on their order: records equal in all but the source tile, whose source
    and destination tiles step together, become a parallel family; the rest go to
    `_serial_families`."""
    s, so, d0, cnt, step, do, r, w = recs.T
    delta = d0 - s
    o = lex_order(so, do, r, w, cnt, step, delta, s)
    s, so, d0, cnt, step, do, r, w, delta = (x[o] for x in (s, so, d0, cnt, step, do, r, w, delta))
    start, pc, ps = split_runs(s[:, None], _starts(so, do, r, w, cnt, step, delta))
    ps = np.where(ps[:, 0] != 0, ps[:, 0], 1)
    par, one = start[pc > 1], start[pc == 1]
    n, ones = len(par), np.ones(len(par), np.int64)
    fams = np.stack(
        [
            s[par],
            so[par],
            ones * src_stride,
            s[par] + delta[par],
            do[par],
            ones * dst_stride,
            r[par],
            w[par],
            pc[pc > 1],
            ps[pc > 1],
            ps[pc > 1],
            cnt[par],
            step[par],
            *([np.zeros(n, np.int64)] * 3),
        ],
        axis=1,
    ).reshape(-1, len(MOVE))
    single = np.stack([s[one], so[one], s[one] + delta[one], do[one], r[one], w[one], cnt[one], step[one]], axis=1)
    out = np.concatenate([fams, *_serial_families(single, src_stride, dst_stride)]).astype(np.int64, copy=False)
    return out[lex_order(*out.T)] if len(out) else out


def _move_rows(*cols: np.ndarray | int) -> np.ndarray:
    """A move table (ipu.abi.tables.MOVE) from its 16 columns in order (scalars broadcast)."""
    n = max((len(c) for c in cols if isinstance(c, np.ndarray)), default=0)
    return np.stack([np.broadcast_to(np.asarray(c, np.int64), (n,)) for c in cols], axis=1).reshape(-1, len(MOVE))


def _serial_families(single: np.ndarray, src_stride: int, dst_stride: int) -> list[np.ndarray]:
    """Single transfers (src, src_off, dst, dst_off, rows, words, mc count, mc step) from one
    source tile (or, of what is left, into one destination tile) whose other tile and both
    offsets advance by constant steps, as serial families; the rest as one-member families."""
    s, so, d, do, r, w, cnt, step = single.T
    o = lex_order(s, r, w, cnt, step, d, so, do)
    s, so, d, do, r, w, cnt, step = (x[o] for x in (s, so, d, do, r, w, cnt, step))
    start, n, dstep = split_runs(np.stack([d, so, do], axis=1), _starts(s, r, w, cnt, step), zero_single=True)
    i, m, st = start[n > 1], n[n > 1], dstep[n > 1]
    scatter = _move_rows(
        s[i], so[i], src_stride, d[i], do[i], dst_stride, r[i], w[i],
        m, np.zeros(len(i), np.int64), st[:, 0], cnt[i], step[i], st[:, 1], st[:, 2], r[i] * w[i],
    )  # fmt: skip
    j = start[n == 1]
    s, so, d, do, r, w, cnt, step = (x[j] for x in (s, so, d, do, r, w, cnt, step))
    o = lex_order(d, r, w, cnt, step, s, so, do)
    s, so, d, do, r, w, cnt, step = (x[o] for x in (s, so, d, do, r, w, cnt, step))
    start, n, sstep = split_runs(np.stack([s, so, do], axis=1), _starts(d, r, w, cnt, step), zero_single=True)
    multi = n > 1
    i = start
    gather = _move_rows(
        s[i], so[i], src_stride, d[i], do[i], dst_stride, r[i], w[i], n, np.where(multi, sstep[:, 0], 1),
        np.where(multi, 0, 1), cnt[i], step[i], sstep[:, 1], sstep[:, 2], np.where(multi, r[i] * w[i], 0),
    )  # fmt: skip
    return [scatter, gather]
