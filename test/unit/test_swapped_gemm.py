"""The swapped GEMM: the AMP on the product's transpose (b's columns as its rows, a as its
weights), then a transpose of each tile's block; chosen where it wins clearly, pinnable."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT

from ipu import api
from ipu.abi.kernels import KERNELS, half_partials_matmul
from ipu.abi.package import kernels_called
from ipu.dialects import plan
from ipu.target import load_target
from ipu.transforms.plan.budget import op_budget
from ipu.transforms.plan.families.gemm import SWAP_GAIN, choose_gemm, gemm_candidate, gemm_candidates
from ipu.transforms.plan.layouts import gemm_layouts
from ipu.transforms.plan.plan_ops import PlanOpsPass

LIT = ROOT / "test" / "lit" / "transforms"
PINNED = """
func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {{
  %w = graph.parameter "w" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w {{plan.choice = #plan.choice<gemm, grid = {grid}{extra}>}}
    : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}}
"""


@pytest.mark.parametrize("half", [False, True])
def test_the_kernel_computes_the_product_and_leaves_its_transpose_in_the_scratch(half: bool) -> None:
    k = KERNELS["amp_matmul_swapped_half" if half else "amp_matmul_swapped"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 24 * 40)).astype(np.float32)
    b = rng.standard_normal((2, 40 * 8)).astype(np.float32)
    out, scratch = k.run({"m": 24, "k": 40, "n": 8}, 2, [a, b], None)
    want = a.reshape(2, 24, 40) @ b.reshape(2, 40, 8)
    if half:  # the same input groups, the same roundings as the unswapped half-partials AMP
        want = half_partials_matmul(a.reshape(2, 24, 40), b.reshape(2, 40, 8))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(scratch, np.asarray(out).transpose(0, 2, 1))
    assert k.amp and k.amp_weights == 0 and k.scratches() == [2]


def test_the_kernel_is_priced_as_the_transposed_amp_plus_a_transpose() -> None:
    t = load_target("mk2")
    p = {"m": 64, "k": 256, "n": 192}
    got = KERNELS["amp_matmul_swapped"].cycles(t, p, 4)
    assert got == t.amp_matmul_cycles(192, 256, 64) + t.transform_cycles(192, 64, 4)
    # 64 rows by 192 columns: the swapped AMP runs 4 output groups instead of 12
    assert got < KERNELS["amp_matmul"].cycles(t, p, 4)


def test_the_planner_weighs_both_orientations_and_swaps_only_a_clear_win() -> None:
    t = load_target("mk2")
    # GPT-2's up-projection at 128 tokens with its weight fetched (as in the rolled layers)
    cands = gemm_candidates(128, 768, 3072, 2, True, t, True)
    assert {c.swapped for c in cands} == {False, True}
    best = choose_gemm(128, 768, 3072, 2, True, t, True)
    plain = min(c.cycles for c in cands if not c.swapped)
    assert best.swapped and best.cycles < SWAP_GAIN * plain
    # resident, the swapped grid would hold more of the weight a tile than the best plain one
    resident = choose_gemm(128, 768, 3072, 2, True, t)
    assert not resident.swapped
    assert min(c.weight_bytes for c in gemm_candidates(128, 768, 3072, 2, True, t) if c.grid == best.grid) > (
        resident.weight_bytes
    )
    # a win within the margin stays plain: mlp's down-projection with its weight fetched, 1 %
    cands = [c for c in gemm_candidates(512, 8192, 2048, 2, True, t, True) if c.bytes_per_tile <= op_budget(t, 0)]
    swapped, plain = (min(c.cycles for c in cands if c.swapped is s) for s in (True, False))
    assert SWAP_GAIN * plain < swapped < plain
    assert not choose_gemm(512, 8192, 2048, 2, True, t, True).swapped


def test_a_replicated_swap_is_a_second_candidate_only_within_the_room_given() -> None:
    """mk2 mlp's resident down-projection: the swapped grid 8 x 11 x 16 holds 2x the weight a
    tile of the best plain grid. Without `swap_room` it is no candidate; with room for it, it is
    the second (rank 1: the search tries it, the cheapest plan stays plain); with less, not."""
    t = load_target("mk2")
    args = (512, 8192, 2048, 2, True, t)
    plain = [choose_gemm(*args, rank=r) for r in range(3)]
    assert not any(c.swapped for c in plain)
    roomy = [choose_gemm(*args, rank=r, swap_room=256 * 1024) for r in range(3)]
    assert roomy[0] == plain[0] and roomy[1].swapped and not roomy[2].swapped
    assert roomy[1].grid == (8, 11, 16) and roomy[1].weight_bytes > plain[0].weight_bytes
    assert roomy[1].cycles < SWAP_GAIN * plain[0].cycles
    # its other orientation is not tried again; the plain ranks after it keep their order
    assert roomy[2] == next(c for c in plain[1:] if c.grid != roomy[1].grid)
    tight = [choose_gemm(*args, rank=r, swap_room=roomy[1].weight_bytes - 1) for r in range(3)]
    assert roomy[1] not in tight
    # a fetched weight needs no room: its swapped grids compete as they always did
    assert choose_gemm(*args, True, swap_room=0) == choose_gemm(*args, True)


def test_the_search_keeps_a_replicated_swap_that_wins_and_it_runs() -> None:
    """A [128 x 256] -> 2048 -> 256 MLP on sim16 (`plan-swap-replicas.mlir`): the search's
    largest weight budget tries the down-projection swapped over two 64-token groups, each with
    its replica of the weight; it wins over the whole plan, the emulator agrees, numbers pass."""
    compiled = api.compile(LIT / "plan-swap-replicas.mlir", "sim16")
    assert "amp_matmul_swapped" in kernels_called(compiled.package)
    greedy = api.compile(LIT / "plan-swap-replicas.mlir", "sim16", options={"finalists": 1})
    assert "amp_matmul_swapped" not in kernels_called(greedy.package)
    report = api.run(compiled)
    assert report.passed, [(c.name, c.result.reason) for c in report.checks if not c.result.passed]
    assert report.total_cycles == compiled.package.metrics["estimated_cycles"]
    assert report.total_cycles < greedy.package.metrics["estimated_cycles"]


def test_the_planner_swaps_a_short_matmul_and_it_runs() -> None:
    """32 tokens through a [512 x 1024] weight on sim16 (`gemm-swapped.mlir`): the search
    chooses the swapped AMP, the emulator agrees with the estimate and the numbers pass."""
    compiled = api.compile(LIT / "gemm-swapped.mlir", "sim16")
    assert "amp_matmul_swapped" in kernels_called(compiled.package)
    report = api.run(compiled)
    assert report.passed, [(c.name, c.result.reason) for c in report.checks if not c.result.passed]
    assert report.total_cycles == compiled.package.metrics["estimated_cycles"]


@pytest.mark.parametrize(("extra", "kernel"), [(", orientation = swapped", "amp_matmul_swapped"), ("", "amp_matmul")])
def test_a_pinned_orientation_is_honoured_and_runs(extra: str, kernel: str) -> None:
    compiled = api.compile(PINNED.format(grid="[1, 4, 4]", extra=extra), "sim16", options={"finalists": 1})
    called = kernels_called(compiled.package)
    assert kernel in called and ({"amp_matmul", "amp_matmul_swapped"} - {kernel}).isdisjoint(called)
    report = api.run(compiled)
    assert report.passed, [(c.name, c.result.reason) for c in report.checks if not c.result.passed]
    assert report.total_cycles == compiled.package.metrics["estimated_cycles"]


def test_the_choice_attribute_records_the_orientation() -> None:
    c = plan.ChoiceAttr("gemm", (1, 4, 4), orientation="swapped")
    assert c.orientation.data == "swapped"
    assert plan.ChoiceAttr("gemm", (1, 4, 4)).orientation.data == ""


def test_a_swapped_k_split_reduces_by_rows_where_columns_would_pad_the_weight() -> None:
    """mk2 GPT-2's FFN down-projection [128 x 3072] x [3072 x 768] on 4 x 11 x 32: reduced by
    column shares, each of the 11 weight column blocks must hold 32 shares (128 columns, 6 blocks
    cover 768 and 5 column groups idle); the swapped AMP takes the weight's columns as rows one
    at a time, so its grid reduces by rows ([1 x 70] result blocks) and holds [96 x 70], and it
    is priced below the same grid by columns. The plain AMP keeps the column form."""
    t = load_target("mk2")
    plain = gemm_layouts(128, 3072, 768, 4, 11, 32, 1, False)
    rows = gemm_layouts(128, 3072, 768, 4, 11, 32, 1, False, swapped=True)
    assert (plain.b.block, plain.result.split) == ((96, 128), ((0,), (1, 2)))
    assert (rows.b.block, rows.result.block, rows.result.split) == ((96, 70), (1, 70), ((0, 2), (1,)))
    assert gemm_layouts(128, 3072, 768, 4, 11, 32, 1, True, swapped=True).home.block == (24, 70)
    swapped = gemm_candidate(128, 3072, 768, 2, True, t, False, 1, None, (4, 11, 32), swapped=True)
    assert swapped.layouts == rows
    assert swapped.cycles < 0.75 * gemm_candidate(128, 3072, 768, 2, True, t, False, 1, None, (4, 11, 32)).cycles
    # no row form where pk does not divide the row block, or for head-aligned columns
    assert gemm_layouts(120, 3072, 768, 4, 11, 32, 1, False, swapped=True).result.split == ((0,), (1, 2))
    assert gemm_layouts(128, 3072, 768, 4, 11, 32, 64, False, swapped=True).result.split == ((0,), (1, 2))


def test_a_pinned_swapped_grid_reducing_by_rows_runs() -> None:
    """The row form on sim16 (a [64 x 1024] x [1024 x 200] pinned swapped on 1 x 4 x 4: [256 x 50]
    weight blocks, not 56): the partials staged by rows, the numbers pass, estimate = emulation."""
    source = PINNED.format(grid="[1, 4, 4]", extra=", orientation = swapped").replace("256", "200")
    planned = api.parse(source)
    PlanOpsPass(target="sim16", finalists=1).apply(api.context(), planned)
    gemm = next(o for o in planned.walk() if isinstance(o, plan.GemmOp))
    assert gemm.rhs.type.layout.block == (256, 50)
    reduced = next(o for o in planned.walk() if isinstance(o, plan.ReduceOp))
    assert reduced.result.type.layout.split == ((0, 2), (1,))
    compiled = api.compile(source, "sim16", options={"finalists": 1})
    report = api.run(compiled)
    assert report.passed, [(c.name, c.result.reason) for c in report.checks if not c.result.passed]
    assert report.total_cycles == compiled.package.metrics["estimated_cycles"]
