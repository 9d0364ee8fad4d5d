"""The rows of a link transfer: which bytes of which source tile go to which destination tile.

A value crossing chips leaves the source stage's output binding and lands in the destination
stage's input binding; both say, slice by slice, where each byte of the logical tensor lives
(`abi/tables.SLICE`). `link_rows` matches them byte by byte and merges runs into rows
(`LINK_ROW`: source tile and offset, destination tile and offset, bytes): the source reads its
first replica, every replica of the destination is written. `link_schedule` gives each row its
start cycle: rows stream whole through their tiles' ports, several at once sharing the link
direction (its lanes at the link rate); its horizon against the phase's lower
bound (the busiest tile port, the busiest link direction) is what `ipu-translate --inspect`
prints and the system emulator charges.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ipu.abi.isa import DTYPE_SIZE
from ipu.abi.package import Binding, slice_bytes
from ipu.abi.tables import LINK, SLICE

LINK_ROW = LINK.columns[1:]
"""The columns of a link transfer's rows as a package stores them: `LINK`'s without `start` (the
schedule is derived from the rows, `link_schedule`)."""


def byte_map(b: Binding, base: int, replicas: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(logical byte, tile, tile offset) of every byte of binding `b`: the first replica of each
    slice, or with `replicas` every replica."""
    logical, tiles, offs = [], [], []
    for s in b.slices.reshape(-1, len(SLICE.columns)):
        members, lg, of = slice_bytes(s, DTYPE_SIZE[b.dtype], base)
        for t in members[: None if replicas else 1].tolist():
            logical.append(lg.reshape(-1))
            offs.append(of.reshape(-1))
            tiles.append(np.full(lg.size, t, np.int64))
    if not logical:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(logical), np.concatenate(tiles), np.concatenate(offs)


def link_rows(src: Binding, dst: Binding, base: int) -> np.ndarray:
    """The rows [k, len(LINK_ROW)] moving `src`'s bytes into every replica of `dst` (the same
    logical tensor: shapes and dtypes match). A link writes the device's bytes as they are: a
    binding the host rearranges (`Binding.perm`, `.pads`) cannot take part."""
    if src.perm or src.pads or dst.perm or dst.pads:
        raise ValueError(f"link {src.name} -> {dst.name}: a binding rearranged by the host has no link form")
    size = int(np.prod(src.shape, dtype=np.int64)) * DTYPE_SIZE[src.dtype]
    s_log, s_tile, s_off = byte_map(src, base, replicas=False)
    where_tile = np.full(size, -1, np.int64)
    where_off = np.zeros(size, np.int64)
    where_tile[s_log], where_off[s_log] = s_tile, s_off
    d_log, d_tile, d_off = byte_map(dst, base, replicas=True)
    if (where_tile[d_log] < 0).any():
        raise ValueError(f"link {src.name} -> {dst.name}: a destination byte no source tile holds")
    st, so = where_tile[d_log], where_off[d_log]
    order = np.lexsort((d_off, d_tile))
    st, so, dt, do = st[order], so[order], d_tile[order], d_off[order]
    if not st.size:
        return np.zeros((0, len(LINK_ROW)), np.int64)
    cont = (st[1:] == st[:-1]) & (dt[1:] == dt[:-1]) & (so[1:] == so[:-1] + 1) & (do[1:] == do[:-1] + 1)
    starts = np.flatnonzero(np.concatenate(([True], ~cont)))
    ends = np.concatenate((starts[1:], [st.size]))
    return np.stack([st[starts], so[starts], dt[starts], do[starts], ends - starts], axis=1).astype(np.int64)


def _lookup(tiles: np.ndarray, offs: np.ndarray, logical: np.ndarray, qt: np.ndarray, qo: np.ndarray) -> np.ndarray:
    """The logical byte held at each queried (tile, offset) of a byte map, -1 where none is."""
    span = int(max(offs.max(initial=0), qo.max(initial=0))) + 1
    keys = tiles * span + offs
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    q = qt * span + qo
    pos = np.minimum(np.searchsorted(sk, q), max(len(sk) - 1, 0))
    hit = (sk[pos] == q) if len(sk) else np.zeros(len(q), bool)
    return np.where(hit, logical[order][pos] if len(sk) else -1, -1)


def check_link_rows(rows: np.ndarray, src: Binding, dst: Binding, base: int) -> str:
    """Why `rows` do not move `src` into `dst` exactly (empty when they do): every byte a row
    moves is a byte of each side, lands where the same logical byte belongs, and no destination
    byte is written twice (checked byte by byte, in row order: the first fault is named)."""
    if rows.ndim != 2 or rows.shape[1] != len(LINK_ROW) or (rows[:, 4] <= 0).any():
        return "rows must be [k, 5] with positive byte counts"
    d_log, d_tile, d_off = byte_map(dst, base, replicas=True)
    n = int(rows[:, 4].sum())
    if n != d_log.size:
        return f"rows move {n} bytes; the destination holds {d_log.size}"
    nb = rows[:, 4]
    within = np.arange(n) - np.repeat(np.cumsum(nb) - nb, nb)
    st, so = np.repeat(rows[:, 0], nb), np.repeat(rows[:, 1], nb) + within
    dt, do = np.repeat(rows[:, 2], nb), np.repeat(rows[:, 3], nb) + within
    s_log, s_tile, s_off = byte_map(src, base, replicas=False)
    a = _lookup(s_tile, s_off, s_log, st, so)
    b = _lookup(d_tile, d_off, d_log, dt, do)
    span = int(max(do.max(initial=0), d_off.max(initial=0))) + 1
    first = np.unique(dt * span + do, return_index=True)[1]
    again = np.ones(n, bool)
    again[first] = False  # every occurrence of a destination byte after its first
    bad = np.flatnonzero((a < 0) | (b < 0) | (a != b) | again)
    if not len(bad):
        return ""
    i = int(bad[0])
    if a[i] < 0:
        return f"row from tile {st[i]} offset {so[i]}: not a byte of {src.name}"
    if b[i] < 0:
        return f"row to tile {dt[i]} offset {do[i]}: not a byte of {dst.name}"
    if a[i] != b[i]:
        return f"row to tile {dt[i]} offset {do[i]}: moves logical byte {a[i]} where {b[i]} belongs"
    return f"tile {dt[i]} offset {do[i]} written twice"


CLOSE_ENOUGH = 1.01
"""`link_schedule` stops trying once a horizon is within this factor of the lower bound."""


def link_schedule(
    rows: np.ndarray, port_bytes_per_cycle: int, link_bytes_per_cycle: int
) -> tuple[np.ndarray, int, int]:
    """(start cycle of each row, horizon, lower bound) of the rows as one link transfer. The link
    direction carries `link_bytes_per_cycle` (lanes included) shared by the rows in flight: P at
    once, each streaming whole at 1/P of it (P at least the link's rate over the port's, so no
    row outruns its port). Rows go round-robin over the source tiles (in round k, source number i
    sends its (k + i)-th row, so one round's rows spread over the destinations, as on-chip rotation
    does), each taking the first free place once its source and destination ports are free. Few
    rows fill the link better slower and side by side, many rows faster in turn: P is tried from
    the least up (doublings, and the counts that take the rows in 1-8 equal rounds) until one
    comes within `CLOSE_ENOUGH` of the bound, the earliest horizon kept. The lower bound is the
    busiest port (sending or receiving) or the link itself."""
    if not len(rows):
        return np.zeros(0, np.int64), 0, 0
    nb = rows[:, 4]
    send = np.bincount(rows[:, 0], weights=nb)
    recv = np.bincount(rows[:, 2], weights=nb)
    total = int(nb.sum())
    port_bound = max(math.ceil(send.max() / port_bytes_per_cycle), math.ceil(recv.max() / port_bytes_per_cycle))
    bound = max(port_bound, math.ceil(total / link_bytes_per_cycle))
    by_src = np.lexsort((np.arange(len(rows)), rows[:, 0]))
    rank = np.zeros(len(rows), np.int64)
    sorted_src = rows[by_src, 0]
    first = np.searchsorted(sorted_src, sorted_src)
    count = np.bincount(rows[:, 0])
    which = np.searchsorted(np.unique(sorted_src), sorted_src)
    rank[by_src] = (np.arange(len(rows)) - first + which) % count[sorted_src]
    order = np.lexsort((rows[:, 0], rank)).tolist()
    least, n = max(1, math.ceil(link_bytes_per_cycle / port_bytes_per_cycle)), len(rows)
    tries = [least] + sorted(
        {least << k for k in range(1, 12) if least << k < n} | {max(least, -(-n // r)) for r in range(1, 9)} - {least}
    )
    best: tuple[int, np.ndarray] | None = None
    for places in tries:
        horizon, starts = _placed(rows, order, places, link_bytes_per_cycle / places)
        if best is None or horizon < best[0]:
            best = (horizon, starts)
        if best[0] <= bound * CLOSE_ENOUGH:
            break
    assert best is not None
    return best[1], max(best[0], bound), bound


def _placed(rows: np.ndarray, order: list[int], places: int, rate: float) -> tuple[int, np.ndarray]:
    """(horizon, starts) of `rows` taken in `order`, `places` at once on the link at `rate` each."""
    link = [0.0] * places  # when each place on the link is next free (a heap)
    src_free: dict[int, float] = {}
    dst_free: dict[int, float] = {}
    starts = np.zeros(len(rows), np.int64)
    end = 0.0
    for i in order:
        s, d = int(rows[i, 0]), int(rows[i, 2])
        t = math.ceil(max(link[0], src_free.get(s, 0.0), dst_free.get(d, 0.0)) - 1e-9)
        e = t + int(rows[i, 4]) / rate
        starts[i] = t
        heapq.heapreplace(link, e)
        src_free[s] = dst_free[d] = e
        end = max(end, e)
    return math.ceil(end - 1e-9), starts


__all__ = ["LINK_ROW", "byte_map", "check_link_rows", "link_rows", "link_schedule"]
