"""Property tests: the exchange scheduler's output passes the independent schedule checker."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu.abi.exchange_rules import validate_schedule
from ipu.abi.transfers import expand_members
from ipu.transforms.exchange.schedulers import endpoint_lower_bound, schedule_phase

PROPERTY = settings(max_examples=60, deadline=None)


@st.composite
def _family(draw: st.DrawFn, tiles: int, spread: int, bump: np.ndarray, multicast: bool) -> list[int]:
    """One random move-table row, its first source and destination tiles within `spread` of the
    lowest possible (small spreads make ports contend); its destination regions come from `bump`
    (a per-tile allocator, advanced here) so no two writes of the table overlap. Sources may be
    anything in range."""
    mc = draw(st.integers(2, 4)) if multicast else 1
    pc = draw(st.integers(1, 4))
    rows, words = draw(st.integers(1, 4)), draw(st.integers(1, 40))
    pss = draw(st.integers(-3, 3))
    pds = draw(st.integers(-2, 2) if multicast else st.integers(-3, 3))
    mcs = draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) if multicast else 0
    s_lo, s_hi = -min(0, (pc - 1) * pss), tiles - 1 - max(0, (pc - 1) * pss)
    d_lo = -min(0, (pc - 1) * pds) - min(0, (mc - 1) * mcs)
    d_hi = tiles - 1 - max(0, (pc - 1) * pds) - max(0, (mc - 1) * mcs)
    s0 = draw(st.integers(s_lo, min(s_hi, s_lo + spread)))
    d0 = draw(st.integers(d_lo, min(d_hi, d_lo + spread)))
    p = np.arange(pc)
    src = s0 + p * pss
    dst = d0 + p[:, None] * pds + np.arange(mc)[None, :] * mcs  # [pc, mc]
    ss, sa, pso = 4 * draw(st.integers(0, 64)), 4 * draw(st.integers(0, 4096)), 4 * draw(st.integers(0, 64))
    ds = 4 * (words + draw(st.integers(0, 3)))
    extent = (rows - 1) * ds + 4 * words
    shared_dst = len(np.unique(dst)) < dst.size  # members of this family land on one tile
    pdo = extent + 4 * draw(st.integers(0, 3)) if shared_dst or draw(st.booleans()) else 0
    da = int((bump[dst] - p[:, None] * pdo).max()) + 4 * draw(st.integers(0, 2))
    for q in range(pc):
        bump[dst[q]] = np.maximum(bump[dst[q]], da + q * pdo + extent)
    # members sharing a port run one after another; otherwise in parallel or serial
    dur = rows * words
    shared_port = len(np.unique(src)) < pc or shared_dst
    pts = dur if shared_port or draw(st.booleans()) else 0
    return [s0, sa, ss, d0, da, ds, rows, words, pc, pss, pds, mc, mcs, pso, pdo, pts]


@st.composite
def logical_tables(draw: st.DrawFn, multicast: bool) -> tuple[np.ndarray, int]:
    """A random logical 16-column table on 16..64 tiles; with `multicast`, some families (at
    least one) multicast to 2..4 tiles."""
    tiles = draw(st.integers(16, 64))
    spread = draw(st.integers(1, tiles))
    n = draw(st.integers(1, 32))
    bump = np.zeros(tiles, np.int64)
    rows = [draw(_family(tiles, spread, bump, multicast and (i == 0 or draw(st.booleans())))) for i in range(n)]
    return np.array(rows, np.int64), tiles


def _schedule(logical: np.ndarray, tiles: int) -> tuple[np.ndarray, int, int]:
    """Schedule, check the schedule; returns (scheduled17, horizon, lower bound)."""
    table, sched = schedule_phase(logical, tiles)
    scheduled17 = np.concatenate([sched.starts[:, None], table], axis=1)
    validate_schedule(logical, scheduled17, tiles)
    assert sched.horizon >= sched.lower_bound == endpoint_lower_bound(logical, tiles)
    assert sched.horizon == int(expand_members(scheduled17).end.max())
    return scheduled17, sched.horizon, sched.lower_bound


@PROPERTY
@given(logical_tables(multicast=False))
def test_unicast_schedules_are_valid(case: tuple[np.ndarray, int]) -> None:
    _schedule(*case)


@PROPERTY
@given(logical_tables(multicast=False))
def test_unicast_schedules_reach_the_lower_bound(case: tuple[np.ndarray, int]) -> None:
    # unicast words are edges of a bipartite multigraph (send ports x receive ports): by Koenig's
    # theorem a schedule free to split transfers into runs reaches max port load exactly
    _, horizon, lower_bound = _schedule(*case)
    assert horizon <= lower_bound


@PROPERTY
@given(logical_tables(multicast=True))
def test_multicast_schedules_are_valid(case: tuple[np.ndarray, int]) -> None:
    _schedule(*case)


@st.composite
def group_multicast_tables(draw: st.DrawFn) -> tuple[np.ndarray, int]:
    """Multicast to disjoint receiver groups (tiles cut into blocks of 2..4; every family sends
    each of its members to one whole block), as attention panels and matmul operand broadcasts do."""
    size = draw(st.integers(2, 4))
    tiles = size * draw(st.integers(4, 16))
    groups = tiles // size
    bump = np.zeros(tiles, np.int64)
    rows = []
    for _ in range(draw(st.integers(1, 24))):
        pc, words, nrows = draw(st.integers(1, 4)), draw(st.integers(1, 40)), draw(st.integers(1, 3))
        s0 = draw(st.integers(0, tiles - pc))
        g = draw(st.integers(0, groups - 1))
        dst = g * size + np.arange(size)
        extent = nrows * words * 4
        da = int(bump[dst].max())
        bump[dst] = da + pc * extent
        # members from consecutive source tiles into the same group, one after another
        rows.append(
            [s0, 0, 4 * words, g * size, da, 4 * words, nrows, words, pc, 1, 0, size, 1, 0, extent, nrows * words]
        )
    return np.array(rows, np.int64), tiles


@PROPERTY
@given(group_multicast_tables())
def test_group_multicast_schedules_reach_the_lower_bound(case: tuple[np.ndarray, int]) -> None:
    # a multicast to a whole receiver group is one edge sender -> group: bipartite again
    _, horizon, lower_bound = _schedule(*case)
    assert horizon <= lower_bound
