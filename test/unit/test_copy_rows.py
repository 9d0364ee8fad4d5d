"""The exchange row copier reads every source before writing, with or without overlap."""

from __future__ import annotations

import numpy as np

from ipu.runtime.copy_rows import copy_rows


def writes_twice(shape: tuple[int, int], d_tile, d_word, d_step, rows, words) -> bool:  # noqa: ANN001
    """Whether members (destination tile, word, word step, rows, words a row) write some word of
    [tiles, words a tile] memory twice, counted word by word."""
    written = np.zeros(shape, int)
    for k in range(len(words)):
        for r in range(rows[k]):
            w0 = d_word[k] + r * d_step[k]
            written[d_tile[k], w0 : w0 + words[k]] += 1
    return bool(written.max() > 1)


def _run(mem: np.ndarray, rows: list[tuple[int, int, int, int, int]]) -> np.ndarray:
    a = np.array(rows, np.int64).reshape(-1, 5)
    out = mem.copy()
    copy_rows(out, a[:, 0].copy(), a[:, 1].copy(), a[:, 2].copy(), a[:, 3].copy(), a[:, 4].copy())
    return out


def test_disjoint_rows_copy_directly() -> None:
    mem = np.arange(32, dtype=np.uint32).reshape(2, 16)
    out = _run(mem, [(0, 0, 1, 8, 4), (1, 0, 0, 12, 2)])
    assert out[1, 8:12].tolist() == [0, 1, 2, 3]
    assert out[0, 12:14].tolist() == [16, 17]


def test_overlapping_rows_see_the_phase_start() -> None:
    # a swap within one tile: each row must read what was there when the phase began
    mem = np.arange(16, dtype=np.uint32).reshape(1, 16)
    out = _run(mem, [(0, 0, 0, 4, 4), (0, 4, 0, 0, 4)])
    assert out[0, :8].tolist() == [4, 5, 6, 7, 0, 1, 2, 3]


def test_double_write_check_matches_a_word_count() -> None:
    """The bitset check flags exactly the phases that write some word twice, in any member
    order, and leaves its scratch zeroed either way (random strided members, rows crossing
    bitset words)."""
    from ipu.runtime.copy_rows import any_double_write

    rng = np.random.default_rng(0)
    i64 = np.int64
    for _ in range(2000):
        n = int(rng.integers(1, 6))
        d_tile, d_word = rng.integers(0, 2, n).astype(i64), rng.integers(0, 60, n).astype(i64)
        d_step, rows, words = (rng.integers(lo, hi, n).astype(i64) for lo, hi in ((0, 20), (1, 4), (1, 140)))
        bits = np.zeros((2, 10), np.uint64)
        order = rng.permutation(n)
        count = np.zeros((2, 640), int)
        for k in range(n):
            for r in range(rows[k]):
                w0 = d_word[k] + r * d_step[k]
                count[d_tile[k], w0 : w0 + words[k]] += 1
        assert any_double_write(bits, order, d_tile, d_word, d_step, rows, words) == (count.max() > 1)
        assert not bits.any()


def test_strided_members_match_a_snapshot_copy() -> None:
    """Random phases of strided members (some reading spans others write on the same tile, some
    not) give what copying from a snapshot of memory at the phase's start gives, and
    `read_written` flags every member whose source a write meets (and only those, on hulls)."""
    from ipu.runtime.copy_rows import copy_members, read_written

    rng = np.random.default_rng(1)
    i64 = np.int64
    tiles, tw = 3, 96
    for _ in range(1500):
        n = int(rng.integers(1, 7))
        cols = [rng.integers(lo, hi, n).astype(i64) for lo, hi in ((0, tiles), (0, 40), (-3, 8))]
        cols += [rng.integers(lo, hi, n).astype(i64) for lo, hi in ((0, tiles), (0, 40), (0, 9), (1, 5), (1, 5))]
        s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words = cols
        s_word = s_word + np.maximum(0, -(rows - 1) * s_step)  # keep backwards-strided sources in memory
        if writes_twice((tiles, tw), d_tile, d_word, d_step, rows, words):
            continue  # the phase's checks refuse a word written twice
        args = (s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words)
        buffered = read_written(np.argsort(d_tile, kind="stable"), *args)
        mem = rng.integers(0, 1 << 32, tiles * tw, dtype=np.uint64).astype(np.uint32)
        want, snap = mem.copy(), mem.copy()
        for k in range(n):
            last = s_word[k] + (rows[k] - 1) * s_step[k]
            lo, hi = min(s_word[k], last), max(s_word[k], last) + words[k]
            on = [j for j in range(n) if d_tile[j] == s_tile[k]]
            d_lo = [d_word[j] + min(0, (rows[j] - 1) * d_step[j]) for j in on]
            d_hi = [d_word[j] + max(0, (rows[j] - 1) * d_step[j]) + words[j] for j in on]
            assert buffered[k] == any(a < hi and b > lo for a, b in zip(d_lo, d_hi, strict=True))
            for r in range(rows[k]):
                a, b = s_tile[k] * tw + s_word[k] + r * s_step[k], d_tile[k] * tw + d_word[k] + r * d_step[k]
                want[b : b + words[k]] = snap[a : a + words[k]]
        copy_members(mem, tw, buffered, rng.permutation(n), *args)
        assert (mem == want).all()
