"""Layout conversions move the right data; schedules obey the port rules."""

from __future__ import annotations

import numpy as np
import pytest

from ipu.abi.transfers import D_TILE, MC, MCS, PC, PDS, PSS, S_TILE
from ipu.dialects.layout import Layout, binding_slices, conversion_transfers
from ipu.transforms.exchange.schedulers import endpoint_lower_bound, schedule_greedy


def _scatter(lay: Layout, x: np.ndarray, esize_dtype) -> np.ndarray:
    """Per-tile padded blocks of x (as the host would write them)."""
    blocks = np.zeros((lay.tiles, lay.block_elements), esize_dtype)
    sl = binding_slices(lay, x.itemsize, 0, replicas=True)
    flat = x.ravel()
    for lo, ls, rows, re, tile, tc, ts, _addr, tstr in sl:
        for m in range(tc):
            t = tile + m * ts
            for r in range(rows):
                d = r * (tstr // x.itemsize)
                blocks[t, d : d + re] = flat[lo + r * ls : lo + r * ls + re]
    return blocks


def _apply(tr: np.ndarray, src: np.ndarray, dst: np.ndarray) -> None:
    sb, db = src.view(np.uint8), dst.view(np.uint8)
    for s, so, ss, d, do, ds, rows, words, pc, pss, pds, mc, mcs, pso, pdo, _pts in tr:
        for p in range(pc):
            for c in range(mc):
                st, dt = s + p * pss, d + p * pds + c * mcs
                for r in range(rows):
                    a, b = so + p * pso + r * ss, do + p * pdo + r * ds
                    db[dt, b : b + 4 * words] = sb[st, a : a + 4 * words]


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        (Layout((24, 40), (4, 2), ((0,), (1,))), Layout((24, 40), (2, 3, 2), ((0,), (2,)))),
        (Layout((24, 40), (8,), ((0,), ())), Layout((24, 40), (3, 5), ((1,), (0,)))),
        (Layout((40,), (4,), ((0,),)), Layout((40,), (2, 3), ((1,),))),
        (Layout((17, 30), (3, 2), ((0,), (1,))), Layout((17, 30), (2, 2, 2), ((2,), (0, 1)))),
    ],
)
def test_conversion_rebuilds_every_destination_block(src: Layout, dst: Layout) -> None:
    x = np.arange(np.prod(src.shape), dtype=np.float16).reshape(src.shape)
    s_blocks = _scatter(src, x, np.float16)
    want = _scatter(dst, x, np.float16)
    got = np.zeros_like(want)
    tiles = max(src.tiles, dst.tiles)
    s_full = np.zeros((tiles, s_blocks.shape[1]), np.float16)
    s_full[: src.tiles] = s_blocks
    g_full = np.zeros((tiles, got.shape[1]), np.float16)
    _apply(conversion_transfers(src, dst, 2, 2), s_full, g_full)
    got = g_full[: dst.tiles]
    assert np.array_equal(got, want)


def test_partial_sums_land_in_staging_slots() -> None:
    q = Layout((4, 16), (2, 2, 2), ((0,), (1, 2)))
    p = Layout((4, 16), (2, 2, 2), ((0,), (1,)), partial=2, align=(1, q.block_size(1) * 2))
    vals = np.random.default_rng(0).standard_normal((2, 4, 16)).astype(np.float32)
    src = np.zeros((8, p.block_elements), np.float32)
    for t, (i, j, k) in enumerate(p.coords()):
        bs = p.block[1]
        src[t].reshape(p.block)[:, : min(bs, 16 - j * bs)] = vals[k, i * 2 : i * 2 + 2, j * bs : (j + 1) * bs]
    stage = np.zeros((8, 2 * q.block_elements), np.float32)
    _apply(conversion_transfers(p, q, 4, 4), src, stage)
    total = stage.reshape(8, 2, *q.block).sum(axis=1)
    want = _scatter(q, vals.sum(axis=0), np.float32).reshape(8, *q.block)
    assert np.allclose(total, want)


def _random_families(rng: np.random.Generator, n: int, tiles: int) -> np.ndarray:
    """Random families, half of them serial scatters (one source, time-stepped members)."""
    rows = []
    for _ in range(n):
        mc = int(rng.integers(1, 4))
        serial = bool(rng.integers(0, 2))
        pc = int(rng.integers(1, 4))
        r, w = int(rng.integers(1, 4)), int(rng.integers(1, 9))
        s0, d0 = int(rng.integers(0, tiles - 4)), int(rng.integers(0, tiles - 16))
        rows.append((s0, 0, 8, d0, 0, 8, r, w, pc, 0 if serial else 1, 1, mc, 2 * pc + 1, 0, 0, r * w if serial else 0))
    return np.array(rows, np.int64)


def test_lower_bound_by_hand() -> None:
    # tile 0 sends 2x3 words to tiles 1 and 2 (multicast: counted once), and 4 words to tile 1
    t = np.array(
        [[0, 0, 0, 1, 0, 0, 2, 3, 1, 1, 1, 2, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0]], np.int64
    )
    assert endpoint_lower_bound(t, 4) == 10  # tile 0 sends 6 + 4; tile 1 receives 6 + 4


def _family_tiles(t: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per family: its members' source tiles [pc] and destination tiles [pc, mc]."""
    srcs, dsts = [], []
    for r in t:
        p = np.arange(r[PC])
        srcs.append(r[S_TILE] + p * r[PSS])
        dsts.append((r[D_TILE] + p * r[PDS])[:, None] + np.arange(r[MC])[None, :] * r[MCS])
    return srcs, dsts


@pytest.mark.parametrize("seed", range(5))
def test_greedy_schedule_obeys_port_rules(seed: int) -> None:
    tiles = 32
    t = _random_families(np.random.default_rng(seed), 60, tiles)
    s = schedule_greedy(t, tiles)
    assert s.horizon >= s.lower_bound > 0
    srcs, dsts = _family_tiles(t)
    words = t[:, 6] * t[:, 7]
    for port, members in (("send", srcs), ("recv", dsts)):
        busy: dict[int, list[tuple[int, int]]] = {}
        for i, tl in enumerate(members):
            for p, row in enumerate(tl.reshape(len(tl), -1)):
                begin = int(s.starts[i] + p * t[i, 15])
                for x in set(row.tolist()) if port == "recv" else {int(row[0])}:
                    busy.setdefault(x, []).append((begin, begin + int(words[i])))
        for iv in busy.values():
            iv.sort()
            for (_, a1), (b0, _) in zip(iv, iv[1:], strict=False):
                assert b0 >= a1, f"{port} port overlap"


def _scatter_nd(lay: Layout, x: np.ndarray) -> np.ndarray:
    blocks = np.zeros((lay.tiles, lay.block_elements), x.dtype)
    flat = x.ravel()
    for lo, ls, rows, re, tile, tc, ts, addr, tstr in binding_slices(lay, x.itemsize, 0, replicas=True):
        for m in range(tc):
            for r in range(rows):
                d = addr // x.itemsize + r * (tstr // x.itemsize)
                blocks[tile + m * ts, d : d + re] = flat[lo + r * ls : lo + r * ls + re]
    return blocks


@pytest.mark.parametrize(
    ("src", "dst", "perm", "offset", "view"),
    [
        # split heads: [S, H, D] view of [S, H*D] -> [H, S, D]
        (
            Layout((12, 3, 8), (2, 3), ((0,), (1,), ())),
            Layout((3, 12, 8), (3, 4), ((0,), (1,), ())),
            (1, 0, 2),
            None,
            lambda x: x.transpose(1, 0, 2),
        ),
        # merge heads back
        (
            Layout((3, 12, 8), (3, 4), ((0,), (1,), ())),
            Layout((12, 3, 8), (6,), ((0,), (), ())),
            (1, 0, 2),
            None,
            lambda x: x.transpose(1, 0, 2),
        ),
        # a key window [:, 4:10, :] replicated over a grid dimension
        (
            Layout((2, 12, 8), (2, 3), ((0,), (1,), ())),
            Layout((2, 6, 8), (2, 2), ((0,), (), ())),
            None,
            (0, 4, 0),
            lambda x: x[:, 4:10, :],
        ),
    ],
)
def test_nd_conversions(src: Layout, dst: Layout, perm, offset, view) -> None:
    x = np.arange(np.prod(src.shape), dtype=np.float16).reshape(src.shape)
    tiles = max(src.tiles, dst.tiles)
    s_full = np.zeros((tiles, src.block_elements), np.float16)
    s_full[: src.tiles] = _scatter_nd(src, x)
    got = np.zeros((tiles, dst.block_elements), np.float16)
    _apply(conversion_transfers(src, dst, 2, 2, perm, offset), s_full, got)
    want = _scatter_nd(dst, np.ascontiguousarray(view(x)))
    assert np.array_equal(got[: dst.tiles], want)
