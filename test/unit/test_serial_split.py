"""The serial GEMM with its contraction split (2.5-D): each part steps through its share of K
on its own tiles, a plan.reduce sums the fp32 partials; chosen for matmuls no grid holds."""

from __future__ import annotations

import pytest
from conftest import ROOT

from ipu import api
from ipu.abi.package import kernels_called
from ipu.target import load_target
from ipu.transforms.plan.families.gemm import choose_serial_gemm, serial_candidate, serial_grids

SPLIT = ROOT / "test" / "lit" / "transforms" / "gemm-serial-split.mlir"


def test_split_grids_share_the_tiles_between_the_parts() -> None:
    t = load_target("mk2")
    grids = serial_grids(4096, 4096, t.tiles, 4096)
    assert {pk for _, _, pk in grids} == {1, 2, 3, 4, 6, 8}
    assert all(pm * pn * pk <= t.tiles for pm, pn, pk in grids)
    assert {pk for _, _, pk in serial_grids(4096, 4096, t.tiles)} == {1}  # no k: unsplit only
    assert {pk for _, _, pk in serial_grids(64, 64, t.tiles, 64)} == {1, 2}  # a part is 32 deep at least


def test_attention_longs_projection_splits_without_holding_more() -> None:
    """[4096 x 4096] x [4096 x 4096] on mk2: no gemm grid holds it; split, the windows carry
    fewer words a tile for an fp32 reduce, within what the unsplit grid and its homes hold."""
    t = load_target("mk2")
    plain = choose_serial_gemm(4096, 4096, 4096, 2, t, 0)
    split = choose_serial_gemm(4096, 4096, 4096, 2, t, 0, split=True)
    assert plain is not None and split is not None and plain.pk == 1 and split.pk > 1
    assert split.cycles < 0.9 * plain.cycles
    homes = 2 * 4096 * 4096 * 2 // (plain.pm * plain.pn)
    assert split.bytes_per_tile <= plain.bytes_per_tile + homes
    again = serial_candidate(4096, 4096, 4096, 2, t, split.pm, split.pn, split.steps, split.pk)
    assert again == split


@pytest.mark.parametrize("poison", [False, True])
def test_a_pinned_split_runs_and_matches(poison: bool) -> None:
    compiled = api.compile(SPLIT, "sim16")
    assert {"amp_matmul", "amp_matmul_acc", "reduce_sum"} <= kernels_called(compiled.package)
    report = api.run(compiled, poison=poison)  # poison: every window's padding is written or zeroed
    assert report.passed, [(c.name, c.result.reason) for c in report.checks if not c.result.passed]
    assert report.total_cycles == compiled.package.metrics["estimated_cycles"]
