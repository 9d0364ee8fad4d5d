"""The emulator's compiled loops (numba, cached on disk): the exchange data mover and its
checks, and host transfers (fp16 conversions of kernel operands: `abi.halves`).

A phase moves up to ~2M rows of a few words each; NumPy fancy indexing spends most of its time
building index arrays for that, a plain loop over contiguous word slices does not.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _member_spans(word, step, rows, words):  # noqa: ANN001, ANN202
    """Each member's hull [lo, hi) in words (its rows evenly strided, the step of either sign)."""
    last = word + (rows - 1) * step
    return np.minimum(word, last), np.maximum(word, last) + words


@njit(cache=True, nogil=True)
def read_written(by_dst, s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words):  # noqa: ANN001, ANN201, PLR0913
    """Per member, whether the span it reads may meet a span the phase writes on the same tile
    (hulls of strided rows: conservative). Only those members' rows must be read before any row
    is written; every other source is not written by the phase, so it is read in place. A tile's
    written hulls are merged into sorted disjoint intervals and each read hull is looked up by
    binary search. `by_dst`: the members in destination tile order (a stable radix sort; runs of
    one tile are sorted by address here only where they are not already)."""
    n = len(words)
    d_lo, d_hi = _member_spans(d_word, d_step, rows, words)
    s_lo, s_hi = _member_spans(s_word, s_step, rows, words)
    out = np.zeros(n, np.bool_)
    if n == 0:
        return out
    order = by_dst.copy()
    k0 = 0
    for k in range(1, n + 1):  # sort each tile's run by address, unless it is sorted already
        if k < n and d_tile[order[k]] == d_tile[order[k0]]:
            continue
        run = order[k0:k]
        for j in range(1, len(run)):
            if d_lo[run[j]] < d_lo[run[j - 1]]:
                order[k0:k] = run[np.argsort(d_lo[run])]
                break
        k0 = k
    # merged write intervals, tile by tile: tile t's are lo[first[t]:first[t + 1]]
    tiles = max(d_tile.max(), s_tile.max()) + 1
    lo, hi = np.empty(n, np.int64), np.empty(n, np.int64)
    first = np.zeros(tiles + 1, np.int64)
    m, cur = 0, -1
    for k in range(n):
        i = order[k]
        t = d_tile[i]
        if t != cur:
            for u in range(cur + 1, t + 1):
                first[u] = m
            cur = t
        elif d_lo[i] <= hi[m - 1]:
            hi[m - 1] = max(hi[m - 1], d_hi[i])
            continue
        lo[m], hi[m] = d_lo[i], d_hi[i]
        m += 1
    for u in range(cur + 1, tiles + 1):
        first[u] = m
    for i in range(n):
        a, b = first[s_tile[i]], first[s_tile[i] + 1]
        if a == b:
            continue
        j = a + np.searchsorted(lo[a:b], s_hi[i])  # intervals starting before the read span ends
        out[i] = j > a and hi[j - 1] > s_lo[i]  # the last of them (merged: the furthest) meets it
    return out


@njit(cache=True, nogil=True)
def buffer_sources(mem, tile_words, buffered, s_tile, s_word, s_step, rows, words):  # noqa: ANN001, ANN201, PLR0913
    """(buffer, start): the rows of every member flagged `buffered` (its source may be written by
    the phase: `read_written`) read out of `mem` before any row is written, member i's from
    buffer[start[i]] on (the hardware sends from memory as it was when the phase began)."""
    total = 0
    for i in range(len(words)):
        if buffered[i]:
            total += rows[i] * words[i]
    buf = np.empty(total, np.uint32)
    start = np.zeros(len(words), np.int64)
    o = 0
    for i in range(len(words)):
        if buffered[i]:
            start[i] = o
            n, a = words[i], s_tile[i] * tile_words + s_word[i]
            for _ in range(rows[i]):
                buf[o : o + n] = mem[a : a + n]
                o += n
                a += s_step[i]
    return buf, start


@njit(cache=True, nogil=True)
def copy_ordered(mem, tile_words, buffered, buf, start, order, *members):  # noqa: ANN001, ANN201
    """For every member i in `order`, copy `rows[i]` rows of `words[i]` 32-bit words, row r
    from (s_tile[i], s_word[i] + r s_step[i]) to (d_tile[i], d_word[i] + r d_step[i]) in `mem`
    (all tiles' words, flat: tile t's word w at t * tile_words + w), a `buffered` member's rows
    from `buffer_sources`' copy. No word is written twice (the phase's checks) and no unbuffered
    source is written, so members copy in any order, or in disjoint parts of `order` at once:
    the order only decides locality (by destination tile, one tile's memory fills in cache)."""
    s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words = members
    for k in range(len(order)):
        i = order[k]
        n, ds, nr = words[i], d_step[i], rows[i]
        b = d_tile[i] * tile_words + d_word[i]
        if buffered[i]:
            src_all, a, ss = buf, start[i], n
        else:
            src_all, a, ss = mem, s_tile[i] * tile_words + s_word[i], s_step[i]
        if ss == n and ds == n:  # rows contiguous on both sides: one run of all the words
            n, nr = n * nr, 1
        if n == 1:  # rows of one word (a column): no slices
            for _ in range(nr):
                mem[b] = src_all[a]
                a += ss
                b += ds
            continue
        for _ in range(nr):
            src, dst = src_all[a : a + n], mem[b : b + n]  # contiguous slices: the loop vectorizes
            for w in range(n):
                dst[w] = src[w]
            a += ss
            b += ds


@njit(cache=True, nogil=True)
def copy_members(mem, tile_words, buffered, order, s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words):  # noqa: ANN001, ANN201, PLR0913
    """Every member's rows copied as the phase moves them: every source row is read before any
    row is written (`buffer_sources`, then `copy_ordered` over all of `order`)."""
    buf, start = buffer_sources(mem, tile_words, buffered, s_tile, s_word, s_step, rows, words)
    members = (s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words)
    copy_ordered(mem, tile_words, buffered, buf, start, order, *members)


@njit(cache=True)
def copy_rows(mem32, s_tile, s_word, d_tile, d_word, words):  # noqa: ANN001, ANN201
    """`copy_members` for single rows: row i's `words[i]` words from (s_tile[i], s_word[i]) to
    (d_tile[i], d_word[i]) in `mem32` [tiles, words per tile]."""
    zero, one = np.zeros(len(words), np.int64), np.ones(len(words), np.int64)
    by_dst = np.argsort(d_tile, kind="mergesort")
    buffered = read_written(by_dst, s_tile, s_word, zero, d_tile, d_word, zero, one, words)
    order = np.arange(len(words))
    flat = mem32.reshape(-1)
    copy_members(flat, mem32.shape[1], buffered, order, s_tile, s_word, zero, d_tile, d_word, zero, one, words)


@njit(inline="always")
def _mark(bits_row, w0, w1):  # noqa: ANN001, ANN202
    """Set the bits of words [w0, w1) (w1 > w0) in one tile's uint64 bitset; False if one was
    already set. 64 words a bitset word, by masks."""
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    q0, q1 = w0 >> 6, (w1 - 1) >> 6
    lo = full << np.uint64(w0 & 63)
    hi = full >> np.uint64(63 - ((w1 - 1) & 63))
    if q0 == q1:
        m = lo & hi
        if bits_row[q0] & m:
            return False
        bits_row[q0] |= m
        return True
    if bits_row[q0] & lo or bits_row[q1] & hi:
        return False
    for q in range(q0 + 1, q1):
        if bits_row[q]:
            return False
    bits_row[q0] |= lo
    bits_row[q1] |= hi
    for q in range(q0 + 1, q1):
        bits_row[q] = full
    return True


@njit(cache=True, nogil=True)
def any_double_write(bits, order, d_tile, d_word, d_step, rows, words):  # noqa: ANN001, ANN201
    """Whether some destination word is written twice: marks every row's words (members in
    `order`: by destination tile, one tile's bits stay in cache) in `bits` (a zeroed uint64
    [tiles, words per tile / 64 + 1] bitset, zeroed again on return: each member's span)."""
    found = False
    done = len(order)
    for k in range(len(order)):
        i = order[k]
        bits_row, n, step, nr = bits[d_tile[i]], words[i], d_step[i], rows[i]
        if step == n:  # contiguous rows: one range
            n, nr = n * nr, 1
        w0 = d_word[i]
        for _ in range(nr):
            if n > 0 and not _mark(bits_row, w0, w0 + n):
                found = True
                break
            w0 += step
        if found:
            done = k + 1
            break
    for k in range(done):
        i = order[k]
        last = d_word[i] + (rows[i] - 1) * d_step[i]
        lo, hi = min(d_word[i], last), max(d_word[i], last) + words[i]
        if hi > lo:
            bits[d_tile[i], lo >> 6 : ((hi - 1) >> 6) + 1] = 0
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


@njit(cache=True, nogil=True)
def scatter_slices(mem, raw, slices, es, base):  # noqa: ANN001, ANN201
    """Write logical bytes `raw` into every replica tile of every (checked) slice (`mem` [tiles,
    bytes per tile]; each row a contiguous run of its flat bytes, copied by a loop that vectorizes)."""
    flat, tb = mem.reshape(-1), mem.shape[1]
    for k in range(slices.shape[0]):
        lo, ls, rows, re, tile, tc, ts, addr, tstride = slices[k]
        n = re * es
        for m in range(tc):
            t = tile + m * ts
            for r in range(rows):
                a, b = (lo + ls * r) * es, t * tb + addr - base + tstride * r
                src, dst = raw[a : a + n], flat[b : b + n]
                for j in range(n):
                    dst[j] = src[j]


@njit(cache=True, nogil=True)
def gather_slices(mem, raw, slices, es, base):  # noqa: ANN001, ANN201
    """Read every (checked) slice's first replica into logical bytes `raw`."""
    flat, tb = mem.reshape(-1), mem.shape[1]
    for k in range(slices.shape[0]):
        lo, ls, rows, re, tile, tc, ts, addr, tstride = slices[k]
        n = re * es
        for r in range(rows):
            a, b = (lo + ls * r) * es, tile * tb + addr - base + tstride * r
            src, dst = flat[b : b + n], raw[a : a + n]
            for j in range(n):
                dst[j] = src[j]
