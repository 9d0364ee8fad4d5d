"""Exact preemptive exchange scheduling of unicast phases at the endpoint lower bound.

A unicast phase is a bipartite multigraph (senders x receivers, one edge per transfer weighted
by its words); by König's theorem it has a schedule of exactly LB = max port load cycles. This is
the event-driven Gonzalez–Sahni construction: ports keep their current partner until a transfer
ends; free ports take a transfer to a free partner; a port whose remaining load equals the
remaining horizon ("tight") must be busy, and an idle tight port is rescued by a shortest
alternating path that ends at a free port or preempts a non-tight one. Preemption splits a
transfer into runs; runs are then cut at row boundaries into table rows and folded back into
families so the IR stays compact. The hot loop is compiled by numba (cached on disk).
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
    PDS,
    PSS,
    ROWS,
    S_OFF,
    S_STR,
    S_TILE,
    WORDS,
    member_rows,
    unicast_members,
)


@njit(cache=True)
def _other(e: int, x: int, src: np.ndarray, dst: np.ndarray, n: int) -> int:
    return n + dst[e] if x < n else src[e]


@njit(cache=True)
def _augment(p, hrem, n, src, dst, rem, load, match, ptr, adj, vis, stamp, par, queue) -> int:  # noqa: ANN001
    """Match the idle tight port `p` along a shortest alternating path (BFS over live edges).
    Returns the non-tight port that gave its partner up, -1 if none did, -2 if no path exists."""
    vis[p] = stamp
    queue[0] = p
    qh, qt = 0, 1
    while qh < qt:
        u = queue[qh]
        qh += 1
        for k in range(ptr[u], ptr[u + 1]):
            e = adj[k]
            if rem[e] == 0:
                continue
            v = _other(e, u, src, dst, n)
            if vis[v] == stamp:
                continue
            vis[v] = stamp
            par[v] = e
            m = match[v]
            end = m == -1
            released = -1
            if not end:
                u2 = _other(m, v, src, dst, n)
                if vis[u2] == stamp:
                    continue
                vis[u2] = stamp
                if load[u2] < hrem:  # not tight: may give its partner up
                    match[u2] = -1
                    released = u2
                    end = True
                else:
                    queue[qt] = u2
                    qt += 1
            if end:
                while True:  # flip the path back to p
                    e2 = par[v]
                    u3 = _other(e2, v, src, dst, n)
                    old = match[u3]
                    match[u3] = e2
                    match[v] = e2
                    if old == -1:
                        return released
                    v = _other(old, u3, src, dst, n)
    return -2


@njit(cache=True)
def _schedule(src, dst, w, n, horizon):  # noqa: ANN001
    """Runs (edge, start, first word, words) of a schedule within `horizon`; ok=False if the
    rescue failed (never expected for a unicast phase whose horizon is its lower bound)."""
    m = len(src)
    rem = w.copy()
    load = np.zeros(2 * n, np.int64)
    deg = np.zeros(2 * n + 1, np.int64)
    for e in range(m):
        load[src[e]] += w[e]
        load[n + dst[e]] += w[e]
        deg[src[e] + 1] += 1
        deg[n + dst[e] + 1] += 1
    ptr = np.cumsum(deg)
    fill = ptr[:-1].copy()
    adj = np.empty(2 * m, np.int64)
    for e in range(m):  # edges arrive pre-sorted: each port sees its partners in that order
        adj[fill[src[e]]] = e
        fill[src[e]] += 1
        adj[fill[n + dst[e]]] = e
        fill[n + dst[e]] += 1
    head = ptr[:-1].copy()
    match = np.full(2 * n, -1, np.int64)
    vis = np.zeros(2 * n, np.int64)
    par = np.full(2 * n, -1, np.int64)
    queue = np.empty(2 * n, np.int64)
    pending = np.empty(4 * n + 4, np.int64)  # ports that became free: try to match them
    npend = 0
    for p in range(n):
        pending[npend] = p
        npend += 1
    cap = 2 * m + 16
    r_edge = np.empty(cap, np.int64)
    r_start = np.empty(cap, np.int64)
    r_first = np.empty(cap, np.int64)
    r_len = np.empty(cap, np.int64)
    last_run = np.full(m, -1, np.int64)
    nr = 0
    stamp = 0
    t = 0
    ok = True
    while t < horizon:
        hrem = horizon - t
        busy = False
        for p in range(2 * n):
            if load[p] > 0:
                busy = True
                if match[p] == -1 and load[p] == hrem:
                    stamp += 1
                    got = _augment(p, hrem, n, src, dst, rem, load, match, ptr, adj, vis, stamp, par, queue)
                    if got == -2:
                        ok = False
                    # a released port (got >= 0) is not tight: it stays idle until a partner
                    # frees up or it turns tight; refilling it at once only cuts more stages
        if not busy or not ok:
            break
        for i in range(npend):  # greedy fill: first live transfer to a free partner
            x = pending[i]
            if match[x] != -1 or load[x] == 0:
                continue
            while head[x] < ptr[x + 1] and rem[adj[head[x]]] == 0:
                head[x] += 1
            for k in range(head[x], ptr[x + 1]):
                e = adj[k]
                if rem[e] == 0:
                    continue
                y = _other(e, x, src, dst, n)
                if match[y] == -1:
                    match[x] = e
                    match[y] = e
                    break
        npend = 0
        delta = hrem
        for p in range(2 * n):
            if match[p] == -1:
                if load[p] > 0 and hrem - load[p] < delta:
                    delta = hrem - load[p]
            elif p < n and rem[match[p]] < delta:
                delta = rem[match[p]]
        if delta <= 0:
            ok = False
            break
        for s in range(n):
            e = match[s]
            if e == -1:
                continue
            j = last_run[e]
            if j >= 0 and r_start[j] + r_len[j] == t:
                r_len[j] += delta
            else:
                if nr == cap:
                    cap *= 2
                    r_edge = np.concatenate((r_edge, np.empty(cap - nr, np.int64)))
                    r_start = np.concatenate((r_start, np.empty(cap - nr, np.int64)))
                    r_first = np.concatenate((r_first, np.empty(cap - nr, np.int64)))
                    r_len = np.concatenate((r_len, np.empty(cap - nr, np.int64)))
                r_edge[nr] = e
                r_start[nr] = t
                r_first[nr] = w[e] - rem[e]
                r_len[nr] = delta
                last_run[e] = nr
                nr += 1
            rem[e] -= delta
            load[s] -= delta
            load[n + dst[e]] -= delta
            if rem[e] == 0:
                match[s] = -1
                match[n + dst[e]] = -1
                if npend + 2 > len(pending):
                    pending = np.concatenate((pending, np.empty(len(pending), np.int64)))
                pending[npend] = s
                pending[npend + 1] = n + dst[e]
                npend += 2
        t += delta
    for e in range(m):
        if rem[e] != 0:
            ok = False
    return ok, r_edge[:nr], r_start[:nr], r_first[:nr], r_len[:nr]


def _pieces(mem: np.ndarray, edge, start, first, length) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """Cut each run at row boundaries: a partial head row, whole rows, a partial tail row."""
    wr = mem[edge, WORDS]
    a, b = first, first + length
    r0, c0, r1, c1 = a // wr, a % wr, b // wr, b % wr
    rows_out, starts_out = [], []

    def emit(sel: np.ndarray, row: np.ndarray, col: np.ndarray, nrows: np.ndarray, nwords: np.ndarray, at: np.ndarray):
        m = mem[edge[sel]].copy()
        m[:, S_OFF] += row * m[:, S_STR] + col * 4
        m[:, D_OFF] += row * m[:, D_STR] + col * 4
        m[:, ROWS], m[:, WORDS] = nrows, nwords
        rows_out.append(m)
        starts_out.append(at)

    one = r0 == r1  # inside a single row
    s = np.flatnonzero(one)
    emit(s, r0[s], c0[s], np.ones(len(s), np.int64), (c1 - c0)[s], start[s])
    multi = ~one
    s = np.flatnonzero(multi & (c0 > 0))
    emit(s, r0[s], c0[s], np.ones(len(s), np.int64), (wr - c0)[s], start[s])
    full0 = r0 + (c0 > 0)
    s = np.flatnonzero(multi & (r1 > full0))
    head = np.where(c0 > 0, wr - c0, 0)
    emit(s, full0[s], np.zeros(len(s), np.int64), (r1 - full0)[s], wr[s], (start + head)[s])
    s = np.flatnonzero(multi & (c1 > 0))
    emit(s, r1[s], np.zeros(len(s), np.int64), np.ones(len(s), np.int64), c1[s], (start + length - c1)[s])
    return np.concatenate(rows_out), np.concatenate(starts_out)


@njit(cache=True)
def arith_runs(same: np.ndarray, step: np.ndarray, min_step: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy left-to-right maximal runs of rows whose key equals the previous row's (`same[j]`)
    and whose value advances by a constant step of at least `min_step` (`step[j]`: row j's value
    less row j-1's): (first row, count, step) per run, a lone row's step `min_step`."""
    n = len(same)
    first = np.empty(n, np.int64)
    count = np.empty(n, np.int64)
    steps = np.empty(n, np.int64)
    k = 0
    i = 0
    while i < n:
        j = i + 1
        st = min_step
        if j < n and same[j] and step[j] >= min_step:
            st = step[j]
            while j + 1 < n and same[j + 1] and step[j + 1] == st:
                j += 1
            j += 1
        first[k] = i
        count[k] = j - i
        steps[k] = st
        k += 1
        i = j
    return first[:k], count[:k], steps[:k]


def fold(rows: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fold single-member rows that differ only by a constant tile step into families."""
    if not len(rows):
        return rows, starts
    shift = rows[:, D_TILE] - rows[:, S_TILE]
    key = (
        rows[:, S_OFF],
        rows[:, D_OFF],
        rows[:, ROWS],
        rows[:, WORDS],
        rows[:, S_STR],
        rows[:, D_STR],
        rows[:, MC],
        rows[:, MCS],
        starts,
        shift,
    )
    order = np.lexsort((rows[:, S_TILE], *key))
    r, st = rows[order], starts[order]
    k = np.stack([c[order] for c in key], axis=1)
    same = np.concatenate([[False], (k[1:] == k[:-1]).all(axis=1)])
    step = np.concatenate([[0], np.diff(r[:, S_TILE])])
    first, count, steps = arith_runs(same, step, 1)  # tile steps: positive
    out = r[first].copy()
    out[:, PC], out[:, PSS], out[:, PDS] = count, steps, steps
    return out, st[first]


def schedule_exact(t: np.ndarray, tiles: int, horizon: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(table, starts) of the phase within `horizon` cycles, or None if the rescue failed.

    Multicast members are sent once per destination, so `horizon` must be at least
    `exchange.schedulers.unicast_bound` (the lower bound itself for a unicast phase). Members are ordered longest
    first, then by cyclic shift: the probe found that order keeps structured phases at one run
    per transfer."""
    if not len(t):
        return None
    mem = unicast_members(t)
    words = mem[:, ROWS] * mem[:, WORDS]
    order = np.lexsort(((mem[:, D_TILE] - mem[:, S_TILE]) % tiles, -words))
    mem, words = mem[order], words[order]
    ok, edge, start, first, length = _schedule(
        mem[:, S_TILE].astype(np.int64), mem[:, D_TILE].astype(np.int64), words.astype(np.int64), tiles, horizon
    )
    if not ok:
        return None
    rows, starts = _pieces(mem, edge, start, first, length)
    return fold(rows, starts)


def receiver_groups(t: np.ndarray, tiles: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(members keeping their multicast, receiver group per member) when the phase's destination
    sets are disjoint or identical (each receiving tile belongs to one group, and every member
    sent to it goes to the whole group), else None. Such a multicast phase is a bipartite graph
    between senders and groups, whose max degree is the phase's lower bound."""
    mem = member_rows(t)
    key = np.stack([mem[:, D_TILE], mem[:, MC], mem[:, MCS]], axis=1)
    uniq, group = np.unique(key, axis=0, return_inverse=True)
    group = group.ravel()
    owner = np.full(tiles, -1, np.int64)
    for g, (d0, mc, step) in enumerate(uniq):
        tiles_g = d0 + np.arange(mc) * step
        if (owner[tiles_g] != -1).any():
            return None
        owner[tiles_g] = g
    return mem, group


def schedule_exact_grouped(t: np.ndarray, tiles: int, horizon: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(table, starts) of a phase whose multicast destination sets are disjoint or identical
    (see `receiver_groups`), within `horizon` (its lower bound suffices), multicast kept; None if
    the phase is not of that form or the rescue failed."""
    grouped = receiver_groups(t, tiles) if len(t) else None
    if grouped is None:
        return None
    mem, group = grouped
    words = mem[:, ROWS] * mem[:, WORDS]
    order = np.lexsort(((group - mem[:, S_TILE]) % tiles, -words))
    mem, group, words = mem[order], group[order], words[order]
    ok, edge, start, first, length = _schedule(
        mem[:, S_TILE].astype(np.int64), group.astype(np.int64), words.astype(np.int64), tiles, horizon
    )
    if not ok:
        return None
    rows, starts = _pieces(mem, edge, start, first, length)
    return fold(rows, starts)
