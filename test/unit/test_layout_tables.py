"""Layout tables against an element-level oracle, on a grid of random layouts.

A conversion table's families are expanded here, independently of `abi/transfers.py`, into
byte moves (source tile, source byte) -> (destination tile, destination byte). Each byte of
each tile's block is given its meaning straight from the layout's definition (grid coordinates,
splits, padded block sizes): which logical element (and partial copy) it holds, or padding.
The moves must rebuild every destination block exactly: every element of every replica (and
every staging slot of a partial source) written, each from the right element of the right
partial copy, byte for byte; nothing written outside the buffers, and in 4-byte elements
nothing but elements. Host binding slices are checked the same way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu.abi.transfers import port_words, with_start
from ipu.dialects.layout import (
    Layout,
    arithmetic_runs,
    binding_slices,
    conversion_load,
    conversion_transfers,
    multicast_words,
    split_runs,
)


def _tile_parts(lay: Layout) -> np.ndarray:
    """[tiles, rank]: the block index of every tile along every axis (major grid dim first)."""
    coords = np.array(list(np.ndindex(*lay.grid)), np.int64).reshape(lay.tiles, len(lay.grid))
    out = np.zeros((lay.tiles, len(lay.shape)), np.int64)
    for a, dims in enumerate(lay.split):
        for d in dims:
            out[:, a] = out[:, a] * lay.grid[d] + coords[:, d]
    return out


def _tile_partial(lay: Layout) -> np.ndarray:
    coords = np.array(list(np.ndindex(*lay.grid)), np.int64).reshape(lay.tiles, len(lay.grid))
    return coords[:, lay.partial] if lay.partial >= 0 else np.zeros(lay.tiles, np.int64)


def _block_coords(lay: Layout) -> np.ndarray:
    """[tiles, block elements, rank]: the logical coordinate every block position stands for."""
    block = tuple(lay.block_size(a) for a in range(len(lay.shape)))
    local = np.array(list(np.ndindex(*block)), np.int64).reshape(-1, len(block))
    origin = _tile_parts(lay) * np.array(block, np.int64)
    return origin[:, None, :] + local[None, :, :]


def _element_bytes(lay: Layout, es: int) -> np.ndarray:
    """[tiles, block bytes]: the logical element (row-major index) each byte holds, -1 for padding."""
    c = _block_coords(lay)
    real = (c < np.array(lay.shape)).all(axis=2)
    flat = np.where(real, np.ravel_multi_index(tuple(np.minimum(c, np.array(lay.shape) - 1).T), lay.shape).T, -1)
    return np.repeat(flat, es, axis=1)


def _byte_moves(table: np.ndarray) -> np.ndarray:
    """[n, 4]: (src tile, src byte, dst tile, dst byte) of every byte every member moves (and the
    members' time step checked)."""
    out = []
    for s, so, ss, d, do, ds, rows, words, pc, pss, pds, mc, mcs, pso, pdo, pts in table.tolist():
        assert rows > 0 and words > 0 and pc > 0 and mc > 0
        # members sharing a port run one after another, a transfer's length apart; others together
        assert pts == (rows * words if pc > 1 and (pss == 0 or pds == 0) else 0)
        for p in range(pc):
            for c in range(mc):
                r = np.arange(rows)[:, None]
                k = np.arange(4 * words)[None, :]
                src_b = (so + p * pso + r * ss + k).ravel()
                dst_b = (do + p * pdo + r * ds + k).ravel()
                n = len(src_b)
                out.append(np.stack([np.full(n, s + p * pss), src_b, np.full(n, d + p * pds + c * mcs), dst_b], axis=1))
    return np.concatenate(out) if out else np.zeros((0, 4), np.int64)


def _check_conversion(src: Layout, dst: Layout, es: int, perm, offset, clip: bool) -> None:
    table = conversion_transfers(src, dst, es, es, perm, offset, clip)
    assert table.dtype == np.int64 and table.shape[1] == 16
    r = len(dst.shape)
    perm = tuple(range(r)) if perm is None else perm
    off = np.array(offset if offset is not None else (0,) * r, np.int64)
    mv = _byte_moves(table)
    st, sb, dt, db = (mv[:, i] - (src.first_tile, 0, dst.first_tile, 0)[i] for i in range(4))
    s_bytes = src.block_elements * es
    slot = dst.block_elements * es
    assert ((st >= 0) & (st < src.tiles)).all(), "a move reads a tile outside the source layout"
    assert ((dt >= 0) & (dt < dst.tiles)).all(), "a move writes a tile outside the destination layout"
    assert ((sb >= 0) & (sb < s_bytes)).all(), "a move reads outside the source block"
    assert ((db >= 0) & (db < slot * src.partials)).all(), "a move writes outside the destination buffer"
    # what each destination byte should hold: the element at source coordinate perm/offset of its own
    dc = _block_coords(dst)
    real = (dc < np.array(dst.shape)).all(axis=2)
    sc = np.zeros_like(dc)
    for i in range(r):
        sc[:, :, perm[i]] = dc[:, :, i] + off[i]
    inside = real & ((sc >= 0) & (sc < np.array(src.shape))).all(axis=2)
    want = np.where(inside, np.ravel_multi_index(tuple(np.clip(sc, 0, np.array(src.shape) - 1).T), src.shape).T, -1)
    want = np.repeat(want, es, axis=1)  # [dst tiles, block bytes]
    outside = np.repeat(real & ~inside, es, axis=1)
    have = _element_bytes(src, es)[st, sb]
    p_src = _tile_partial(src)[st]
    w = want[dt, db % slot]
    written_real = w >= 0
    assert (have[written_real] == w[written_real]).all(), "a destination element receives another element"
    assert (sb[written_real] % es == db[written_real] % es).all(), "element bytes land shuffled"
    assert (p_src == db // slot).all(), "a partial copy lands in another staging slot"
    # a clipped window leaves the elements outside the source alone, except that a half-precision
    # row ending on an odd source length is rounded out to a whole word: it then carries the
    # source's padding half-word (the zero a zero-filled buffer holds there) into the next one
    out = outside[dt, db % slot]
    assert not out.any() or (es == 2 and (have[out] == -1).all()), "a clipped window writes outside the source"
    if es == 4:  # (a half-precision row is rounded out to whole words, into padding)
        assert written_real.all(), "a 4-byte conversion writes padding"
    # every real element of every replica, in every staging slot, is written
    hit = np.zeros((dst.tiles, slot * src.partials), bool)
    hit[dt, db] = True
    need = np.tile(want >= 0, (1, src.partials))
    assert (hit | ~need).all(), "some destination element is never written"


def _random_layout(rng: np.random.Generator, shape: tuple[int, ...], partial: bool) -> Layout:
    rank = len(shape)
    grid = tuple(int(g) for g in rng.integers(1, 5, int(rng.integers(1, 4))))
    split: list[list[int]] = [[] for _ in range(rank)]
    part = -1
    for d in rng.permutation(len(grid)).tolist():
        role = int(rng.integers(0, rank + 2))
        if role < rank:
            split[role].append(d)
        elif role == rank and partial and part < 0:
            part = d
    align = tuple(int(rng.choice([1, 1, 2, 3])) for _ in range(rank)) if rng.integers(0, 3) == 0 else ()
    return Layout(shape, grid, tuple(tuple(s) for s in split), part, int(rng.integers(0, 4)), align)


def _random_case(seed: int):
    rng = np.random.default_rng(seed)
    es = int(rng.choice([2, 4]))
    rank = int(rng.integers(1, 5))
    s_shape = tuple(int(x) for x in rng.integers(1, 9 if rank > 2 else 14, rank))
    perm = None
    if rank > 2 and rng.integers(0, 2):
        perm = (*(int(x) for x in rng.permutation(rank - 1)), rank - 1)
    order = perm or tuple(range(rank))
    clip = bool(rng.integers(0, 4) == 0)
    offset, d_shape = None, tuple(s_shape[a] for a in order)
    if clip or rng.integers(0, 2):
        offset, d_shape = [], []
        for i, a in enumerate(order):
            n = s_shape[a]
            if clip:
                o, m = int(rng.integers(-3, n + 1)), int(rng.integers(1, n + 4))
            else:
                m = int(rng.integers(1, n + 1))
                o = int(rng.integers(0, n - m + 1))
            if es == 2 and i == rank - 1:
                o -= o % 2  # half-precision rows move whole words: a window starts on a word
            offset.append(o)
            d_shape.append(m)
        offset, d_shape = tuple(offset), tuple(d_shape)
    src = _random_layout(rng, s_shape, partial=bool(rng.integers(0, 2)))
    if rng.integers(0, 4) == 0:  # the source's own blocking elsewhere: parallel families
        split, align = tuple(src.split[a] for a in order), tuple(src.align[a] for a in order if src.align)
        dst = Layout(d_shape, src.grid, split, -1, int(rng.integers(0, 9)), align)
    else:
        dst = _random_layout(rng, d_shape, partial=False)
    return src, dst, es, perm, offset, clip


@pytest.mark.parametrize("seed", range(240))
def test_random_conversion_rebuilds_every_block(seed: int) -> None:
    src, dst, es, perm, offset, clip = _random_case(seed)
    _check_conversion(src, dst, es, perm, offset, clip)


_WHOLE = [s for s in range(400) if _random_case(s)[4:] == (None, False)][:100]


@pytest.mark.parametrize("seed", _WHOLE)
def test_conversion_load_is_the_tables_port_load(seed: int) -> None:
    """The endpoint loads the planner prices a conversion by (`conversion_load`, from the
    records) are those of the folded table the exchange schedules (`port_words`), on random
    whole conversions (no window: the planner prices whole values)."""
    src, dst, es, perm, _, _ = _random_case(seed)
    tiles = max(src.first_tile + src.tiles, dst.first_tile + dst.tiles)
    sent, recv = conversion_load(src, dst, es, perm, tiles)
    want_sent, want_recv = port_words(with_start(conversion_transfers(src, dst, es, es, perm)), tiles)
    assert sent.tolist() == want_sent.tolist()
    assert recv.tolist() == want_recv.tolist()


@pytest.mark.parametrize("seed", range(20))
def test_multicast_words_match_the_expanded_runs(seed: int) -> None:
    """The per-tile loads of multicast runs summed by stride (`multicast_words`) are those of
    every destination listed one by one: runs of one, of many, of several steps, empty ones."""
    rng = np.random.default_rng(seed)
    tiles, n = 97, 60
    step = rng.choice([1, 2, 3, 8, 32], n)
    count = rng.integers(0, 12, n)
    first = np.array([rng.integers(0, max(tiles - (c - 1) * s, 1)) for c, s in zip(count, step, strict=True)])
    count = np.where(first + (count - 1) * step < tiles, count, 1)
    src, words = rng.integers(0, tiles, n), rng.integers(1, 500, n)
    want_sent, want_recv = np.zeros(tiles, np.int64), np.zeros(tiles, np.int64)
    for i in range(n):
        want_sent[src[i]] += words[i] if count[i] else 0
        for j in range(count[i]):
            want_recv[first[i] + j * step[i]] += words[i]
    sent, recv = multicast_words(src, first, count, step, words, tiles)
    assert sent.tolist() == want_sent.tolist() and recv.tolist() == want_recv.tolist()


@pytest.mark.parametrize(
    ("src", "dst", "es", "perm", "offset", "clip"),
    [
        # rank 1, a partial source, replicas on both sides
        (Layout((10,), (2, 3), ((1,),), partial=0), Layout((10,), (2, 2), ((0,),)), 4, None, None, False),
        # odd lengths in half precision: rows rounded out to whole words
        (Layout((5, 7), (2, 2), ((0,), (1,))), Layout((5, 7), (3,), ((), (0,)), first_tile=4), 2, None, None, False),
        # a head split with a window and grouped alignment
        (
            Layout((6, 4, 10), (2, 2), ((0,), (), (1,)), align=(1, 1, 4)),
            Layout((3, 5, 8), (3, 2), ((1,), (0,), ())),
            2,
            (1, 0, 2),
            (1, 1, 2),
            False,
        ),
        # a clipped window reaching past both ends
        (Layout((9, 12), (3, 2), ((0,), (1,))), Layout((7, 16), (2, 2), ((1,), (0,))), 4, None, (-2, -3), True),
    ],
)
def test_conversion_edge_cases(src: Layout, dst: Layout, es: int, perm, offset, clip: bool) -> None:
    _check_conversion(src, dst, es, perm, offset, clip)


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("replicas", [True, False])
def test_random_binding_slices(seed: int, replicas: bool) -> None:
    rng = np.random.default_rng(1000 + seed)
    rank = int(rng.integers(1, 5))
    lay = _random_layout(rng, tuple(int(x) for x in rng.integers(1, 9, rank)), partial=False)
    es = int(rng.choice([2, 4]))
    address = int(rng.integers(0, 4)) * 8
    sl = binding_slices(lay, es, address, replicas)
    elem = _element_bytes(lay, 1)  # [tiles, block elements]
    got = []
    for lo, ls, rows, re, tile, tc, ts, addr, tstr in sl.tolist():
        assert rows > 0 and re > 0 and tc > 0 and (addr - address) % es == 0 and tstr % es == 0
        for m in range(tc):
            for row in range(rows):
                pos = (addr - address + row * tstr) // es + np.arange(re)
                t = tile + m * ts - lay.first_tile
                assert 0 <= t < lay.tiles and pos.max() < lay.block_elements
                assert (elem[t, pos] == lo + row * ls + np.arange(re)).all(), "a slice binds the wrong element"
                got += [(t, int(p)) for p in pos]
    assert len(got) == len(set(got)), "an element is bound twice"
    if replicas:
        need = {(t, p) for t, p in zip(*np.nonzero(elem >= 0), strict=True)}
        assert set(got) == need
    else:
        assert sorted(int(elem[t, p]) for t, p in got) == list(range(math.prod(lay.shape)))


def _cut_tuples(items: list[tuple[int, ...]]) -> list[tuple[int, int, tuple[int, ...]]]:
    """A run of tuples whose first component does not advance is cut into single items."""
    out, i = [], 0
    while i < len(items):
        if i + 1 < len(items):
            step = tuple(b - a for a, b in zip(items[i], items[i + 1], strict=True))
            j = i + 1
            while j + 1 < len(items) and tuple(b - a for a, b in zip(items[j], items[j + 1], strict=True)) == step:
                j += 1
            if step[0]:
                out.append((i, j - i + 1, step))
                i = j + 1
                continue
        out.append((i, 1, (0,) * len(items[i])))
        i += 1
    return out


@pytest.mark.parametrize("seed", range(20))
def test_split_runs_cuts_like_the_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(200):
        groups = []
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.integers(1, 9))
            if rng.integers(0, 2):
                base = np.cumsum(rng.choice([0, 1, 1, 2], (n, 3)) * (1, 4, 8), axis=0)
            else:
                base = rng.integers(0, 3, (n, 3))
            groups.append(sorted(tuple(int(x) for x in row) for row in base))
        vals = np.array([x for g in groups for x in g], np.int64)
        first = np.zeros(len(vals), bool)
        first[np.cumsum([0] + [len(g) for g in groups])[:-1]] = True
        start, count, step = split_runs(vals[:, :1], first)
        got = [
            (int(vals[i, 0]), int(c), int(s[0]) if c > 1 and s[0] else 1)
            for i, c, s in zip(start, count, step, strict=True)
        ]
        assert got == [r for g in groups for r in arithmetic_runs([x[0] for x in g])]
        start, count, step = split_runs(vals, first, zero_single=True)
        offs = np.cumsum([0] + [len(g) for g in groups])
        want = [(int(o) + i, n, s) for g, o in zip(groups, offs, strict=False) for i, n, s in _cut_tuples(g)]
        assert [(int(i), int(c), tuple(int(x) for x in s)) for i, c, s in zip(start, count, step, strict=True)] == want
