"""The emulator's compiled loops (numba, cached on disk): the exchange data mover and its
checks, and the fp16 widening of kernel inputs.

A phase moves up to ~2M rows of a few words each; NumPy fancy indexing spends most of its time
building index arrays for that, a plain loop over contiguous word slices does not.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _hulls_disjoint(tiles, s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words):  # noqa: ANN001, ANN202
    """Whether, on every tile, the span of words read and the span written do not meet."""
    big = np.iinfo(np.int64).max
    s_lo = np.full(tiles, big, np.int64)
    s_hi = np.zeros(tiles, np.int64)
    d_lo = np.full(tiles, big, np.int64)
    d_hi = np.zeros(tiles, np.int64)
    for i in range(len(words)):
        a, b = s_tile[i], d_tile[i]
        s_last, d_last = s_word[i] + (rows[i] - 1) * s_step[i], d_word[i] + (rows[i] - 1) * d_step[i]
        s_lo[a] = min(s_lo[a], min(s_word[i], s_last))
        s_hi[a] = max(s_hi[a], max(s_word[i], s_last) + words[i])
        d_lo[b] = min(d_lo[b], min(d_word[i], d_last))
        d_hi[b] = max(d_hi[b], max(d_word[i], d_last) + words[i])
    for t in range(tiles):
        if s_lo[t] < d_hi[t] and d_lo[t] < s_hi[t]:
            return False
    return True


@njit(cache=True)
def copy_members(mem32, s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words):  # noqa: ANN001, ANN201
    """For every member i, copy `rows[i]` rows of `words[i]` 32-bit words, row r from
    (s_tile[i], s_word[i] + r s_step[i]) to (d_tile[i], d_word[i] + r d_step[i]) in `mem32`
    [tiles, words per tile], with the result of reading every source row before any row is
    written (the hardware sends from memory as it was when the phase began): directly when no
    tile reads a span it also writes, else through a buffer."""
    if _hulls_disjoint(mem32.shape[0], s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words):
        for i in range(len(words)):
            n = words[i]
            for r in range(rows[i]):
                a, b = s_word[i] + r * s_step[i], d_word[i] + r * d_step[i]
                mem32[d_tile[i], b : b + n] = mem32[s_tile[i], a : a + n]
        return
    total = 0
    for i in range(len(words)):
        total += rows[i] * words[i]
    buf = np.empty(total, np.uint32)
    o = 0
    for i in range(len(words)):
        n = words[i]
        for r in range(rows[i]):
            a = s_word[i] + r * s_step[i]
            buf[o : o + n] = mem32[s_tile[i], a : a + n]
            o += n
    o = 0
    for i in range(len(words)):
        n = words[i]
        for r in range(rows[i]):
            b = d_word[i] + r * d_step[i]
            mem32[d_tile[i], b : b + n] = buf[o : o + n]
            o += n


@njit(cache=True)
def copy_rows(mem32, s_tile, s_word, d_tile, d_word, words):  # noqa: ANN001, ANN201
    """`copy_members` for single rows: row i's `words[i]` words from (s_tile[i], s_word[i]) to
    (d_tile[i], d_word[i])."""
    zero, one = np.zeros(len(words), np.int64), np.ones(len(words), np.int64)
    copy_members(mem32, s_tile, s_word, zero, d_tile, d_word, zero, one, words)


@njit(cache=True)
def _mark_range(bits_row, w0, w1):  # noqa: ANN001, ANN202
    """Set the bits of words [w0, w1) in one tile's bitset; False if one was already set. Whole
    bytes go eight words at a time."""
    w = w0
    while w < w1 and (w & 7):
        b = np.uint8(1 << (w & 7))
        if bits_row[w >> 3] & b:
            return False
        bits_row[w >> 3] |= b
        w += 1
    while w + 8 <= w1:
        if bits_row[w >> 3]:
            return False
        bits_row[w >> 3] = 0xFF
        w += 8
    while w < w1:
        b = np.uint8(1 << (w & 7))
        if bits_row[w >> 3] & b:
            return False
        bits_row[w >> 3] |= b
        w += 1
    return True


@njit(cache=True)
def any_double_write(bits, d_tile, d_word, d_step, rows, words):  # noqa: ANN001, ANN201
    """Whether some destination word is written twice: marks every row's words in `bits` (a
    zeroed [tiles, words per tile / 8] bitset, zeroed again on return). O(words / 8), no sort."""
    found = False
    done = len(words)
    for i in range(len(words)):
        bits_row = bits[d_tile[i]]
        for r in range(rows[i]):
            w0 = d_word[i] + r * d_step[i]
            if not _mark_range(bits_row, w0, w0 + words[i]):
                found = True
                break
        if found:
            done = i + 1
            break
    for i in range(done):
        bits_row = bits[d_tile[i]]
        for r in range(rows[i]):
            w0 = d_word[i] + r * d_step[i]
            bits_row[w0 >> 3 : ((w0 + words[i] - 1) >> 3) + 1] = 0
    return found


@njit(cache=True)
def first_unwritten(written, tile, word, step, rows, words):  # noqa: ANN001, ANN201
    """(member, byte offset) of the first source byte whose `written` flag is clear, or (-1, -1)
    (addresses in 32-bit words, as `copy_members` takes them)."""
    for i in range(len(words)):
        for r in range(rows[i]):
            b0 = 4 * (word[i] + r * step[i])
            for b in range(b0, b0 + 4 * words[i]):
                if not written[tile[i], b]:
                    return i, b
    return -1, -1


@njit(cache=True)
def mark_written(written, tile, word, step, rows, words):  # noqa: ANN001, ANN201
    """Set the `written` flags of every row's bytes."""
    for i in range(len(words)):
        for r in range(rows[i]):
            b0 = 4 * (word[i] + r * step[i])
            written[tile[i], b0 : b0 + 4 * words[i]] = True


_F16_TO_F32 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)


@njit(cache=True)
def _widen_rows(src, table, out):  # noqa: ANN001, ANN202
    for i in range(src.shape[0]):
        r, o = src[i], out[i]  # one contiguous row each: the inner loop vectorizes
        for j in range(r.shape[0]):
            o[j] = table[r[j]]


def f16_to_f32(view: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A contiguous float32 copy of a float16 [rows, n] view of tile memory (strided rows), into
    `out` when given: a lookup in the 65,536-entry table of every half's value, about twice
    NumPy's cast rate here."""
    out = np.empty(view.shape, np.float32) if out is None else out
    _widen_rows(view.view(np.uint16), _F16_TO_F32, out)
    return out


@njit(cache=True)
def first_bad_slice(slices, es, tiles, logical_bytes, mem_bytes, base):  # noqa: ANN001, ANN201
    """Index of the first binding slice that leaves its tensor, the tiles or tile memory, else -1
    (ipu.abi.tables.SLICE: logical offset and stride, rows, row elements, tile, tile count, tile step,
    address, address stride)."""
    for k in range(slices.shape[0]):
        lo, ls, rows, re, tile, tc, ts, addr, tstride = slices[k]
        if tc <= 0 or rows <= 0 or re <= 0:
            return k
        last = tile + (tc - 1) * ts
        if min(tile, last) < 0 or max(tile, last) >= tiles:
            return k
        l_end = lo + ls * (rows - 1)
        if min(lo, l_end) < 0 or (max(lo, l_end) + re) * es > logical_bytes:
            return k
        o_end = addr - base + tstride * (rows - 1)
        if min(addr - base, o_end) < 0 or max(addr - base, o_end) + re * es > mem_bytes:
            return k
    return -1


@njit(cache=True)
def scatter_slices(mem, raw, slices, es, base):  # noqa: ANN001, ANN201
    """Write logical bytes `raw` into every replica tile of every (checked) slice."""
    for k in range(slices.shape[0]):
        lo, ls, rows, re, tile, tc, ts, addr, tstride = slices[k]
        n = re * es
        for m in range(tc):
            t = tile + m * ts
            for r in range(rows):
                a, b = (lo + ls * r) * es, addr - base + tstride * r
                mem[t, b : b + n] = raw[a : a + n]


@njit(cache=True)
def gather_slices(mem, raw, slices, es, base):  # noqa: ANN001, ANN201
    """Read every (checked) slice's first replica into logical bytes `raw`."""
    for k in range(slices.shape[0]):
        lo, ls, rows, re, tile, tc, ts, addr, tstride = slices[k]
        n = re * es
        for r in range(rows):
            a, b = (lo + ls * r) * es, addr - base + tstride * r
            raw[a : a + n] = mem[tile, b : b + n]
