"""The emulator's compiled phase pass expands members exactly as `expand_members` does, and says
"all hold" only when the exact checks would pass (a doubtful phase goes to them); a phase's
column pairs give the longest route its members give."""

from __future__ import annotations

import numpy as np

from ipu.abi.tables import TRANSFER
from ipu.abi.transfers import expand_members, member_tiles
from ipu.runtime.phase_fast import expand_checked, route_pairs

_NO_CODE = np.zeros((0, 4), np.int64)


def _table(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random valid-shaped families (positive counts, word-aligned addresses) on 64 tiles."""
    t = np.zeros((n, len(TRANSFER)), np.int64)
    col = {c: TRANSFER.index(c) for c in TRANSFER.columns}
    t[:, col["start"]] = rng.integers(0, 1000, n)
    for c, lo, hi in (
        ("src_tile", 0, 16),
        ("dst_tile", 0, 16),
        ("rows", 1, 4),
        ("row_words", 1, 8),
        ("par_count", 1, 4),
        ("par_src_step", 0, 4),
        ("par_dst_step", 0, 4),
        ("mc_count", 1, 4),
        ("mc_step", 1, 4),
        ("par_time_step", 0, 50),
    ):
        t[:, col[c]] = rng.integers(lo, hi, n)
    for c in ("src_address", "dst_address"):
        t[:, col[c]] = 4 * rng.integers(0, 256, n)
    for c in ("src_stride", "dst_stride", "par_src_offset_step", "par_dst_offset_step"):
        t[:, col[c]] = 4 * rng.integers(0, 16, n)
    return t


def test_members_match_expand_members() -> None:
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(300):
        t = _table(rng, int(rng.integers(1, 6)))
        got = expand_checked(t, 0, 1 << 16, 64, _NO_CODE)
        if got is None:  # ports used twice (random starts): the exact checks decide
            continue
        seen += 1
        fam, start, end, s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words, sender = got
        m = expand_members(t)
        for a, b in (
            (fam, m.fam),
            (start, m.start),
            (end, m.end),
            (s_tile, m.src),
            (d_tile, m.dst),
            (4 * s_word, m.src_addr),
            (4 * d_word, m.dst_addr),
            (4 * s_step, m.src_stride),
            (4 * d_step, m.dst_stride),
            (rows, m.rows),
            (words, m.row_words),
            (sender, m.sender),
        ):
            assert np.array_equal(a, b)
    assert seen > 50


def test_doubtful_phases_go_to_the_exact_checks() -> None:
    rng = np.random.default_rng(1)
    col = {c: TRANSFER.index(c) for c in TRANSFER.columns}
    t = _table(rng, 1)
    t[0, col["par_count"]] = t[0, col["mc_count"]] = 1
    assert expand_checked(t, 0, 1 << 16, 64, _NO_CODE) is not None
    for c, v in (("rows", 0), ("dst_tile", 64), ("src_address", 2), ("dst_address", 1 << 16)):
        bad = t.copy()
        bad[0, col[c]] = v
        assert expand_checked(bad, 0, 1 << 16, 64, _NO_CODE) is None, c
    # a destination span meeting a program's code on its tiles
    d = int(t[0, col["dst_address"]])
    code = np.array([[0, 64, d, d + 4]], np.int64)
    assert expand_checked(t, 0, 1 << 16, 64, code) is None
    # two members on one receive port at once
    two = np.concatenate([t, t])
    two[1, col["src_tile"]] = (t[0, col["src_tile"]] + 1) % 16
    assert expand_checked(two, 0, 1 << 16, 64, _NO_CODE) is None


def test_column_pairs_give_the_members_longest_route() -> None:
    """On a few columns of tiles, under a scrambling permutation, `route_pairs`' members route as
    far as the longest of all members; a tile out of range gives None (the caller's own path)."""
    rng = np.random.default_rng(2)
    tiles, tpc = 64, 8
    for _ in range(300):
        t = _table(rng, int(rng.integers(1, 6)))
        perm = rng.permutation(tiles)
        pairs = route_pairs(t, perm, tpc)
        assert pairs is not None
        src, dst = member_tiles(t)[:2]
        want = np.abs(perm[src] // tpc - perm[dst] // tpc).max()
        assert np.abs(perm[pairs[0]] // tpc - perm[pairs[1]] // tpc).max() == want
        assert len(pairs[0]) == len(set(zip(perm[src] // tpc, perm[dst] // tpc, strict=True)))
    bad = _table(rng, 1)
    bad[0, TRANSFER.index("dst_tile")] = tiles
    assert route_pairs(bad, np.arange(tiles), tpc) is None
