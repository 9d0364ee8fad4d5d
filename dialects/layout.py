"""Block layouts over a tile grid, and the tables derived from them.

A layout places a logical tensor (any rank >= 1) on `prod(grid)` consecutive tiles starting at
`first_tile`. Tensor axis `a` is cut into `parts(a)` equal blocks along the grid dimensions
`split[a]` (major first); grid dimensions that split no axis hold replicas, except `partial`,
whose copies are partial sums still to be added. Every tile of the layout keeps one padded
block of the same shape at the same address, so programs and addresses are shared by the
whole group (DESIGN section 6).

This module is pure arithmetic: planner, lowering, placement and codegen all derive shard
views, transfer families and host bindings from the same function, so a plan is priced as it
will be emitted (principle 2).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

from ipu.abi.tables import MOVE, SLICE


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

    @property
    def tiles(self) -> int:
        return math.prod(self.grid)

    def parts(self, axis: int) -> int:
        return math.prod(self.grid[d] for d in self.split[axis])

    @property
    def block(self) -> tuple[int, ...]:
        """Padded per-tile block; the last axis is even so rows are whole 32-bit words."""
        return tuple(self.block_size(a) for a in range(len(self.shape)))

    def block_size(self, axis: int) -> int:
        b = ceil_div(self.shape[axis], self.parts(axis))
        m = self.align[axis] if self.align else 1
        if axis == len(self.shape) - 1:
            m = math.lcm(m, 2)
        return ceil_div(b, m) * m

    @property
    def has_padding(self) -> bool:
        """Whether some tile's block extends past the tensor (its tail holds no data)."""
        return any(self.parts(a) * b > n for a, (b, n) in enumerate(zip(self.block, self.shape, strict=True)))

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

    @property
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


def _ranges(lay: Layout) -> list[np.ndarray]:
    """Per axis: [parts, 2] array of logical [lo, hi)."""
    out = []
    for a, n in enumerate(lay.shape):
        lo = np.minimum(np.arange(lay.parts(a), dtype=np.int64) * lay.block_size(a), n)
        out.append(np.stack([lo, np.minimum(lo + lay.block_size(a), n)], axis=1))
    return out


def _strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides."""
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return tuple(out)


def _slabs(lo: tuple[int, ...], hi: tuple[int, ...]):
    """Split a box into 2-D slabs: yields (leading index tuple) for every leading position."""
    lead = [range(lo[a], hi[a]) for a in range(len(lo) - 2)]
    return itertools.product(*lead)


def binding_slices(lay: Layout, esize: int, address: int, replicas: bool) -> np.ndarray:
    """Host binding slice families (ipu.abi.tables.SLICE) for a value at `address`.

    With `replicas` every copy is written (inputs, weights); otherwise one holder of each block
    is listed (outputs, checkpoints). Partial layouts cannot be bound.
    """
    if lay.partial >= 0:
        raise ValueError("a partial-sum layout has no host binding")
    shape = lay.shape if len(lay.shape) > 1 else (1, *lay.shape)
    block = lay.block if len(lay.shape) > 1 else (1, *lay.block)
    ranges = _ranges(lay)
    if len(lay.shape) == 1:
        ranges = [np.array([[0, 1]], np.int64), *ranges]
    tp = lay.tile_blocks()
    if len(lay.shape) == 1:
        tp = np.concatenate([np.zeros((lay.tiles, 1), np.int64), tp], axis=1)
    lstr, bstr = _strides(shape), _strides(block)
    holders: dict[tuple[int, ...], list[int]] = {}
    for t in range(lay.tiles):
        holders.setdefault(tuple(int(x) for x in tp[t]), []).append(t + lay.first_tile)
    recs = []
    for parts, tiles in holders.items():
        lo = tuple(int(ranges[a][p, 0]) for a, p in enumerate(parts))
        hi = tuple(int(ranges[a][p, 1]) for a, p in enumerate(parts))
        if any(h <= low for low, h in zip(lo, hi, strict=True)):
            continue
        grp = np.array(tiles if replicas else tiles[:1])
        for lead in _slabs(lo, hi):
            loff = sum(i * st for i, st in zip(lead, lstr, strict=False)) + lo[-2] * lstr[-2] + lo[-1]
            boff = sum((i - lo[a]) * bstr[a] for a, i in enumerate(lead))
            for t0, cnt, step in arithmetic_runs(grp):
                recs.append(
                    (
                        loff,
                        lstr[-2],
                        hi[-2] - lo[-2],
                        hi[-1] - lo[-1],
                        t0,
                        cnt,
                        step,
                        address + boff * esize,
                        bstr[-2] * esize,
                    )
                )
    return np.array(recs, np.int64).reshape(-1, len(SLICE))


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


def _overlaps(src: np.ndarray, dst: np.ndarray, shift: int = 0) -> list[list[tuple[int, int, int]]]:
    """For each dst part: (src part, lo, hi) of every overlapping src part, in src coordinates
    (dst coordinate + shift = src coordinate). Parts are sorted, so a binary search finds them."""
    s0, s1 = src[:, 0].tolist(), src[:, 1].tolist()
    starts = np.searchsorted(src[:, 1], dst[:, 0] + shift, side="right").tolist()
    out = []
    for k, (d0, d1) in enumerate(dst.tolist()):
        lo_d, hi_d = d0 + shift, d1 + shift
        row = []
        i = starts[k]
        while i < len(s0) and s0[i] < hi_d:
            lo, hi = max(lo_d, s0[i]), min(hi_d, s1[i])
            if hi > lo:
                row.append((i, lo, hi))
            i += 1
        out.append(row)
    return out


def _lift(lay: Layout) -> tuple[tuple[int, ...], tuple[int, ...], list[np.ndarray], np.ndarray]:
    """Shape, block, per-axis ranges and tile parts, with rank-1 layouts seen as [1, n]."""
    ranges, tp = _ranges(lay), lay.tile_blocks()
    if len(lay.shape) > 1:
        return lay.shape, lay.block, ranges, tp
    tp = np.concatenate([np.zeros((lay.tiles, 1), np.int64), tp], axis=1)
    return (1, *lay.shape), (1, *lay.block), [np.array([[0, 1]], np.int64), *ranges], tp


@functools.lru_cache(maxsize=512)
def conversion_transfers(
    src: Layout,
    dst: Layout,
    src_esize: int,
    dst_esize: int,
    perm: tuple[int, ...] | None = None,
    offset: tuple[int, ...] | None = None,
    clip: bool = False,
) -> np.ndarray:
    """Transfer families (ipu.abi.tables.MOVE) that rebuild `dst` from `src`.

    Destination axis i reads source axis perm[i] (default identity; the last axis must stay
    last) at source coordinate dst + offset[i] (a window of the source). Offsets are bytes
    relative to each buffer's base. A partial `src` sends copy p of each block to slot p of a
    staging buffer [partials, *dst.block] on the destination tiles. Every replica of a
    destination block reads the same source holder, so replicas become one multicast.
    Returns int64 [n, 13], read-only: the result is memoized (finalists of one model share most
    conversions, and the selected finalist is mapped once more after selection), so `perm` and
    `offset` must be tuples. With `clip` the window may reach outside the source (offsets of any
    sign): only the destination elements it overlaps are written.
    """
    if src_esize != dst_esize:
        raise ValueError("a conversion moves bytes; element sizes must match")
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
    ov = [_overlaps(s_ranges[perm[i]], d_ranges[i], off[i]) for i in range(r)]
    s_str, d_str = _strides(s_block), _strides(d_block)
    s_partial = src.coords()[:, src.partial] if src.partial >= 0 else np.zeros(src.tiles, np.int64)
    holders: dict[tuple[int, ...], list[int]] = {}
    for t in range(src.tiles):
        holders.setdefault((*(int(x) for x in s_tp[t]), int(s_partial[t])), []).append(t + src.first_tile)
    d_tiles: dict[tuple[int, ...], list[int]] = {}
    for t in range(dst.tiles):
        d_tiles.setdefault(tuple(int(x) for x in d_tp[t]), []).append(t + dst.first_tile)
    slot = dst.block_elements * es
    recs = []
    # the holders of each destination block as multicast runs (every replica reads one source)
    runs = [arithmetic_runs(sorted(tiles)) for tiles in d_tiles.values()]
    for key, dparts in enumerate(d_tiles):
        d_lo = [int(d_ranges[i][dparts[i], 0]) + off[i] for i in range(r)]  # in source coordinates
        for combo in itertools.product(*(ov[i][dparts[i]] for i in range(r))):
            sparts = [0] * r
            for i, (sp, _, _) in enumerate(combo):
                sparts[perm[i]] = sp
            s_lo = [int(s_ranges[a][sparts[a], 0]) for a in range(r)]
            c0, c1 = combo[-1][1], combo[-1][2]
            if es == 2:
                c0, c1 = c0 - c0 % 2, c1 + c1 % 2
            words = (c1 - c0) * es // 4
            r0, r1 = combo[-2][1], combo[-2][2]
            for lead in itertools.product(*(range(lo, hi) for _, lo, hi in combo[:-2])):
                idx = [*lead, r0, c0]  # source coordinates, in dst axis order
                s_off = sum((idx[i] - s_lo[perm[i]]) * s_str[perm[i]] for i in range(r)) * es
                d_base = sum((idx[i] - d_lo[i]) * d_str[i] for i in range(r)) * es
                for p in range(src.partials):
                    hs = holders[(*sparts, p)]
                    h = hs[key % len(hs)]
                    for d0, cnt, step in runs[key]:
                        recs.append((h, s_off, d0, cnt, step, p * slot + d_base, r1 - r0, words))
    table = fold_families(recs, s_str[perm[-2]] * es, d_str[-2] * es)
    table.setflags(write=False)
    return table


def compress_transfers(recs: np.ndarray, src_stride: int, dst_stride: int) -> np.ndarray:
    """Fold single transfers (src, src_off, dst, dst_off, rows, words) into families.

    1. one source block to an arithmetic run of destination tiles: a multicast;
    2. equal offsets on runs of source and destination tiles: members run together;
    3. what is left, one tile sending to (or gathering from) a run of tiles with offsets that
       step evenly: members run one after another (time step = transfer length).
    Returns int64 [n, 16] (ipu.abi.tables.MOVE).
    """
    mc: dict[tuple[int, ...], list[int]] = {}
    for s, so, d, do, r, w in recs.tolist():
        mc.setdefault((s, so, do, r, w), []).append(d)
    folded = [
        (s, so, d0, cnt, step, do, r, w)
        for (s, so, do, r, w), ds in mc.items()
        for d0, cnt, step in arithmetic_runs(sorted(ds))
    ]
    return fold_families(folded, src_stride, dst_stride)


def fold_families(recs: list[tuple[int, ...]], src_stride: int, dst_stride: int) -> np.ndarray:
    """Steps 2 and 3 of `compress_transfers` on multicast records
    (src, src_off, first dst, dst count, dst step, dst_off, rows, words)."""
    par: dict[tuple[int, ...], list[int]] = {}
    for s, so, d0, cnt, step, do, r, w in recs:
        par.setdefault((so, do, r, w, cnt, step, d0 - s), []).append(s)
    out: list[tuple[int, ...]] = []
    single: list[tuple[int, ...]] = []
    for (so, do, r, w, cnt, step, delta), ss in par.items():
        for s0, pc, ps in arithmetic_runs(sorted(ss)):
            if pc > 1:
                out.append((s0, so, src_stride, s0 + delta, do, dst_stride, r, w, pc, ps, ps, cnt, step, 0, 0, 0))
            else:
                single.append((s0, so, s0 + delta, do, r, w, cnt, step))
    out.extend(_serial_runs(single, src_stride, dst_stride))
    out.sort()
    return np.array(out, np.int64).reshape(-1, len(MOVE))


def _runs(items: list[tuple[int, int, int]]) -> list[tuple[int, int, tuple[int, int, int]]]:
    """Maximal runs of sorted 3-tuples with a constant, non-zero first-component step:
    (first index, length, step); length-1 runs for the rest."""
    out = []
    i, n = 0, len(items)
    while i < n:
        if i + 1 < n:
            step = tuple(items[i + 1][k] - items[i][k] for k in range(3))
            j = i + 1
            while j + 1 < n and tuple(items[j + 1][k] - items[j][k] for k in range(3)) == step:
                j += 1
            if step[0] != 0:
                out.append((i, j - i + 1, step))
                i = j + 1
                continue
        out.append((i, 1, (0, 0, 0)))
        i += 1
    return out


def _serial_runs(single: list[tuple[int, ...]], src_stride: int, dst_stride: int) -> list[tuple[int, ...]]:
    """Runs of transfers from one source tile (or, of what is left, into one destination tile)
    whose other tile and both offsets advance by constant steps: serial families."""
    out: list[tuple[int, ...]] = []
    by_src: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
    for s, so, d, do, r, w, cnt, step in single:
        by_src.setdefault((s, r, w, cnt, step), []).append((d, so, do))
    rest: list[tuple[int, ...]] = []
    for (s, r, w, cnt, step), items in by_src.items():
        items.sort()
        for i, n, (dd, dso, ddo) in _runs(items):
            d0, so0, do0 = items[i]
            if n > 1:
                out.append((s, so0, src_stride, d0, do0, dst_stride, r, w, n, 0, dd, cnt, step, dso, ddo, r * w))
            else:
                rest.append((s, so0, d0, do0, r, w, cnt, step))
    by_dst: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
    for s, so, d, do, r, w, cnt, step in rest:
        by_dst.setdefault((d, r, w, cnt, step), []).append((s, so, do))
    for (d, r, w, cnt, step), items in by_dst.items():
        items.sort()
        for i, n, (ds, dso, ddo) in _runs(items):
            s0, so0, do0 = items[i]
            pts = r * w if n > 1 else 0
            out.append(
                (
                    s0,
                    so0,
                    src_stride,
                    d,
                    do0,
                    dst_stride,
                    r,
                    w,
                    n,
                    ds if n > 1 else 1,
                    0 if n > 1 else 1,
                    cnt,
                    step,
                    dso,
                    ddo,
                    pts,
                )
            )
    return out
