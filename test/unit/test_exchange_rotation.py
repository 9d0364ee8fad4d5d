"""Rotation schedules: phases of serial scatters (and gathers) between tile blocks, the shape of the
transformer block's re-blocking phases, end at their endpoint bound in a table about the size of
the logical one, where list schedules stagger whole families ~75% past the bound."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu.abi.exchange_rules import validate_schedule
from ipu.abi.transfers import D_TILE, PC, PTS, S_TILE, expand_members, with_start
from ipu.target import load_target
from ipu.transforms.exchange.rotation import _blocks, schedule_rotation
from ipu.transforms.exchange.schedulers import endpoint_lower_bound, schedule_greedy, schedule_phase

TILES = load_target("sim64").tiles


def _row(src: int, dst: int, words: int, n: int, pss: int, pds: int, s_off: int, d_off: int, pso: int, pdo: int):
    """A serial family of `n` members of `words` words (one row each), source and destination
    tiles stepping by `pss` and `pds`."""
    return [src, s_off, 4 * words, dst, d_off, 4 * words, 1, words, n, pss, pds, 1, 1, pso, pdo, words]


def scatter_blocks(blocks: int, sources: int, receivers: int, words: int, short: int) -> np.ndarray:
    """Each block: `sources` tiles each scatter `words` words (the first of them `short`) to each
    of `receivers` consecutive tiles; a receiver stores what it gets source after source."""
    rows = []
    for b in range(blocks):
        s0, d0, at = b * (sources + 2), b * receivers, 0
        for j in range(sources):
            w = short if j == 0 else words
            rows.append(_row(s0 + j, d0, w, receivers, 0, 1, 0, at, 4 * w, 0))
            at += 4 * w
    return np.array(rows, np.int64)


def gather_blocks(blocks: int, receivers: int, sources: int, words: int, short: int) -> np.ndarray:
    """The transpose: each of `receivers` tiles gathers `words` words (the last of them `short`)
    from each of `sources` consecutive tiles, which read them one after another."""
    rows = []
    for b in range(blocks):
        d0, s0, at = b * (receivers + 2), b * sources, 0
        for j in range(receivers):
            w = short if j == receivers - 1 else words
            rows.append(_row(s0, d0 + j, w, sources, 1, 0, at, 0, 0, 4 * w))
            at += 4 * w
    return np.array(rows, np.int64)


def mixed_blocks(blocks: int, sources: int, receivers: int, words: int, short: int) -> np.ndarray:
    """Words by receiver again, written as scatters to all but the last receiver of a block plus
    one gather into it (what the importer's re-blocking emits for a ragged last column)."""
    rows = []
    for b in range(blocks):
        s0, d0 = b * sources, b * (receivers + 2)
        for j in range(sources):
            rows.append(_row(s0 + j, d0, words, receivers - 1, 0, 1, 0, 4 * words * j, 4 * words, 0))
        rows.append(_row(s0, d0 + receivers - 1, short, sources, 1, 0, 4 * words * (receivers - 1), 0, 0, 4 * short))
    return np.array(rows, np.int64)


CASES = {
    "scatter": scatter_blocks(2, 20, 12, 6, 4),
    "scatter-uniform": scatter_blocks(3, 16, 16, 3, 3),
    "scatter-sender-bound": scatter_blocks(2, 10, 14, 5, 5),  # each source sends more than a receiver gets
    "gather": gather_blocks(2, 20, 12, 6, 4),
    "mixed": mixed_blocks(2, 12, 20, 6, 4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_block_scatters_end_at_the_bound_compactly(name: str) -> None:
    t = CASES[name]
    lb = endpoint_lower_bound(t, TILES)
    assert schedule_greedy(t, TILES).horizon > lb  # whole families staggered: the shape at issue
    table, s = schedule_phase(t, TILES)
    assert (s.scheduler, s.horizon, s.lower_bound) == ("rotation", lb, lb)
    sched = with_start(table, s.starts)
    validate_schedule(t, sched, TILES)  # every word, once, by the port rules (logical not trusted)
    assert int(expand_members(sched).end.max()) == lb
    assert len(table) <= 2 * len(t)  # at most one wrap per family: no row per member
    assert (table[:, PTS] >= 0).all()


def test_table_size_independent_of_block_size() -> None:
    """2x and 4x the receivers per block (as many members per family): still at most two rows per
    logical family, so the table grows with the families, never with the members."""
    for receivers in (12, 24, 48):
        t = scatter_blocks(1, 20, receivers, 6, 4)
        lb = endpoint_lower_bound(t, TILES)
        got = schedule_rotation(t, TILES, lb)
        assert got is not None
        table, starts = got
        assert int(expand_members(with_start(table, starts)).end.max()) == lb
        assert len(table) <= 2 * len(t) == 40


def test_phases_not_made_of_complete_blocks_are_left_to_the_other_schedulers() -> None:
    t = scatter_blocks(2, 20, 12, 6, 4)
    lb = endpoint_lower_bound(t, TILES)
    incomplete = t.copy()
    incomplete[0, PC] -= 1  # one receiver misses one source
    assert schedule_rotation(incomplete, TILES, lb) is None
    overlapping = t.copy()
    overlapping[t[:, S_TILE] >= 22, D_TILE] = 6  # the second block's receivers meet the first's
    assert schedule_rotation(overlapping, TILES, endpoint_lower_bound(overlapping, TILES)) is None
    mixed_words = t.copy()
    mixed_words[0, PC] = 6  # one source's words split: 6 receivers get 4 words, 6 get 6
    extra = mixed_words[0].copy()
    extra[D_TILE] += 6
    extra[7] = 6  # row_words
    assert schedule_rotation(np.vstack([mixed_words, extra]), TILES, lb) is None


@st.composite
def block_phases(draw: st.DrawFn) -> tuple[np.ndarray, bool]:
    """Up to three tile-disjoint blocks of serial scatters (or their transposes, gathers) on 64
    tiles, words per source (per receiver) drawn from a few values; and whether every block's
    words are uniform (then the rotation must apply)."""
    rows, uniform, s_next, d_next = [], True, 0, 0
    for _ in range(draw(st.integers(1, 3))):
        n_a, n_q = draw(st.integers(1, 10)), draw(st.integers(1, 10))
        if s_next + max(n_a, n_q) > TILES or d_next + max(n_a, n_q) > TILES:
            break
        words = draw(st.lists(st.integers(1, 6), min_size=n_a, max_size=n_a))
        uniform &= len(set(words)) == 1
        gather = draw(st.booleans())
        at = 0
        for j, w in enumerate(words):
            if gather:  # receiver d_next + j gathers w words from each of n_q sources
                rows.append(_row(s_next, d_next + j, w, n_q, 1, 0, at, 0, 0, 4 * w))
            else:  # source s_next + j scatters w words to each of n_q receivers
                rows.append(_row(s_next + j, d_next, w, n_q, 0, 1, 0, at, 4 * w, 0))
            at += 4 * w
        s_next += n_q if gather else n_a
        d_next += n_a if gather else n_q
    return np.array(rows, np.int64).reshape(-1, 16), uniform


@settings(max_examples=80, deadline=None)
@given(block_phases())
def test_rotation_schedules_are_valid_and_at_the_bound(case: tuple[np.ndarray, bool]) -> None:
    t, uniform = case
    if not len(t):
        return
    lb = endpoint_lower_bound(t, TILES)
    got = schedule_rotation(t, TILES, lb)
    if got is None:
        assert not uniform
        return
    table, starts = got
    sched = with_start(table, starts)
    validate_schedule(t, sched, TILES)
    assert int(expand_members(sched).end.max()) == lb
    assert len(table) <= 2 * len(t)


def _blocks_by_definition(src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """`_blocks` restated from its definition: the connected components of the (source,
    receiver) graph, kept when no pair repeats, no tile both sends and receives in different
    components, and every component is complete; numbered by their least receiver."""
    if len(set(zip(src.tolist(), dst.tolist(), strict=True))) != len(src):
        return None
    comp_of_src: dict[int, set[int]] = {}
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        comp_of_src.setdefault(s, set()).add(d)
    lead = {s: min(ds) for s, ds in comp_of_src.items()}
    blocks: dict[int, tuple[set[int], set[int]]] = {}
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        ss, dd = blocks.setdefault(lead[s], (set(), set()))
        ss.add(s)
        dd.add(d)
    receivers = [d for _, dd in blocks.values() for d in dd]
    if len(receivers) != len(set(receivers)):
        return None
    if any(len(ss) * len(dd) != sum(lead[s] == k for s in src.tolist()) for k, (ss, dd) in blocks.items()):
        return None
    names = sorted(blocks)
    return np.array([names.index(lead[s]) for s in src.tolist()], np.int64)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["complete", "one short", "a pair twice", "random"]))
def test_blocks_match_their_definition(seed: int, kind: str) -> None:
    """The tile-indexed block finder against a restatement from its definition, on complete
    bipartite blocks over shuffled tiles and on the near misses it must refuse."""
    rng = np.random.default_rng(seed)
    tiles = int(rng.integers(2, 40))
    perm = rng.permutation(tiles)
    pairs = []
    cut = 0
    while cut + 2 <= tiles and len(pairs) < 200:
        ns, nd = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        ss, dd = perm[cut : cut + ns], perm[cut + ns : cut + ns + nd]
        cut += ns + nd
        pairs += [(a, b) for a in ss for b in dd]
    if not pairs:
        pairs = [(perm[0], perm[1])]
    src, dst = (np.array(c, np.int64) for c in zip(*pairs, strict=True))
    o = rng.permutation(len(src))
    src, dst = src[o], dst[o]
    if kind == "one short" and len(src) > 1:
        src, dst = src[1:], dst[1:]
    elif kind == "a pair twice":
        src, dst = np.append(src, src[0]), np.append(dst, dst[0])
    elif kind == "random":
        n = int(rng.integers(1, 30))
        src, dst = rng.integers(0, tiles, n), rng.integers(0, tiles, n)
    got, want = _blocks(src, dst), _blocks_by_definition(src, dst)
    assert (got is None) == (want is None)
    if want is not None:
        assert np.array_equal(got, want)
