"""The exchange list scheduler's inner loop, compiled by numba (cached on disk).

Placing one family costs a handful of port lookups; done with NumPy calls per family it spent
~25 us each in call overhead, and the mk2 transformer block list-schedules ~190 tables of up to
a few thousand families. The loop reads the move table's columns directly (no per-family member
arrays) and keeps exactly the semantics of `exchange.schedulers._greedy`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ipu.abi.transfers import D_TILE, MC, MCS, PC, PDS, PSS, PTS, ROWS, S_TILE, WORDS


@njit(cache=True)
def _place(t, tiles, order, s_tile, d_tile, rows, words, pc, pss, pds, mc, mcs, pts):  # noqa: ANN001, ANN202
    send_free = np.zeros(tiles, np.int64)
    recv_free = np.zeros(tiles, np.int64)
    starts = np.zeros(t, np.int64)
    horizon = 0
    for i in order:
        w = rows[i] * words[i]
        start = 0
        for p in range(pc[i]):
            off = p * pts[i]
            s = s_tile[i] + p * pss[i]
            start = max(start, send_free[s] - off)
            d0 = d_tile[i] + p * pds[i]
            for c in range(mc[i]):
                start = max(start, recv_free[d0 + c * mcs[i]] - off)
        starts[i] = start
        for p in range(pc[i]):
            end = start + p * pts[i] + w
            s = s_tile[i] + p * pss[i]
            send_free[s] = max(send_free[s], end)
            d0 = d_tile[i] + p * pds[i]
            for c in range(mc[i]):
                d = d0 + c * mcs[i]
                recv_free[d] = max(recv_free[d], end)
        horizon = max(horizon, start + w + (pc[i] - 1) * pts[i])
    return starts, horizon


def list_schedule(t: np.ndarray, tiles: int, order: np.ndarray) -> tuple[np.ndarray, int]:
    """Starts of the families of move table `t` placed in `order` at the earliest cycle all their
    ports are free (member p starts p * par_time_step after its family), and the horizon."""
    c = np.ascontiguousarray(t, dtype=np.int64).T.copy()
    starts, horizon = _place(
        len(t),
        tiles,
        np.asarray(order, np.int64),
        c[S_TILE],
        c[D_TILE],
        c[ROWS],
        c[WORDS],
        c[PC],
        c[PSS],
        c[PDS],
        c[MC],
        c[MCS],
        c[PTS],
    )
    return starts, int(horizon)
