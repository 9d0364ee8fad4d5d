"""An independent checker for exchange-phase schedules (shared with the emulator): the rules only.

A phase table (`ipu.abi.tables.TRANSFER`: `start`, then the move columns) is expanded into its
members and rows by `ipu.abi.transfers`; this module says which expansions are valid: counts
positive, tiles in range, one word out and one in per tile per cycle, no byte written twice, and
the same words moved as the logical move.
"""

from __future__ import annotations

import numpy as np

from ipu.abi.arrays import lex_order
from ipu.abi.tables import MOVE, TRANSFER
from ipu.abi.transfers import MC, PC, ROWS, WORDS, Members, Rows, expand_members, expand_rows, split_start
from ipu.abi.transfers import with_start as with_start_column

_DIAGNOSE_WORDS = 1 << 22  # bound on words expanded to explain a difference between tables


class ScheduleError(Exception):
    """A phase table that breaks a port, write, range or data rule; the message names it."""


def _table(t: np.ndarray, phase: bool, what: str) -> np.ndarray:
    """`t` as a phase (TRANSFER) or move (MOVE) table, ScheduleError when its shape is not that."""
    try:
        return (TRANSFER if phase else MOVE).rows(t, what)
    except ValueError as e:
        raise ScheduleError(str(e)) from None


def _name(m: Members, i: int) -> str:
    """`transfer F` (family row), with the member when the family has several."""
    s = f"transfer {m.fam[i]}"
    if m.p[i]:
        s += f" member {m.p[i]}"
    return s


def check_counts(table17: np.ndarray, phase: int = 0, what: str = "transfer") -> None:
    """Rows, row words, par and multicast counts must be positive (expansion needs it); `what`
    names a row in the message."""
    _, t = split_start(_table(table17, True, "phase"))
    bad = np.flatnonzero((t[:, [ROWS, WORDS, PC, MC]] <= 0).any(axis=1))
    if bad.size:
        raise ScheduleError(f"phase {phase}: {what} {bad[0]} has non-positive rows/words/counts")


def check_tiles(m: Members, tiles: int, phase: int = 0) -> None:
    """Every member's source and destination tile lies in [0, tiles)."""
    for what, tl in (("source", m.src), ("destination", m.dst)):
        bad = np.flatnonzero((tl < 0) | (tl >= tiles))
        if bad.size:
            j = int(bad[0])
            raise ScheduleError(f"phase {phase}: {_name(m, j)} {what} tile {tl[j]} out of range [0, {tiles})")


def _check_port(m: Members, phase: int, port: str, sel: np.ndarray | None) -> None:
    """Sorted by (tile, start), durations positive: any overlap shows between neighbours."""
    idx = np.arange(len(m)) if sel is None else np.flatnonzero(sel)
    tile = (m.src if port == "send" else m.dst)[idx]
    o = _by_place(tile, m.start[idx])  # by (tile, start)
    i, t = idx[o], tile[o]
    bad = np.flatnonzero((t[1:] == t[:-1]) & (m.start[i[1:]] < m.end[i[:-1]]))
    if bad.size:
        j = int(bad[0])
        a, b = int(i[j]), int(i[j + 1])
        raise ScheduleError(
            f"phase {phase}: {port} port of tile {t[j]} used twice: {_name(m, a)} cycles "
            f"[{m.start[a]}, {m.end[a]}) overlaps {_name(m, b)} cycles [{m.start[b]}, {m.end[b]})"
        )


def check_ports(m: Members, phase: int = 0) -> None:
    """At most one word out and one word in per tile per cycle (a multicast sends once)."""
    _check_port(m, phase, "send", m.sender)
    _check_port(m, phase, "receive", None)


def _by_place(tile: np.ndarray, addr: np.ndarray) -> np.ndarray:
    """An order sorting by (tile, addr): one packed int64 key when the ranges allow, else lexsort.
    Rows come nearly in that order (a member's rows run up its addresses), which NumPy's stable
    sort (timsort) exploits: 5-7x its quicksort on transformer_block's 754K-row phase."""
    if not len(tile):
        return np.zeros(0, np.int64)
    t0, a0 = int(tile.min()), int(addr.min())
    span = int(addr.max()) - a0 + 1
    if (int(tile.max()) - t0 + 1) * span < 1 << 62:
        return np.argsort((tile - t0) * span + (addr - a0), kind="stable")
    return np.lexsort((addr, tile))


def check_writes(r: Rows, phase: int = 0, order: np.ndarray | None = None) -> None:
    """No destination byte is written twice in one phase (rows sorted by address; neighbours
    overlap). `order`: the rows' order by (dst, dst_addr) when already known."""
    o = _by_place(r.dst, r.dst_addr) if order is None else order
    dt, da, dn, df = r.dst[o], r.dst_addr[o], 4 * r.words[o], r.fam[o]
    bad = np.flatnonzero((dt[1:] == dt[:-1]) & (da[1:] < da[:-1] + dn[:-1]))
    if bad.size:
        j = int(bad[0])
        lo, hi = da[j + 1], min(da[j] + dn[j], da[j + 1] + dn[j + 1])
        raise ScheduleError(
            f"phase {phase}: tile {dt[j]}: transfers {df[j]} and {df[j + 1]} both write bytes [{lo:#x}, {hi:#x})"
        )


def _merge(r: Rows, order: np.ndarray | None = None) -> np.ndarray:
    """Rows merged into maximal segments contiguous in source and destination, sorted by destination
    (then source). `order`: the rows' order by (dst, dst_addr) when already known."""
    o = _by_place(r.dst, r.dst_addr) if order is None else order
    dt, da = r.dst[o], r.dst_addr[o]
    if ((dt[1:] == dt[:-1]) & (da[1:] == da[:-1])).any():  # double writes: a canonical order of the ties
        o = np.lexsort((r.words, r.src_addr, r.src, r.dst_addr, r.dst))
        dt, da = r.dst[o], r.dst_addr[o]
    st, sa, w = r.src[o], r.src_addr[o], r.words[o]
    if not len(w):
        return np.zeros((0, 5), np.int64)
    nb = 4 * w
    cont = (dt[1:] == dt[:-1]) & (st[1:] == st[:-1]) & (da[1:] == da[:-1] + nb[:-1]) & (sa[1:] == sa[:-1] + nb[:-1])
    head = np.flatnonzero(np.r_[True, ~cont])
    seg = np.stack([st[head], sa[head], dt[head], da[head], np.add.reduceat(w, head)], axis=1)
    if ((seg[1:, 2] == seg[:-1, 2]) & (seg[1:, 3] == seg[:-1, 3])).any():
        seg = seg[np.lexsort((seg[:, 4], seg[:, 1], seg[:, 0], seg[:, 3], seg[:, 2]))]
    return seg


def word_segments(table: np.ndarray, with_start: bool) -> np.ndarray:
    """Canonical form of which source words go to which destination words: int64 [n, 5] rows of
    (src_tile, src_byte, dst_tile, dst_byte, words), maximal runs contiguous on both sides, sorted
    by destination then source. Independent of how a transfer is cut into rows, runs or families.
    `with_start`: the table has the 17 phase columns, else the 16 move columns."""
    t = _table(table, with_start, "phase" if with_start else "move")
    if not with_start:
        t = with_start_column(t)
    check_counts(t)
    return _merge(expand_rows(expand_members(t), coalesce=True))


def _row_hash(a: np.ndarray) -> np.ndarray:
    """A 64-bit mix of each int64 row (to group equal rows with one sort key)."""
    h = np.full(len(a), 0x243F6A8885A308D3, np.uint64)
    for k in range(a.shape[1]):
        h ^= a[:, k].astype(np.uint64)
        h *= np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    return h


def _multiset_diff(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a not matched in b and rows of b not matched in a (with multiplicity), each sorted by
    destination. Rows are matched by a 64-bit hash: for diagnosis only (equality is decided exactly)."""
    allr = np.concatenate([a, b])
    h = _row_hash(allr)
    o = np.argsort(h)
    hs = h[o]
    new = np.r_[True, hs[1:] != hs[:-1]] if len(o) else np.zeros(0, bool)
    net = np.bincount(np.cumsum(new) - 1, weights=np.where(o < len(a), 1, -1)).astype(np.int64)
    u = allr[o[new]]
    only_a, only_b = np.repeat(u[net > 0], net[net > 0], axis=0), np.repeat(u[net < 0], -net[net < 0], axis=0)
    return _dst_sorted(only_a), _dst_sorted(only_b)


def _dst_sorted(x: np.ndarray) -> np.ndarray:
    """Segment (or word) rows sorted by destination, then source (then words)."""
    return x[np.lexsort((*x[:, 4:].T, x[:, 1], x[:, 0], x[:, 3], x[:, 2]))]


def _words(seg: np.ndarray) -> np.ndarray:
    """Segments as single-word rows (src_tile, src_byte, dst_tile, dst_byte)."""
    w = seg[:, 4]
    k = np.repeat(np.arange(len(seg)), w)
    j = 4 * (np.arange(len(k)) - np.repeat(np.cumsum(w) - w, w))
    s = seg[k]
    return np.stack([s[:, 0], s[:, 1] + j, s[:, 2], s[:, 3] + j], axis=1)


def _bounded(seg: np.ndarray) -> np.ndarray:
    """Leading segments (destination order) holding at most _DIAGNOSE_WORDS words."""
    return seg[: max(1, int(np.searchsorted(np.cumsum(seg[:, 4]), _DIAGNOSE_WORDS, side="right")))]


def _explain(logical: np.ndarray, sched: np.ndarray, phase: int) -> str | None:
    """The first (in destination order) word the two canonical forms disagree on, in words; None
    when none is found (the same words cut differently, which needs a double write)."""
    miss_seg, extra_seg = _multiset_diff(logical, sched)
    miss, extra = _multiset_diff(_words(_bounded(miss_seg)), _words(_bounded(extra_seg)))
    probs = np.concatenate([extra, miss])
    if not len(probs):
        return None
    is_extra = np.r_[np.ones(len(extra), bool), np.zeros(len(miss), bool)]
    j = int(np.lexsort((~is_extra, probs[:, 3], probs[:, 2]))[0])
    st, sb, dt, db = (int(v) for v in probs[j])

    def w(t: int, b: int) -> str:
        return f"tile {t} {b:#x}"

    head = f"phase {phase}: schedule does not move the logical words:"
    if is_extra[j]:
        lw = logical[(logical[:, 2] == dt) & (logical[:, 3] <= db) & (db < logical[:, 3] + 4 * logical[:, 4])]
        if len(lw):
            ls, lb = int(lw[0, 0]), int(lw[0, 1] + db - lw[0, 3])
            if (ls, lb) == (st, sb):
                return f"{head} word {w(st, sb)} -> {w(dt, db)} is moved more than once"
            return f"{head} {w(dt, db)} receives word {w(st, sb)} instead of {w(ls, lb)}"
        alt = miss[(miss[:, 0] == st) & (miss[:, 1] == sb)]
        if len(alt):
            return f"{head} word {w(st, sb)} goes to {w(dt, db)} instead of {w(int(alt[0, 2]), int(alt[0, 3]))}"
        return f"{head} unexpected word {w(st, sb)} -> {w(dt, db)}"
    alt = extra[(extra[:, 0] == st) & (extra[:, 1] == sb)]
    if len(alt):
        return f"{head} word {w(st, sb)} goes to {w(int(alt[0, 2]), int(alt[0, 3]))} instead of {w(dt, db)}"
    return f"{head} word {w(st, sb)} -> {w(dt, db)} is missing"


def _check_pair_words(lm: Members, sm: Members, tiles: int, phase: int) -> None:
    """Words from each source tile to each destination tile agree between the two tables."""
    lw = np.bincount(lm.src * tiles + lm.dst, weights=lm.rows * lm.row_words, minlength=tiles * tiles)
    sw = np.bincount(sm.src * tiles + sm.dst, weights=sm.rows * sm.row_words, minlength=tiles * tiles)
    bad = np.flatnonzero(lw != sw)
    if bad.size:
        j = int(bad[0])
        raise ScheduleError(
            f"phase {phase}: tile {j // tiles} sends {int(sw[j])} words to tile {j % tiles}, "
            f"the logical move {int(lw[j])}"
        )


def _same_members(a: Members, b: Members) -> bool:
    """Whether two expansions hold the same members (tiles, addresses, strides, shape), in any order."""
    if len(a) != len(b):
        return False
    cols = ("src", "src_addr", "src_stride", "dst", "dst_addr", "dst_stride", "rows", "row_words")
    for c in cols:  # cheap refusals first: the columns' sums and ranges
        u, v = getattr(a, c), getattr(b, c)
        if len(u) and (u.sum() != v.sum() or u.min() != v.min() or u.max() != v.max()):
            return False
    ka = [np.asarray(getattr(a, c), np.int64) for c in cols]
    kb = [np.asarray(getattr(b, c), np.int64) for c in cols]
    oa, ob = lex_order(*ka), lex_order(*kb)
    return all(np.array_equal(x[oa], y[ob]) for x, y in zip(ka, kb, strict=True))


def validate_schedule(
    logical16: np.ndarray,
    scheduled17: np.ndarray,
    tiles: int,
    phase: int = 0,
    trust_logical: bool = False,
    max_rows: int | None = None,
) -> bool:
    """Raise ScheduleError unless `scheduled17` (start + move columns) moves exactly the words of
    `logical16` (each once to every destination, however cut into rows, runs and families), with
    tiles in [0, tiles), starts >= 0, one word out and one in per tile per cycle, no byte written twice.

    `trust_logical`: the logical move is known not to write a byte twice (the compiler's own), so
    a schedule that keeps its members unchanged (only regrouped into families and timed) needs
    only its timing checked. `max_rows`: when the word comparison would expand more rows than
    this, compare words sent per (source, destination) tile pair instead (a summary check).
    Returns whether every word was compared."""
    lt = _table(logical16, False, "logical")
    st = _table(scheduled17, True, "scheduled")
    lt17 = with_start_column(lt)
    check_counts(lt17, phase, "logical transfer")
    check_counts(st, phase)
    sm = expand_members(st)
    neg = np.flatnonzero(sm.start < 0)
    if neg.size:
        j = int(neg[0])
        raise ScheduleError(f"phase {phase}: {_name(sm, j)} has negative start {sm.start[j]}")
    check_tiles(sm, tiles, phase)
    if trust_logical and st.shape == lt17.shape and np.array_equal(split_start(st)[1], lt):
        # the schedule keeps the logical families as they are and only sets their starts: the same
        # words move by construction, so the timing rules are what is left to check
        check_ports(sm, phase)
        return True
    lm = expand_members(lt17)  # only past the fast path: that one never reads the logical members
    if trust_logical and _same_members(sm, lm):
        check_ports(sm, phase)
        return True
    if max_rows is not None and int(sm.rows.sum()) > max_rows:
        _check_pair_words(lm, sm, tiles, phase)
        check_ports(sm, phase)
        return False
    rows = expand_rows(sm, coalesce=True)
    order = _by_place(rows.dst, rows.dst_addr)
    seg_l, seg_s = _merge(expand_rows(lm, coalesce=True)), _merge(rows, order)
    if seg_l.shape != seg_s.shape or not np.array_equal(seg_l, seg_s):
        why = _explain(seg_l, seg_s, phase)
        if why is None:  # same words, cut differently around a double write: the write rule names it
            check_writes(rows, phase, order)
            why = f"phase {phase}: schedule does not move the logical words"
        raise ScheduleError(why)
    check_ports(sm, phase)
    check_writes(rows, phase, order)
    return True
