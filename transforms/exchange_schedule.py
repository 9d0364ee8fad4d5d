"""Exchange-phase scheduling: endpoint lower bound and a valid cycle schedule.

A transfer family occupies its source's send port and each destination's receive port for
`rows * row_words` cycles (one 32-bit word out and one in per tile per cycle, multicast
counted once at the sender). The lower bound is max over tiles of max(words sent, words
received); the greedy list scheduler places families longest-first at the earliest cycle all
their ports are free, so every schedule it returns obeys the port rules by construction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# columns of a move table (TRANSFER_COLUMNS without `start`)
S_TILE, S_OFF, S_STR, D_TILE, D_OFF, D_STR, ROWS, WORDS, PC, PSS, PDS, MC, MCS, PSO, PDO, PTS = range(16)


def family_tiles(t: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per family: its members' source tiles [pc] and destination tiles [pc, mc]."""
    srcs, dsts = [], []
    for r in t:
        p = np.arange(r[PC])
        srcs.append(r[S_TILE] + p * r[PSS])
        dsts.append((r[D_TILE] + p * r[PDS])[:, None] + np.arange(r[MC])[None, :] * r[MCS])
    return srcs, dsts


def endpoint_lower_bound(t: np.ndarray, tiles: int) -> int:
    """max over tiles of max(words sent, words received)."""
    if not len(t):
        return 0
    sent = np.zeros(tiles, np.int64)
    recv = np.zeros(tiles, np.int64)
    srcs, dsts = family_tiles(t)
    for r, s, d in zip(t, srcs, dsts, strict=True):
        w = int(r[ROWS] * r[WORDS])
        np.add.at(sent, s, w)
        np.add.at(recv, d.ravel(), w)
    return int(max(sent.max(), recv.max()))


@dataclass(frozen=True)
class Schedule:
    starts: np.ndarray
    lower_bound: int
    horizon: int
    scheduler: str


def schedule_greedy(t: np.ndarray, tiles: int) -> Schedule:
    """Longest-first list scheduling at family granularity (non-preemptive). Member p of a
    family starts `p * par_time_step` after the family; every port is reserved from the family's
    start to its last use, so the schedule obeys the port rules by construction."""
    lb = endpoint_lower_bound(t, tiles)
    send_free = np.zeros(tiles, np.int64)
    recv_free = np.zeros(tiles, np.int64)
    starts = np.zeros(len(t), np.int64)
    if not len(t):
        return Schedule(starts, lb, 0, "greedy-longest-first")
    words = t[:, ROWS] * t[:, WORDS]
    total = words + (t[:, PC] - 1) * t[:, PTS]
    srcs, dsts = family_tiles(t)
    order = np.lexsort((t[:, S_TILE], -total))
    for i in order:
        s, d = srcs[i], dsts[i]
        off = np.arange(len(s)) * t[i, PTS]
        start = max(int((send_free[s] - off).max()), int((recv_free[d] - off[:, None]).max()), 0)
        starts[i] = start
        np.maximum.at(send_free, s, start + off + words[i])
        np.maximum.at(recv_free, d.ravel(), np.repeat(start + off + words[i], d.shape[1]))
    horizon = int((starts + total).max())
    return Schedule(starts, lb, horizon, "greedy-longest-first")
