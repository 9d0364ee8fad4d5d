"""Tile mappings are permutations, survive the package, and the screen picks the one that
shortens routes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ipu.target import load_target
from ipu.target.mapping import IDENTITY, MappingError, TileMapping, candidates
from ipu.transforms.tilemap.mapping_screen import PhaseLoad, load_of, loads_of, route_cycles


@given(st.integers(1, 300), st.data())
def test_mapping_is_a_permutation(tiles: int, data: st.DataObject) -> None:
    block = data.draw(st.integers(1, tiles))
    divisors = [w for w in range(1, block + 1) if block % w == 0]
    m = TileMapping(block, data.draw(st.sampled_from(divisors)))
    m.check(tiles)
    phys = m.physical(np.arange(tiles), tiles)
    assert sorted(phys.tolist()) == list(range(tiles))


def test_mapping_transposes_each_block() -> None:
    m = TileMapping(8, 4)  # each block of 8 is a 2 x 4 grid, stored as 4 x 2
    assert m.physical(np.arange(10), 10).tolist() == [0, 2, 4, 6, 1, 3, 5, 7, 8, 9]
    assert TileMapping(8, 8).identity and TileMapping(1, 1).identity and not m.identity
    assert str(m) == "block=8,width=4" and str(IDENTITY) == "identity"


@pytest.mark.parametrize("m", [TileMapping(0, 1), TileMapping(8, 3), TileMapping(128, 2)])
def test_bad_mappings_are_rejected(m: TileMapping) -> None:
    with pytest.raises(MappingError, match="not a permutation"):
        m.check(64)


def test_candidates_are_identity_plus_divisor_interleavings() -> None:
    c = candidates(64, {64, 16, 1}, {2, 3, 8, 64})
    assert c[0] == IDENTITY
    assert set(c[1:]) == {TileMapping(16, 2), TileMapping(16, 8), TileMapping(64, 2), TileMapping(64, 8)}


def test_screen_prefers_the_mapping_that_brings_partners_into_one_column() -> None:
    # sim64: 8 columns of 8 tiles. Logical tile i talks to i + 8 (a transpose-like stride):
    # under the identity every pair crosses one column; interleaving by 8 puts both in one column.
    t = load_target("sim64")
    src = np.arange(56)
    load = PhaseLoad(weight=3, endpoint=10, senders=src, sent=np.full(56, 10), src=src, dst=src + 8)
    base, _ = load_of([load], IDENTITY, t)
    best, _ = load_of([load], TileMapping(64, 8), t)
    x = t.exchange
    assert route_cycles(src, src + 8, IDENTITY, t) == x["route_base_cycles"] + x["route_cycles_per_column"]
    assert route_cycles(src, src + 8, TileMapping(64, 8), t) == x["route_base_cycles"]
    assert base - best == 3 * x["route_cycles_per_column"]  # weighted by the phase's repeats


def test_package_carries_the_mapping_and_the_emulator_times_routes_with_it(tool, tmp_path) -> None:
    """An attention block on sim16 (test/lit/transforms/Inputs/tile-mapping-attention.mlir): the
    screen picks block 16 width 2 (12 route cycles shorter than the identity, see
    test/lit/transforms/tile-mapping.mlir). The emulator, reading the mapping from the package,
    measures exactly that difference; the data is the same either way."""
    from pathlib import Path

    from ipu.abi.package_io import read_package
    from ipu.runtime.emulator import Emulator

    p, tasm = tmp_path / "a.ipuexe", tmp_path / "a.tasm.mlir"
    model = Path(__file__).parents[1] / "lit" / "transforms" / "Inputs" / "tile-mapping-attention.mlir"
    # the ladder from plan-ops on, as the lit test runs it (fuse-sibling-matmuls would join the
    # projections into another plan)
    ladder = "plan-ops,map-tiles,screen-tiles,select-finalist,schedule-exchange,join-phases,place-storage,lower-to-tasm"
    r = tool("ipu-opt", str(model), "--target", "sim16", "-p", ladder, "-o", str(tasm))
    assert r.returncode == 0, r.stderr
    r = tool("ipu-translate", "--to-ipuexe", str(tasm), "-o", str(p))
    assert r.returncode == 0, r.stderr
    r = tool("ipu-run", str(p), "--reference", str(model))
    assert r.returncode == 0 and "numericalTest=PASS" in r.stdout, r.stderr
    pkg, t = read_package(p), load_target("sim16")
    assert pkg.tile_mapping == TileMapping(16, 2)

    def routes() -> list[int]:
        prof = Emulator(pkg, t, execute=False).run({}).profile
        return [rec["route_cycles"] for rec in prof if rec["kind"] == "exchange"]

    mapped = routes()
    pkg.tile_mapping = IDENTITY
    ident = routes()
    # the screen's 12 cycles are over the phases it priced one by one; join-phases runs them as
    # two exchanges (the checkpoints between run no code, and the head merge is a view), each
    # waiting its longest part's route
    assert len(mapped) == len(ident) == 2 and sum(ident) - sum(mapped) == 4
    assert all(t.exchange["route_base_cycles"] <= x <= t.exchange["route_tail_cycles"] for x in mapped + ident)


def test_longest_column_gaps_match_numpy() -> None:
    from ipu.transforms.tilemap.mapping_routes import longest_column_gaps

    rng = np.random.default_rng(7)
    columns = rng.integers(0, 92, (1472, 5)).astype(np.int16)
    for n in (0, 1, 50, 5000):
        src = rng.integers(0, 1472, n).astype(np.int16)
        dst = rng.integers(0, 1472, n).astype(np.int16)
        expect = np.abs(columns[src].astype(int) - columns[dst]).max(axis=0) if n else np.zeros(5)
        assert longest_column_gaps(columns, src, dst).tolist() == expect.tolist()


def test_screening_all_mappings_at_once_matches_one_by_one() -> None:
    t = load_target("sim64")
    rng = np.random.default_rng(3)
    loads = []
    for w in (1, 4):
        src, dst = rng.integers(0, 64, 300), rng.integers(0, 64, 300)
        senders = np.unique(src)
        loads.append(
            PhaseLoad(w, 40, senders, rng.integers(1, 9, len(senders)), src.astype(np.int16), dst.astype(np.int16))
        )
    maps = candidates(64, {64, 16}, {2, 4, 8})
    got = loads_of(loads, maps, t)
    assert len(got) == len(maps) > 3
    for m, (cycles, _) in zip(maps, got, strict=True):
        col = m.permutation(64) // t.exchange["tiles_per_column"]
        expect = 0
        for p in loads:
            bus = np.bincount(m.physical(p.senders, 64) // t.tiles_per_send_bus, weights=p.sent)
            gap = int(np.abs(col[p.src.astype(int)] - col[p.dst.astype(int)]).max())
            expect += p.weight * (
                max(p.endpoint, -(-int(bus.max()) // t.tiles_per_send_bus)) + t.column_route_cycles(gap)
            )
        assert cycles == expect, m
