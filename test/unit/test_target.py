"""The target loader and the cost formulas shared by compiler and emulator."""

from __future__ import annotations

import pytest

from ipu.target import TargetError, available_targets, load_target


def test_all_targets_load() -> None:
    names = available_targets()
    assert {"mk2", "mk1", "ipu21", "sim16", "sim64"} <= set(names)
    for n in names:
        t = load_target(n)
        assert t.regions[0].start == t.memory_base
        assert t.regions[-1].end == t.memory_end


def test_mk2_geometry() -> None:
    t = load_target("mk2")
    assert t.tiles == 1472
    assert t.memory_size == 624 * 1024
    assert t.region("standard").size == 208 * 1024
    assert t.region("interleaved").size == 416 * 1024
    assert t.region("interleaved").interleaved and not t.region("interleaved").executable


def test_sim_targets_follow_mk2_rules() -> None:
    mk2, sim = load_target("mk2"), load_target("sim16")
    assert sim.tiles == 16
    geometry = ("route_base_cycles", "route_cycles_per_column", "tiles_per_column")
    same = {k: v for k, v in sim.exchange.items() if k not in geometry}
    assert (sim.regions, sim.costs, sim.elementwise, same) == (
        mk2.regions,
        mk2.costs,
        mk2.elementwise,
        {k: mk2.exchange[k] for k in same},
    )
    # columns differ (a small machine), the longest route does not
    assert sim.route_cycles(0, sim.tiles - 1) == mk2.route_cycles(0, mk2.tiles - 1) == sim.exchange["route_tail_cycles"]


def test_route_cycles_grow_with_column_distance() -> None:
    t = load_target("sim64")  # 8 columns of 8 tiles
    x = t.exchange
    assert t.columns == 8
    assert t.route_cycles(0, 7) == x["route_base_cycles"]  # same column
    assert t.route_cycles(0, 8) == x["route_base_cycles"] + x["route_cycles_per_column"]
    assert list(t.route_cycles([63, 0], [0, 63])) == [x["route_tail_cycles"]] * 2


def test_unknown_target() -> None:
    with pytest.raises(TargetError, match="unknown target 'nope'"):
        load_target("nope")
    with pytest.raises(TargetError):
        load_target("../mk2")


def test_amp_cost_by_hand() -> None:
    t = load_target("mk2")
    # PopLibs' 1x1 AMP estimate (docs/cycle-model-sources.md 1.1): m=128 -> 21 or 22 rows a
    # worker, I_z = max(6*106, 6*102 + 14) = 636, I_nz = max(6*107, 6*103 + 14) = 642; k=256 -> 16
    # input groups, n=178 -> 12 output groups of 2 passes, 16 weight-load cycles a pass
    later = 15 * (15 + 12 * (19 + 2 * (6 + 16 + 642)))
    assert t.amp_matmul_cycles(128, 256, 178) == 50 + 6 * (7 + 3 * 15) + 13 + later + 11 + 12 * (
        18 + 2 * (7 + 16 + 636)
    )


def test_vector_costs_by_hand() -> None:
    t = load_target("mk2")
    # 100 elements: 17 a worker, 5 vectors of 4 halves (docs/cycle-model-sources.md 1.3-1.6)
    assert t.unary_cycles("exp", 100) == 11 + 9 + 6 * (33 + 4 * 5)
    assert t.binary_cycles("add", 100) == 11 + 6 * (26 + 3 * 5)
    assert t.reduce_cycles(4, 10) == 6 * (32 + 1 * (3 * 4 + 7))
    assert t.phase_overhead_cycles() == 600 + 120


def test_host_transfer_cycles_by_hand() -> None:
    mk2, mk1, ipu21 = (load_target(n) for n in ("mk2", "mk1", "ipu21"))
    # PCIe Gen4 ~31.5 GB/s a direction at x16 (GC200, GC2), half at x8 (C600), over each clock
    for t, link in ((mk2, 31.5e9), (mk1, 31.5e9), (ipu21, 15.75e9)):
        assert t.rates["host_bytes_per_cycle"] == int(link // t.clock_hz)
    assert [t.rates["host_bytes_per_cycle"] for t in (mk2, mk1, ipu21)] == [23, 19, 10]
    # a phase's 600-cycle host sync, then ceil(bytes / bytes a cycle)
    assert mk2.host_transfer_cycles(0) == 600
    assert mk2.host_transfer_cycles(23) == 601
    assert mk2.host_transfer_cycles(24) == 602
    assert mk2.host_transfer_cycles(1 << 20) == 600 + 45591  # 1048576 / 23 = 45590.3
    assert mk1.host_transfer_cycles(1000) == 600 + 53
    assert ipu21.host_transfer_cycles(1000) == 600 + 100
    for sim in ("sim16", "sim64"):
        assert load_target(sim).host_transfer_cycles(1000) == mk2.host_transfer_cycles(1000)
