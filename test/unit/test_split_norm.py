"""A norm over rows split in column blocks across tiles: each tile's block statistics
(`norm_stats`; `norm_stats_valid` over its real columns where the last blocks are padded),
gathered over the row's tiles, combined exactly and applied (`layer_norm_apply`,
`rms_norm_apply`, their `_padded` forms); chosen by the planner where it beats moving whole rows
to tiles."""

from __future__ import annotations

import numpy as np
import pytest

import ipu
from ipu.abi.isa import float_bits
from ipu.abi.kernels import KERNELS
from ipu.abi.package import kernels_called
from ipu.dialects import plan
from ipu.dialects.layout import Layout
from ipu.transforms.plan.families.rowwise import column_block_layouts


def _split_run(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray | None, parts: int, eps: float, padded: bool = False
) -> np.ndarray:
    """x [rows, n] normalised as `parts` tiles of column blocks would: each block's statistics,
    all of them gathered [parts, rows, 2], each block normalised. `padded`: blocks of
    ceil(n / parts), the last ones padded with NaN (padding holds anything), through
    `norm_stats_valid` given each block's count of real columns and the `_padded` apply given the
    row's width; the real columns of the result."""
    rows, n = x.shape
    cols = -(-n // parts)
    pad = cols * parts - n
    nan = np.full(pad, np.nan, np.float32)
    x = np.concatenate([x, np.tile(nan, (rows, 1))], axis=1)
    gamma = np.concatenate([gamma, nan])
    beta = None if beta is None else np.concatenate([beta, nan])
    blocks = [x[:, p * cols : (p + 1) * cols] for p in range(parts)]
    counts = np.clip(n - cols * np.arange(parts), 0, cols)
    stats = [
        KERNELS["norm_stats_valid"].run({"rows": rows, "cols": cols}, 1, [b.reshape(1, -1), np.array([[c, 0.0]])], None)
        if padded
        else KERNELS["norm_stats"].run({"rows": rows, "cols": cols}, 1, [b.reshape(1, -1)], None)
        for b, c in zip(blocks, counts, strict=True)
    ]
    gathered = np.stack([s.reshape(rows, 2) for s in stats]).reshape(1, -1)
    kernel = KERNELS[("layer_norm_apply" if beta is not None else "rms_norm_apply") + ("_padded" if padded else "")]
    p = {"rows": rows, "cols": cols, "parts": parts, "eps_bits": float_bits(eps), **({"columns": n} if padded else {})}
    assert not kernel.invalid(p)
    out = []
    for i, b in enumerate(blocks):
        ins = [b.reshape(1, -1), gathered, gamma[i * cols : (i + 1) * cols].reshape(1, -1)]
        if beta is not None:
            ins.append(beta[i * cols : (i + 1) * cols].reshape(1, -1))
        out.append(np.asarray(kernel.run(p, 1, ins, None)).reshape(rows, cols))
    return np.concatenate(out, axis=1)[:, :n]


def _whole_row(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray | None, eps: float) -> np.ndarray:
    x64 = x.astype(np.float64)
    if beta is not None:
        return (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + eps) * gamma + beta
    return x64 / np.sqrt((x64 * x64).mean(1, keepdims=True) + eps) * gamma


@pytest.mark.parametrize(("n", "parts"), [(90, 8), (60, 8), (10, 6), (96, 8)])
@pytest.mark.parametrize("shift", [True, False])
def test_padded_blocks_count_their_real_columns_only(n: int, parts: int, shift: bool) -> None:
    """90 columns in 8 blocks of 12 (the last holds 6), 60 in 8 of 8 (the last 4), 10 in 6 of 2
    (the last none at all), 96 in 8 whole ones: the statistics weigh each block by its own
    count, the NaN padding is never read, and the result is the whole row's norm."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((5, n)) + 40.0).astype(np.float32)
    gamma = rng.standard_normal(n).astype(np.float32)
    beta = rng.standard_normal(n).astype(np.float32) if shift else None
    got = _split_run(x, gamma, beta, parts, eps=1e-5, padded=True)
    np.testing.assert_allclose(got, _whole_row(x, gamma, beta, 1e-5), rtol=2e-4, atol=2e-4)


def test_the_padded_apply_refuses_more_columns_than_its_blocks() -> None:
    p = {"rows": 2, "cols": 8, "parts": 4, "eps_bits": float_bits(1e-5), "columns": 33}
    assert KERNELS["layer_norm_apply_padded"].invalid(p)
    assert not KERNELS["layer_norm_apply_padded"].invalid({**p, "columns": 32})


@pytest.mark.parametrize("offset", [0.0, 300.0])
@pytest.mark.parametrize("shift", [True, False])
def test_combined_statistics_match_the_whole_row(offset: float, shift: bool) -> None:
    """Chan's combination of the blocks' (sum, squared deviations) is the whole row's variance,
    also when the mean dwarfs the spread (where E[x^2] - mean^2 in fp32 would lose it)."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((6, 96)) + offset).astype(np.float32)
    gamma = rng.standard_normal(96).astype(np.float32)
    beta = rng.standard_normal(96).astype(np.float32) if shift else None
    got = _split_run(x, gamma, beta, parts=8, eps=1e-5)
    np.testing.assert_allclose(got, _whole_row(x, gamma, beta, 1e-5), rtol=2e-4, atol=2e-4)


def test_split_norm_parts() -> None:
    whole = Layout((8, 2048), (16, 1), ((0,), ()))
    assert plan.split_norm_parts(whole) == 1
    assert plan.split_norm_parts(Layout((8, 2048), (1, 16), ((0,), (1,)))) == 16
    padded = Layout((8, 2040), (1, 16), ((0,), (1,)))  # blocks of 128, the last holding 120
    assert plan.split_norm_parts(padded) == 16 and plan.split_norm_padded(padded)
    assert not plan.split_norm_padded(Layout((8, 2048), (1, 16), ((0,), (1,))))
    assert plan.split_norm_parts(Layout((8, 2048), (1, 16), ((0,), ()), partial=1)) == 0
    assert plan.split_norm_parts(Layout((8, 8192), (1, 128), ((0,), (1,)))) == 0  # past MAX_NORM_PARTS
    own, gathered = plan.norm_stats_layouts(Layout((8, 2048), (2, 8), ((0,), (1,))))
    assert (own.block, gathered.block) == ((1, 4, 2), (8, 4, 2))
    assert all(plan.split_norm_parts(c) > 1 for c in column_block_layouts((128, 768), 1472))


NORM = """func.func @main(%x: tensor<8x256xf16>) -> tensor<8x2048xf16> {{
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<256x2048xf16>
  %g = graph.parameter "g" #graph.gaussian<seed = 2, std = 0.5> : tensor<2048xf16>
  %b = graph.parameter "b" #graph.gaussian<seed = 3, std = 0.5> : tensor<2048xf16>
  %h = graph.matmul %x, %w : (tensor<8x256xf16>, tensor<256x2048xf16>) -> tensor<8x2048xf16>
  %n = graph.{kind} %h, %g{beta} : ({types}) -> tensor<8x2048xf16>
  func.return %n : tensor<8x2048xf16>
}}"""


@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
def test_a_split_norm_runs_and_matches_on_poisoned_memory(kind: str) -> None:
    shift = kind == "layer_norm"
    types = "tensor<8x2048xf16>, tensor<2048xf16>" + (", tensor<2048xf16>" if shift else "")
    c = ipu.compile(NORM.format(kind=kind, beta=", %b" if shift else "", types=types), target="sim16")
    apply = "layer_norm_apply" if shift else "rms_norm_apply"
    assert {"norm_stats", apply} <= kernels_called(c.package), "8 rows of 2048: the norm runs on column blocks"
    report = ipu.run(c, poison=True)
    assert report.passed, [(k.name, k.result.reason) for k in report.checks if not k.result.passed]
    assert report.total_cycles == c.package.metrics["estimated_cycles"]


RANK3 = """func.func @main(%x: tensor<2x2x4096xf16>, %y: tensor<2x2x4096xf16>) -> tensor<2x2x4096xf16> {
  %g = graph.parameter "g" #graph.gaussian<seed = 2, std = 0.5> : tensor<4096xf16>
  %a = graph.add %x, %y : (tensor<2x2x4096xf16>, tensor<2x2x4096xf16>) -> tensor<2x2x4096xf16>
  %n = graph.rms_norm %a, %g : (tensor<2x2x4096xf16>, tensor<4096xf16>) -> tensor<2x2x4096xf16>
  func.return %n : tensor<2x2x4096xf16>
}"""


def test_a_rank_3_norm_in_its_inputs_column_blocks() -> None:
    """[2, 2, 4096] over 16 tiles: the add leaves each row in 4 column blocks, where the norm
    runs (its statistics a [4, 2, 2, 2] tensor, rows as the input's)."""
    c = ipu.compile(RANK3, target="sim16")
    assert {"norm_stats", "rms_norm_apply"} <= kernels_called(c.package)
    report = ipu.run(c, poison=True)
    assert report.passed, [(k.name, k.result.reason) for k in report.checks if not k.result.passed]
    assert report.total_cycles == c.package.metrics["estimated_cycles"]


def test_padded_row_groups_gather_whole_blocks_and_read_nothing_unwritten() -> None:
    """100 rows in groups of 13 on sim64: the last group's padding rows' statistics are computed
    (norm_stats writes its whole block) and gathered as whole blocks, so a checked run on
    poisoned memory reads nothing unwritten and zeroes no statistics."""
    text = NORM.format(kind="layer_norm", beta=", %b", types="tensor<8x2048xf16>, tensor<2048xf16>, tensor<2048xf16>")
    c = ipu.compile(text.replace("tensor<8x", "tensor<100x"), target="sim64")
    assert {"norm_stats", "layer_norm_apply"} <= kernels_called(c.package)
    report = ipu.run(c, poison=True, checked=True)
    assert report.passed, [(k.name, k.result.reason) for k in report.checks if not k.result.passed]


def test_a_padded_split_norm_runs_checked_on_poisoned_memory() -> None:
    """8 rows of 2040 on sim16: blocks of 128, the last holding 120 real columns; the norm runs
    where the matmul left its result, each tile counting its own real columns (a weight of the
    counts), and a checked run on poisoned memory reads nothing unwritten and matches."""
    text = NORM.format(kind="layer_norm", beta=", %b", types="tensor<8x2048xf16>, tensor<2048xf16>, tensor<2048xf16>")
    c = ipu.compile(text.replace("2048", "2040"), target="sim16")
    assert {"norm_stats_valid", "layer_norm_apply_padded"} <= kernels_called(c.package)
    report = ipu.run(c, poison=True, checked=True)
    assert report.passed, [(k.name, k.result.reason) for k in report.checks if not k.result.passed]
    assert report.total_cycles == c.package.metrics["estimated_cycles"]
