"""The exchange row copier reads every source before writing, with or without overlap."""

from __future__ import annotations

import numpy as np

from ipu.runtime.copy_rows import copy_rows


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
