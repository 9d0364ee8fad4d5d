"""The compiled list scheduler and the vectorized exchange-table helpers (orders, member split,
families per tile) against plain-Python references."""

from __future__ import annotations

import numpy as np
import pytest

from ipu.abi.transfers import D_OFF, D_TILE, MC, MCS, PC, PDO, PDS, PSO, PSS, PTS, ROWS, S_OFF, S_TILE, WORDS
from ipu.transforms.exchange.place_storage import _families_per_tile
from ipu.transforms.exchange.schedulers import _greedy, _orders, split_members


def _random_table(rng: np.random.Generator, n: int, tiles: int) -> np.ndarray:
    t = np.zeros((n, 16), np.int64)
    for i in range(n):
        pc, mc = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        pss, pds, mcs = int(rng.integers(0, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
        t[i, S_TILE] = rng.integers(0, tiles - pc * max(pss, 1))
        t[i, D_TILE] = rng.integers(0, tiles - (pc * pds + mc * mcs))
        t[i, [PC, MC, PSS, PDS, MCS]] = pc, mc, pss, pds, mcs
        t[i, ROWS], t[i, WORDS] = rng.integers(1, 5), rng.integers(1, 9)
        t[i, PTS] = rng.choice([0, 0, t[i, ROWS] * t[i, WORDS]])
        t[i, S_OFF], t[i, D_OFF] = 4 * rng.integers(0, 100), 4 * rng.integers(0, 100)
        t[i, PSO], t[i, PDO] = 4 * rng.integers(0, 3), 4 * rng.integers(0, 3)
    return t


def _members(t: np.ndarray, i: int) -> list[tuple[int, int, list[int]]]:
    """(time offset, source tile, destination tiles) of every member p of family i."""
    r = t[i]
    return [
        (
            p * int(r[PTS]),
            int(r[S_TILE] + p * r[PSS]),
            [int(r[D_TILE] + p * r[PDS] + c * r[MCS]) for c in range(int(r[MC]))],
        )
        for p in range(int(r[PC]))
    ]


def _reference_list_schedule(t: np.ndarray, tiles: int, order: np.ndarray) -> tuple[list[int], int]:
    """Each family in `order` at the earliest cycle every member's ports are free from then on."""
    send, recv = [0] * tiles, [0] * tiles
    starts = [0] * len(t)
    for i in order.tolist():
        ms = _members(t, i)
        start = max(0, *(max(send[s], *(recv[d] for d in ds)) - off for off, s, ds in ms))
        starts[i] = start
        w = int(t[i, ROWS] * t[i, WORDS])
        for off, s, ds in ms:
            send[s] = max(send[s], start + off + w)
            for d in ds:
                recv[d] = max(recv[d], start + off + w)
    ends = [starts[i] + int(t[i, ROWS] * t[i, WORDS] + (t[i, PC] - 1) * t[i, PTS]) for i in range(len(t))]
    return starts, max(ends)


@pytest.mark.parametrize("seed", range(8))
def test_list_schedule_matches_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tiles = 48
    t = _random_table(rng, int(rng.integers(1, 80)), tiles)
    for name, order in _orders(t, tiles).items():
        starts, horizon = _greedy(t, tiles, order)
        ref_starts, ref_horizon = _reference_list_schedule(t, tiles, order)
        assert starts.tolist() == ref_starts, name
        assert horizon == ref_horizon, name


def test_busiest_ports_order_by_hand() -> None:
    # family 0: tile 0 -> tile 1, 4 words; family 1: tile 2 -> tile 3, 2 words; family 2: tile 4
    # -> tiles 1 and 5 (multicast), 1 word. Tile 1 receives 5 words, so family 2 (load 5) goes
    # before family 1 (load 2) although it is shorter.
    t = np.zeros((3, 16), np.int64)
    t[:, [PC, PSS, PDS, MC, MCS, ROWS]] = 1
    t[:, S_TILE], t[:, D_TILE], t[:, WORDS] = [0, 2, 4], [1, 3, 1], [4, 2, 1]
    t[2, MC], t[2, MCS] = 2, 4
    orders = _orders(t, 8)
    assert orders["longest-first"].tolist() == [0, 1, 2]
    assert orders["busiest-ports-first"].tolist() == [0, 2, 1]


@pytest.mark.parametrize("seed", range(4))
def test_split_members_keeps_every_member(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    t = _random_table(rng, 30, 48)
    s = split_members(t)
    split = (t[:, PC] > 1) & (t[:, PTS] == 0)
    assert len(s) == int(np.where(split, t[:, PC], 1).sum())
    assert (s[:, PC] > 1).sum() == ((t[:, PC] > 1) & (t[:, PTS] != 0)).sum()

    def members(table: np.ndarray) -> list[tuple[int, ...]]:
        out = []
        for i, r in enumerate(table):
            for p, (_, src, dsts) in enumerate(_members(table, i)):
                out.append((src, int(r[S_OFF] + p * r[PSO]), *dsts, int(r[D_OFF] + p * r[PDO]), int(r[ROWS])))
        return sorted(out)

    assert members(s) == members(t)


@pytest.mark.parametrize("seed", range(6))
def test_families_per_tile_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    tiles = 48
    t = _random_table(rng, 40, tiles)
    # steps that make members meet: zero steps, and multicast runs that overlap
    t[::5, PSS] = 0
    t[1::5, PDS] = 0
    t[2::5, PDS] = t[2::5, MCS]
    expect = np.zeros(tiles, np.int64)
    for i in range(len(t)):
        ms = _members(t, i)
        for x in {s for _, s, _ in ms}:
            expect[x] += 1
        for x in {d for _, _, ds in ms for d in ds}:
            expect[x] += 1
    assert _families_per_tile(t, tiles).tolist() == expect.tolist()
