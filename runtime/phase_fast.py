"""An exchange phase's members and static checks in one compiled pass (numba, cached on disk).

`expand_checked` expands a phase table into its members in 32-bit word units (what
`copy_members` takes) and, in the same loop, checks what `Emulator._prepare` checks member by
member: positive counts, tiles in range, source and destination spans inside memory, word
alignment, and whether a destination span meets a program's code. It only answers whether all
hold: when one does not, the emulator runs its NumPy checks, which find and name the first
fault with the diagnostics they always gave. The mk2 transformer block's 32 phases (1.5M
members) cost ~0.7 s through `expand_members` and NumPy's passes; this costs a few ms a phase.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ipu.abi.transfers import (
    D_OFF,
    D_STR,
    D_TILE,
    MC,
    MCS,
    PC,
    PDO,
    PDS,
    PSO,
    PSS,
    PTS,
    ROWS,
    S_OFF,
    S_STR,
    S_TILE,
    START,
    WORDS,
)

# phase-table columns (a move table's, after `start`)
_MOVE_COLUMNS = (S_TILE, S_OFF, S_STR, D_TILE, D_OFF, D_STR, ROWS, WORDS, PC, PSS, PDS, MC, MCS, PSO, PDO, PTS)
_C = tuple(c + 1 for c in _MOVE_COLUMNS)


@njit(cache=True, nogil=True)
def _expand(t, cols, start_col, base, size, tiles, code):  # noqa: ANN001, ANN202, PLR0915
    """(ok, members [12, n]): rows fam, start, end, src tile, src word, src word step, dst tile,
    dst word, dst word step, rows, words, sender (multicast index 0). `code` [P, 4]: each program's
    first tile, end tile and code byte offsets [c0, c1)."""
    (s_tile, s_off, s_str, d_tile, d_off, d_str, rows_c, words_c, pc_c, pss, pds, mc_c, mcs, pso, pdo, pts) = cols
    n = 0
    for f in range(t.shape[0]):
        if t[f, rows_c] <= 0 or t[f, words_c] <= 0 or t[f, pc_c] <= 0 or t[f, mc_c] <= 0:
            return False, np.zeros((12, 0), np.int64)
        n += t[f, pc_c] * t[f, mc_c]
    out = np.empty((12, n), np.int64)
    ok = True
    k = 0
    for f in range(t.shape[0]):
        r = t[f]
        rows, words, ss, ds = r[rows_c], r[words_c], r[s_str], r[d_str]
        nb, last = 4 * words, rows - 1
        if (ss | ds) & 3:
            ok = False
        for p in range(r[pc_c]):
            src = r[s_tile] + p * r[pss]
            so = r[s_off] + p * r[pso] - base
            do = r[d_off] + p * r[pdo] - base
            st = r[start_col] + p * r[pts]
            if src < 0 or src >= tiles or (so | do) & 3:
                ok = False
            if so + min(0, last * ss) < 0 or so + max(0, last * ss) + nb > size:
                ok = False
            d_lo, d_hi = do + min(0, last * ds), do + max(0, last * ds) + nb
            if d_lo < 0 or d_hi > size:
                ok = False
            for c in range(r[mc_c]):
                dst = r[d_tile] + p * r[pds] + c * r[mcs]
                if dst < 0 or dst >= tiles:
                    ok = False
                for q in range(code.shape[0]):
                    if code[q, 0] <= dst < code[q, 1] and d_lo < code[q, 3] and d_hi > code[q, 2]:
                        ok = False  # a span meets the code: the exact (row by row) check decides
                out[0, k], out[1, k], out[2, k] = f, st, st + rows * words
                out[3, k], out[4, k], out[5, k] = src, so >> 2, ss >> 2
                out[6, k], out[7, k], out[8, k] = dst, do >> 2, ds >> 2
                out[9, k], out[10, k], out[11, k] = rows, words, c == 0
                k += 1
    return ok, out


@njit(cache=True, nogil=True)
def _ports_ok(tile, start, end, order):  # noqa: ANN001, ANN202
    """No two members on one tile's port overlap in time (`order`: by (tile, start))."""
    for k in range(1, len(order)):
        a, b = order[k - 1], order[k]
        if tile[a] == tile[b] and start[b] < end[a]:
            return False
    return True


def _by_tile_start(tile: np.ndarray, start: np.ndarray) -> np.ndarray:
    span = int(start.max()) - int(start.min()) + 1 if len(start) else 1
    if (int(tile.max()) + 1 if len(tile) else 1) * span < 1 << 62:
        return np.argsort(tile * span + (start - int(start.min())), kind="stable")
    return np.lexsort((start, tile))


def expand_checked(t: np.ndarray, base: int, size: int, tiles: int, code: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """A phase table's members (fam, start, end, then `copy_members`' eight arrays, then sender)
    when every member passes the static checks and no port is used twice; None when some rule
    may be broken (the caller's exact checks then name it)."""
    ok, m = _expand(np.ascontiguousarray(t, np.int64), _C, START, base, size, tiles, code)
    if not ok:
        return None
    fam, start, end, s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words, sender = m
    send = np.flatnonzero(sender)
    if not _ports_ok(s_tile[send], start[send], end[send], _by_tile_start(s_tile[send], start[send])):
        return None
    if not _ports_ok(d_tile, start, end, _by_tile_start(d_tile, start)):
        return None
    return fam, start, end, s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words, sender.astype(bool)


_ROUTE_COLUMNS = tuple(c + 1 for c in (S_TILE, D_TILE, PC, PSS, PDS, MC, MCS))


@njit(cache=True, nogil=True)
def _route_pairs(t, cols, perm, tpc):  # noqa: ANN001, ANN202
    """(ok, source tiles, destination tiles): the first member joining each pair of physical
    columns, in pair order; not ok when a count is negative or a tile is out of range."""
    s_tile, d_tile, pc_c, pss, pds, mc_c, mcs = cols
    tiles = len(perm)
    columns = (tiles + tpc - 1) // tpc
    first = np.full((2, columns * columns), -1, np.int64)
    for f in range(t.shape[0]):
        r = t[f]
        if r[pc_c] < 0 or r[mc_c] < 0:
            return False, first[0, :0], first[1, :0]
        for p in range(r[pc_c]):
            src = r[s_tile] + p * r[pss]
            if src < 0 or src >= tiles:
                return False, first[0, :0], first[1, :0]
            for c in range(r[mc_c]):
                dst = r[d_tile] + p * r[pds] + c * r[mcs]
                if dst < 0 or dst >= tiles:
                    return False, first[0, :0], first[1, :0]
                q = perm[src] // tpc * columns + perm[dst] // tpc
                if first[0, q] < 0:
                    first[0, q], first[1, q] = src, dst
    seen = first[0] >= 0
    return True, first[0][seen], first[1][seen]


def route_pairs(t: np.ndarray, perm: np.ndarray, tiles_per_column: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(source tiles, destination tiles) of one member of phase table `t` for each pair of
    physical columns (`perm`: logical to physical tile) its members join, or None when a count or
    a tile is out of range. A route's delay depends only on its tiles' columns
    (`Target.route_cycles`), so these pairs have the phase's longest route without expanding its
    members (a ms a phase, against ~5 ms for the members' arrays)."""
    ok, src, dst = _route_pairs(np.ascontiguousarray(t, np.int64), _ROUTE_COLUMNS, perm, tiles_per_column)
    return (src, dst) if ok else None
