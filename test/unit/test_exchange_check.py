"""The schedule checker on hand-built phase tables: valid ones pass, each broken one names its fault."""

from __future__ import annotations

import numpy as np
import pytest

from ipu.abi import transfers as tr
from ipu.abi.exchange_rules import (
    ScheduleError,
    check_ports,
    check_writes,
    expand_members,
    expand_rows,
    validate_schedule,
    word_segments,
)
from ipu.abi.tables import MOVE, TRANSFER

TILES = 16


def fam(
    start: int,
    src: int,
    sa: int,
    dst: int,
    da: int,
    rows: int = 1,
    words: int = 4,
    ss: int = 0,
    ds: int = 0,
    pc: int = 1,
    pss: int = 0,
    pds: int = 0,
    mc: int = 1,
    mcs: int = 0,
    pso: int = 0,
    pdo: int = 0,
    pts: int = 0,
) -> list[int]:
    """A 17-column phase row (start, then the move columns)."""
    return [start, src, sa, ss, dst, da, ds, rows, words, pc, pss, pds, mc, mcs, pso, pdo, pts]


def table(*rows: list[int]) -> np.ndarray:
    return np.array(rows, np.int64).reshape(-1, 17)


def logical(t: np.ndarray) -> np.ndarray:
    return t[:, 1:]


UNICAST = table(
    fam(0, 0, 0x100, 1, 0x200, rows=2, words=4, ss=32, ds=16),  # tile 0 -> 1, cycles [0, 8)
    fam(0, 1, 0x100, 0, 0x200, words=8),  # the reverse direction at the same time
    fam(8, 2, 0x100, 1, 0x300, words=4),  # tile 1's receive port after the first
    fam(0, 4, 0x100, 8, 0x200, words=6, pc=3, pss=1, pds=1, pdo=0x40),  # 4..6 -> 8..10 in parallel
    fam(0, 3, 0x100, 12, 0x200, words=4, pc=3, pss=0, pds=1, pso=16, pts=4),  # one source, serial
)

MULTICAST = table(
    fam(0, 0, 0x100, 1, 0x200, rows=2, words=4, ds=16, mc=3, mcs=1),  # tile 0 -> tiles 1, 2, 3
    fam(0, 1, 0x100, 0, 0x200, words=8),
    fam(8, 4, 0x100, 2, 0x300, words=2),  # tile 2 receives after the multicast
    fam(0, 5, 0x100, 8, 0x200, words=3, pc=2, pss=1, pds=1, mc=2, mcs=2),  # 5 -> {8, 10}, 6 -> {9, 11}
)


def test_short_column_names_follow_the_schema() -> None:
    """The expansion's short indices name the schema's columns (a phase table is [start | move])."""
    assert len(TRANSFER) == len(MOVE) + 1 and TRANSFER.columns[tr.START] == "start"
    named = {"src_address": tr.S_OFF, "dst_address": tr.D_OFF, "row_words": tr.WORDS, "mc_step": tr.MCS}
    named |= {"src_tile": tr.S_TILE, "par_time_step": tr.PTS, "par_count": tr.PC, "mc_count": tr.MC}
    for name, col in named.items():
        assert MOVE.columns[col] == name and TRANSFER.columns[col + 1] == name


def test_same_words_cut_differently_around_a_double_write() -> None:
    # the logical table writes tile 1 0x200..0x210 twice; the schedule moves the same words cut
    # into other rows: the words match, the write rule reports the double write
    log = table(fam(0, 0, 0x100, 1, 0x200, words=4), fam(0, 0, 0x100, 1, 0x200, words=4))
    sched = table(
        fam(0, 0, 0x100, 1, 0x200, words=2),
        fam(2, 0, 0x108, 1, 0x208, words=2),
        fam(4, 0, 0x100, 1, 0x200, words=4),
    )
    with pytest.raises(ScheduleError, match="both write bytes"):
        validate_schedule(logical(log), sched, TILES)


def test_valid_unicast_phase() -> None:
    validate_schedule(logical(UNICAST), UNICAST, TILES)
    m = expand_members(UNICAST)
    assert len(m) == 9
    assert m.src[-3:].tolist() == [3, 3, 3] and m.dst[-3:].tolist() == [12, 13, 14]
    assert m.start[-3:].tolist() == [0, 4, 8] and m.src_addr[-3:].tolist() == [0x100, 0x110, 0x120]


def test_valid_multicast_phase() -> None:
    validate_schedule(logical(MULTICAST), MULTICAST, TILES)
    m = expand_members(MULTICAST)
    assert m.dst[:3].tolist() == [1, 2, 3] and m.sender[:3].tolist() == [True, False, False]
    assert m.src[-4:].tolist() == [5, 5, 6, 6] and m.dst[-4:].tolist() == [8, 10, 9, 11]
    assert len(expand_rows(m)) == 3 * 2 + 1 + 1 + 4


@pytest.mark.parametrize(("ss", "ds", "n_segments"), [(32, 16, 3), (16, 16, 1), (16, 32, 3)])
def test_split_into_runs_matches_the_whole_transfer(ss: int, ds: int, n_segments: int) -> None:
    # a 3-row x 4-word transfer, scheduled as two runs around another send of tile 0:
    # run 1 = row 0 and the first half of row 1, run 2 = the rest of row 1 and row 2
    whole = table(fam(0, 0, 0x100, 1, 0x200, rows=3, words=4, ss=ss, ds=ds))
    runs = table(
        fam(0, 0, 0x100, 1, 0x200, words=4),
        fam(4, 0, 0x100 + ss, 1, 0x200 + ds, words=2),
        fam(6, 0, 0x400, 2, 0x200, words=3),
        fam(10, 0, 0x100 + ss + 8, 1, 0x200 + ds + 8, words=2),
        fam(12, 0, 0x100 + 2 * ss, 1, 0x200 + 2 * ds, words=4),
    )
    log = np.concatenate([logical(whole), logical(runs[2:3])])
    validate_schedule(log, runs, TILES)
    seg = word_segments(log, with_start=False)
    np.testing.assert_array_equal(seg, word_segments(runs, with_start=True))
    assert len(seg) == n_segments + 1
    assert seg[:, 4].tolist().count(12 // n_segments) == n_segments
    assert seg[0].tolist() == [0, 0x100, 1, 0x200, 12 // n_segments]


def test_segments_merge_families() -> None:
    # two families that together move one contiguous run are one segment
    t = table(fam(0, 0, 0x100, 1, 0x200, words=4), fam(4, 0, 0x110, 1, 0x210, rows=2, words=2, ss=8, ds=8))
    assert word_segments(t, with_start=True).tolist() == [[0, 0x100, 1, 0x200, 8]]


def _broken(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(logical16, scheduled17) for one kind of broken schedule."""
    good = table(fam(0, 0, 0x100, 1, 0x200, rows=2, words=4, ss=16, ds=16), fam(0, 2, 0x100, 3, 0x200, words=4))
    log = logical(good)
    if name == "send-port":
        t = table(good[0], fam(6, 0, 0x100, 5, 0x200, words=4))
        return logical(t), t
    if name == "receive-port":
        t = table(good[0], fam(4, 2, 0x100, 1, 0x300, words=4))
        return logical(t), t
    if name == "multicast-receive-port":
        t = table(fam(0, 0, 0x100, 1, 0x200, mc=2, mcs=0))
        return logical(t), t
    if name == "double-write":  # the logical table itself writes tile 3 twice: only the write rule catches it
        t = table(good[1], fam(4, 4, 0x100, 3, 0x208, words=4))
        return logical(t), t
    if name == "missing-word":
        return log, good[:1]
    if name == "duplicated-word":
        return log, table(good[0], good[1], fam(8, 0, 0x110, 1, 0x210, words=1))
    if name == "wrong-address":
        return log, table(good[0], fam(0, 2, 0x100, 3, 0x300, words=4))
    if name == "wrong-source":
        return log, table(good[0], fam(0, 2, 0x104, 3, 0x200, words=4))
    if name == "negative-start":
        return log, table(good[0], fam(-1, 2, 0x100, 3, 0x200, words=4))
    if name == "tile-out-of-range":
        t = table(good[0], fam(0, 2, 0x100, 15, 0x200, words=4, pc=2, pds=1))
        return logical(t), t
    raise AssertionError(name)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "send-port",
            r"^phase 7: send port of tile 0 used twice: "
            r"transfer 0 cycles \[0, 8\) overlaps transfer 1 cycles \[6, 10\)$",
        ),
        (
            "receive-port",
            r"^phase 7: receive port of tile 1 used twice: "
            r"transfer 0 cycles \[0, 8\) overlaps transfer 1 cycles \[4, 8\)$",
        ),
        ("multicast-receive-port", r"receive port of tile 1 used twice"),
        ("double-write", r"^phase 7: tile 3: transfers 0 and 1 both write bytes \[0x208, 0x210\)$"),
        (
            "missing-word",
            r"^phase 7: schedule does not move the logical words: word tile 2 0x100 -> tile 3 0x200 is missing$",
        ),
        ("duplicated-word", r"word tile 0 0x110 -> tile 1 0x210 is moved more than once$"),
        ("wrong-address", r"word tile 2 0x100 goes to tile 3 0x300 instead of tile 3 0x200$"),
        ("wrong-source", r"tile 3 0x200 receives word tile 2 0x104 instead of tile 2 0x100$"),
        ("negative-start", r"^phase 7: transfer 1 has negative start -1$"),
        ("tile-out-of-range", r"^phase 7: transfer 1 member 1 destination tile 16 out of range \[0, 16\)$"),
    ],
)
def test_broken_schedules_are_rejected(name: str, message: str) -> None:
    log, sched = _broken(name)
    with pytest.raises(ScheduleError, match=message):
        validate_schedule(log, sched, TILES, phase=7)


def test_good_base_is_valid() -> None:
    log, sched = _broken("missing-word")
    validate_schedule(log, table(*[np.r_[0, r] for r in log]), TILES)


def test_checks_used_alone() -> None:
    log, sched = _broken("double-write")
    m = expand_members(sched)
    check_ports(m)
    with pytest.raises(ScheduleError, match="both write bytes"):
        check_writes(expand_rows(m))
    with pytest.raises(ScheduleError, match="send port of tile 0"):
        check_ports(expand_members(_broken("send-port")[1]))


def test_bad_shapes_and_counts() -> None:
    with pytest.raises(ScheduleError, match=r"scheduled table must be \[n, 17\]"):
        validate_schedule(logical(UNICAST), logical(UNICAST), TILES)
    bad = UNICAST.copy()
    bad[2, 8] = 0
    with pytest.raises(ScheduleError, match="^phase 0: transfer 2 has non-positive"):
        validate_schedule(logical(UNICAST), bad, TILES)
    with pytest.raises(ScheduleError, match="^phase 0: logical transfer 2 has non-positive"):
        validate_schedule(logical(bad), UNICAST, TILES)
    validate_schedule(np.zeros((0, 16), np.int64), np.zeros((0, 17), np.int64), TILES)


def test_same_members_is_multiset_equality() -> None:
    from ipu.abi.exchange_rules import _same_members

    rng = np.random.default_rng(3)
    t = np.zeros((40, len(MOVE)), np.int64)
    t[:, tr.S_TILE], t[:, tr.D_TILE] = rng.integers(0, 64, 40), rng.integers(0, 64, 40)
    t[:, tr.S_OFF], t[:, tr.D_OFF] = 4 * rng.integers(0, 500, 40), 4 * rng.integers(0, 500, 40)
    t[:, tr.S_STR], t[:, tr.D_STR] = 16, 16
    t[:, tr.ROWS], t[:, tr.WORDS] = rng.integers(1, 4, 40), rng.integers(1, 4, 40)
    t[:, [tr.PC, tr.PSS, tr.PDS, tr.MC, tr.MCS]] = 1
    a = tr.expand_members(tr.with_start(t))
    assert _same_members(a, tr.expand_members(tr.with_start(t[rng.permutation(40)])))
    # the same column sums and ranges, other members: two members swap their destinations' rows
    u = t.copy()
    i, j = 0, 1
    while u[i, tr.ROWS] == u[j, tr.ROWS]:
        j += 1
    u[[i, j], tr.ROWS] = u[[j, i], tr.ROWS]
    assert not _same_members(a, tr.expand_members(tr.with_start(u)))
    assert not _same_members(a, tr.expand_members(tr.with_start(t[1:])))
