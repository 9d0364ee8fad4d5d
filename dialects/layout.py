"""Block layouts over a tile grid, and the tables derived from them.

A layout places a logical tensor (rank 1 or 2) on `prod(grid)` consecutive tiles starting at
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

import math
from dataclasses import dataclass

import numpy as np


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
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def _axis_ranges(lay: Layout) -> list[np.ndarray]:
    """Per 2-D axis: [parts, 2] array of logical [lo, hi)."""
    out = []
    rank = len(lay.shape)
    for ax2 in range(2):
        a = ax2 - (2 - rank)
        if a < 0:
            out.append(np.array([[0, 1]], np.int64))
        else:
            out.append(np.array([lay.extent(a, p) for p in range(lay.parts(a))], np.int64))
    return out


def _block2(lay: Layout) -> tuple[int, int]:
    return as_2d(lay.block)


def _tile_parts2(lay: Layout) -> np.ndarray:
    tb = lay.tile_blocks()
    if len(lay.shape) == 1:
        tb = np.concatenate([np.zeros((lay.tiles, 1), np.int64), tb], axis=1)
    return tb


def binding_slices(lay: Layout, esize: int, address: int, replicas: bool) -> np.ndarray:
    """Host binding slice families (runtime.package.SLICE_COLUMNS) for a value at `address`.

    With `replicas` every copy is written (inputs, weights); otherwise one holder of each block
    is listed (outputs, checkpoints). Partial layouts cannot be bound.
    """
    if lay.partial >= 0:
        raise ValueError("a partial-sum layout has no host binding")
    rows_r, cols_r = _axis_ranges(lay)
    br, bc = _block2(lay)
    tp = _tile_parts2(lay)
    n_cols = as_2d(lay.shape)[1]
    tiles = np.arange(lay.tiles) + lay.first_tile
    key = tp[:, 0] * cols_r.shape[0] + tp[:, 1]
    order = np.lexsort((tiles, key))
    recs = []
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and key[order[j]] == key[order[i]]:
            j += 1
        grp = tiles[order[i:j]]
        if not replicas:
            grp = grp[:1]
        r0, r1 = rows_r[tp[order[i], 0]]
        c0, c1 = cols_r[tp[order[i], 1]]
        if r1 > r0 and c1 > c0:
            for t0, cnt, step in arithmetic_runs(grp):
                recs.append((r0 * n_cols + c0, n_cols, r1 - r0, c1 - c0, t0, cnt, step, address, bc * esize))
        i = j
    del br
    return np.array(recs, np.int64).reshape(-1, 9)


def arithmetic_runs(values: np.ndarray) -> list[tuple[int, int, int]]:
    """Split a sorted int sequence into maximal arithmetic runs (first, count, step)."""
    out: list[tuple[int, int, int]] = []
    v = [int(x) for x in values]
    i = 0
    while i < len(v):
        if i + 1 == len(v):
            out.append((v[i], 1, 1))
            break
        step = v[i + 1] - v[i]
        j = i + 1
        while j + 1 < len(v) and v[j + 1] - v[j] == step:
            j += 1
        out.append((v[i], j - i + 1, step if step else 1))
        i = j + 1
    return out


def _overlaps(src: np.ndarray, dst: np.ndarray) -> list[list[tuple[int, int, int]]]:
    """For each dst part: (src part, lo, hi) of every overlapping src part."""
    out = []
    for d0, d1 in dst:
        row = []
        for s, (s0, s1) in enumerate(src):
            lo, hi = max(d0, s0), min(d1, s1)
            if hi > lo:
                row.append((s, int(lo), int(hi)))
        out.append(row)
    return out


def conversion_transfers(src: Layout, dst: Layout, src_esize: int, dst_esize: int) -> np.ndarray:
    """Transfer families (TRANSFER_COLUMNS without `start`) that rebuild `dst` from `src`.

    Offsets are bytes relative to each buffer's base. A partial `src` sends copy p of each
    block to slot p of a staging buffer [partials, *dst.block] on the destination tiles.
    Every replica of a destination block reads the same source holder, so replicas become one
    multicast. Returns int64 [n, 13].
    """
    if as_2d(src.shape) != as_2d(dst.shape):
        raise ValueError(f"conversion between shapes {src.shape} and {dst.shape}")
    if src_esize != dst_esize:
        raise ValueError("a conversion moves bytes; element sizes must match")
    es = src_esize
    s_rows, s_cols = _axis_ranges(src)
    d_rows, d_cols = _axis_ranges(dst)
    ov_r, ov_c = _overlaps(s_rows, d_rows), _overlaps(s_cols, d_cols)
    s_bc, d_bc = _block2(src)[1], _block2(dst)[1]
    # holders of each (src block, partial index)
    s_tp = _tile_parts2(src)
    s_partial = src.coords()[:, src.partial] if src.partial >= 0 else np.zeros(src.tiles, np.int64)
    holders: dict[tuple[int, int, int], list[int]] = {}
    for t in range(src.tiles):
        holders.setdefault((int(s_tp[t, 0]), int(s_tp[t, 1]), int(s_partial[t])), []).append(t + src.first_tile)
    d_tp = _tile_parts2(dst)
    d_tiles: dict[tuple[int, int], list[int]] = {}
    for t in range(dst.tiles):
        d_tiles.setdefault((int(d_tp[t, 0]), int(d_tp[t, 1])), []).append(t + dst.first_tile)
    slot = dst.block_elements * es
    recs = []
    for (dr, dc), tiles in d_tiles.items():
        r_lo = int(d_rows[dr, 0])
        c_lo = int(d_cols[dc, 0])
        for sr, r0, r1 in ov_r[dr]:
            for sc, c0, c1 in ov_c[dc]:
                c0e, c1e = c0 - c0 % 2, c1 + c1 % 2
                if es == 4:
                    c0e, c1e = c0, c1
                words = (c1e - c0e) * es // 4
                for p in range(src.partials):
                    hs = holders[(sr, sc, p)]
                    h = hs[(dr * 7919 + dc) % len(hs)]
                    s_off = ((r0 - int(s_rows[sr, 0])) * s_bc + (c0e - int(s_cols[sc, 0]))) * es
                    d_off = p * slot + ((r0 - r_lo) * d_bc + (c0e - c_lo)) * es
                    for t in tiles:
                        recs.append((h, s_off, t, d_off, r1 - r0, words))
    return compress_transfers(np.array(recs, np.int64).reshape(-1, 6), s_bc * es, d_bc * es)


def compress_transfers(recs: np.ndarray, src_stride: int, dst_stride: int) -> np.ndarray:
    """Fold single transfers (src, src_off, dst, dst_off, rows, words) into families."""
    mc: dict[tuple[int, ...], list[int]] = {}
    for s, so, d, do, r, w in recs.tolist():
        mc.setdefault((s, so, do, r, w), []).append(d)
    par: dict[tuple[int, ...], list[int]] = {}
    for (s, so, do, r, w), ds in mc.items():
        for d0, cnt, step in arithmetic_runs(np.sort(np.array(ds))):
            par.setdefault((so, do, r, w, cnt, step, d0 - s), []).append(s)
    out = []
    for (so, do, r, w, cnt, step, delta), ss in par.items():
        for s0, pc, ps in arithmetic_runs(np.sort(np.array(ss))):
            out.append((s0, so, src_stride, s0 + delta, do, dst_stride, r, w, pc, ps, ps, cnt, step))
    out.sort()
    return np.array(out, np.int64).reshape(-1, 13)
