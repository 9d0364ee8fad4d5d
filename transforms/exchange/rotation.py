"""Rotation schedules of unicast phases made of complete bipartite blocks, at the endpoint bound.

A layout conversion that re-blocks a tensor often yields a phase whose tiles split into blocks:
every source of a block sends to every receiver of the block (serial scatters `par_src_step` 0,
`par_dst_step` 1, or gathers), the blocks share no tile, and a member's words depend on its
source only (or on its receiver only). Each such family must hold its one port for all its
members, so a list schedule of whole families staggers them and ends near (S + D - 1) * w
instead of the bound S * w; the exact preemptive schedule reaches the bound but cuts every family
into single members (refused by its row budget).

The rotation schedule: with words a_s per source, sources ordered by (a_s, tile) at prefix sums
O_s, receivers at positions q_d, and H = max(sum a_s, D * max a) (the block's own bound), member
(s, d) starts at (O_s + max(a) * q_d) mod H. Every receiver then sees all sources back to back
(rotated), every source its receivers one step of max(a) apart; a member never straddles the
wrap when the last D - 1 sources carry max(a) or, when the senders bound the block, the sources
are placed max(a) apart instead (checked, else no schedule). Along a family the
start is arithmetic in the member index up to one wrap, so each logical family becomes at most
two families (a few more only when its tiles are not in block order): the table stays about the
size of the logical one, whatever the tile count. Words by receiver: the same with the roles of
the two ports swapped.
"""

from __future__ import annotations

import numpy as np

from ipu.abi.exchange_rules import ScheduleError, check_ports
from ipu.abi.transfers import (
    D_OFF,
    D_TILE,
    MC,
    PC,
    PDO,
    PDS,
    PSO,
    PSS,
    PTS,
    ROWS,
    S_OFF,
    S_TILE,
    WORDS,
    expand_members,
    member_index,
    with_start,
)
from ipu.transforms.exchange.exact import arith_runs


def _blocks(src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """Block index per member when the members form tile-disjoint complete bipartite blocks with
    one member per (source, receiver) pair, else None. Tiles index dense tables (bincounts and
    masks over the tile range): no sorting of the members, which a phase has 750K of."""
    width = int(max(src.max(), dst.max())) + 1
    if _repeats(src * width + dst, width * width):  # a (source, receiver) pair carried twice
        return None
    # a source's block is named by its least receiver: receiver sets of blocks are disjoint
    lead = np.full(width, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(lead, src, dst)
    named = np.zeros(width, bool)
    named[lead[src]] = True
    rank = np.cumsum(named) - 1  # blocks numbered in the order of their names
    block = rank[lead[src]]
    nb = int(named.sum())
    # every receiver in one block only; sources are in one block by construction
    pairs = np.zeros(width * nb, bool)
    pairs[dst * nb + block] = True
    rb = np.flatnonzero(pairs)
    rb_dst, rb_block = rb // nb, rb % nb
    if _repeats(rb_dst, width):
        return None
    src_block = np.full(width, -1, np.int64)
    src_block[src] = block
    n_src = np.bincount(src_block[src_block >= 0], minlength=nb)
    n_dst = np.bincount(rb_block, minlength=nb)
    if not np.array_equal(np.bincount(block, minlength=nb), n_src * n_dst):
        return None  # distinct pairs inside S x D, as many as S * D: the block is complete
    return block


def _repeats(keys: np.ndarray, size: int) -> bool:
    """Whether a value occurs twice in `keys` (non-negative, below `size`)."""
    seen = np.zeros(size, bool)
    seen[keys] = True
    return int(seen.sum()) != len(keys)


def _rotate(a_of: np.ndarray, q_of: np.ndarray, words: np.ndarray) -> tuple[np.ndarray, int] | None:
    """Starts of the members of one block whose words depend on their `a_of` tile only (`q_of`:
    the other end), and the block's horizon (its bound); None when a member would straddle the
    wrap. The a-side tiles sit at their prefix sums, or, when the other side's ports bound the
    block and leave room, max(a) apart (every start a multiple of max(a), so none straddles)."""
    a_tiles, first = np.unique(a_of, return_index=True)
    a = words[first]
    order = np.lexsort((a_tiles, a))
    q_tiles, q_pos = np.unique(q_of, return_inverse=True)
    step = int(a.max())
    horizon = max(int(a.sum()), len(q_tiles) * step)
    rank = np.searchsorted(a_tiles, a_of)
    offsets = [np.empty(len(a), np.int64)]
    offsets[0][order] = np.cumsum(a[order]) - a[order]
    if len(a) * step <= horizon:
        offsets.append(np.empty(len(a), np.int64))
        offsets[1][order] = step * np.arange(len(a))
    for prefix in offsets:
        starts = (prefix[rank] + step * q_pos.ravel()) % horizon
        if not (starts + words > horizon).any():
            return starts, horizon
    return None


def refold(t: np.ndarray, fam: np.ndarray, p: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(table, starts) of the members (family `fam`, index `p`, in family-major order) of move
    table `t` started at `starts`: each family cut into maximal runs of arithmetic starts."""
    same = np.concatenate(([False], fam[1:] == fam[:-1]))
    step = np.concatenate(([0], np.diff(starts)))
    first, count, steps = arith_runs(same, step, 0)  # time steps: non-negative
    f, p0 = fam[first], p[first]
    out = t[f].copy()
    out[:, S_TILE] += p0 * t[f, PSS]
    out[:, D_TILE] += p0 * t[f, PDS]
    out[:, S_OFF] += p0 * t[f, PSO]
    out[:, D_OFF] += p0 * t[f, PDO]
    out[:, PC], out[:, PTS] = count, steps
    return out, starts[first]


def schedule_rotation(t: np.ndarray, tiles: int, lower_bound: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(table, starts) of the rotation schedule of unicast move table `t` ending at
    `lower_bound`, or None when the phase is not made of such blocks (module docstring)."""
    if not len(t) or (t[:, MC] != 1).any():
        return None
    fam, p, _ = member_index(t[:, PC], t[:, MC])
    src = t[fam, S_TILE] + p * t[fam, PSS]
    dst = t[fam, D_TILE] + p * t[fam, PDS]
    words = (t[:, ROWS] * t[:, WORDS])[fam]
    block = _blocks(src, dst)
    if block is None:
        return None
    starts = np.empty(len(fam), np.int64)
    by_block = np.argsort(block, kind="stable")
    bounds = np.searchsorted(block[by_block], np.arange(block.max() + 2))
    for b in range(len(bounds) - 1):
        sel = by_block[bounds[b] : bounds[b + 1]]
        s, d, w = src[sel], dst[sel], words[sel]
        got = None
        for a_side, q_side in ((s, d), (d, s)):  # words by source, else by receiver
            tile_w = np.zeros(tiles, np.int64)
            tile_w[a_side] = w
            if np.array_equal(tile_w[a_side], w):
                got = _rotate(a_side, q_side, w)
                if got is not None:
                    break
        if got is None or got[1] > lower_bound:
            return None
        starts[sel] = got[0]
    table, st = refold(t, fam, p, starts)
    try:  # the construction obeys the port rules; checked so a flaw costs a fallback, not a phase
        check_ports(expand_members(with_start(table, st)))
    except ScheduleError:
        return None
    return table, st
