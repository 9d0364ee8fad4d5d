"""Half partials (`partials=f16`): the AMP kernels that sum in half precision, the reduce of half
partials, their cost on the plans, and their looser, announced check.

Kernel semantics are held to sums worked by hand: the running sum is rounded to half after every
16-deep input group, so increments below half an ulp of it are lost where fp32 partials keep them."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES
from test_conv import conv_module

from ipu import api
from ipu.abi.kernels import KERNELS, half_partials_matmul
from ipu.abi.package import kernels_called
from ipu.abi.package_io import write_package
from ipu.dialects.graph import ConvGeometry
from ipu.golden.compare import HALF_PARTIALS_SCALE_ULPS, SCALE_ULPS, compare_at
from ipu.tools.ipu_run import cli as run_cli

MLP = str(EXAMPLES / "mlp_small.mlir")


def _lost_increments(k: int) -> tuple[np.ndarray, np.ndarray]:
    """a = ones [1, k], b = one column: the first 16 rows sum to 2048, each later 16-deep group to 1.
    At 2048 half's spacing is 2, so 2048 + 1 rounds (to even) back to 2048 every time."""
    a = np.ones((1, 1, k), np.float32)
    b = np.full((1, k, 1), 1 / 16, np.float32)
    b[0, :16, 0] = 128.0
    return a, b


def test_half_partials_round_the_running_sum_per_input_group() -> None:
    a, b = _lost_increments(48)
    assert float(half_partials_matmul(a, b)[0, 0, 0]) == 2048.0  # two increments of 1 lost
    assert float(np.float16((a @ b)[0, 0, 0])) == 2050.0  # fp32 partials keep them (2050 is a half)
    p = {"m": 1, "k": 48, "n": 1}
    assert float(KERNELS["amp_matmul_half"].run(p, 1, [a.reshape(1, -1), b.reshape(1, -1)], None)[0, 0, 0]) == 2048.0
    assert float(KERNELS["amp_matmul"].run(p, 1, [a.reshape(1, -1), b.reshape(1, -1)], None)[0, 0, 0]) == 2050.0
    # within one group the products are summed exactly: 16 x 1/16 on top of 0 is exactly 1
    one = np.ones((1, 1, 16), np.float32), np.full((1, 16, 1), 1 / 16, np.float32)
    assert float(half_partials_matmul(*one)[0, 0, 0]) == 1.0


def test_half_partials_conv_rounds_per_group_and_position() -> None:
    # a 1x2 kernel over 1 output pixel, 32 channels: position 0's first group brings 2048, every
    # later (group, position) pass brings 1 (16 x 1/16): 3 increments lost in half, kept in fp32
    p = {"n": 1, "c": 32, "oh": 1, "ow": 1, "o": 1, "kh": 1, "kw": 2, "window": 1 | 1 << 8 | 1 << 16 | 1 << 24}
    x = np.ones((1, 1 * 1 * 2 * 32), np.float32)
    w = np.full((2, 32, 1), 1 / 16, np.float32)
    w[0, :16, 0] = 128.0
    ins = [x, w.reshape(1, -1)]
    assert float(KERNELS["amp_conv_half"].run(p, 1, ins, None)[0, 0]) == 2048.0
    assert float(KERNELS["amp_conv"].run(p, 1, ins, None)[0, 0]) == 2051.0


def test_reduce_half_sums_in_float() -> None:
    # ReduceAdd<half, half> accumulates in float: 2048 + 1 + 1 = 2050 (a half), not 2048
    parts = np.array([[2048.0, 1.0, 1.0]], np.float32)
    assert float(KERNELS["reduce_half"].run({"parts": 3, "elements": 1}, 1, [parts], None)[0, 0]) == 2050.0


def test_the_scale_floor_widens_for_half_partials() -> None:
    ref = np.array([100.0, 0.0], np.float32)
    eps = float(np.finfo(np.float16).eps)
    obs = ref + np.array([0, 5 * eps * 100], np.float32)  # 5 ulps of the scale off, past 0.03
    floor = np.dtype(np.float16)
    assert SCALE_ULPS < 5 < HALF_PARTIALS_SCALE_ULPS
    assert not compare_at(obs, ref, 2, floor=floor).passed
    assert compare_at(obs, ref, 2, floor=floor, half_partials=True).passed


GEO = ConvGeometry(1, 8, 8, 64, 3, 3, 32, (1, 1), (1, 1), (1, 1, 1, 1), 1)


@pytest.mark.parametrize("partials", ["f32", "f16"])
def test_conv_with_split_channels_runs_in_half(partials: str) -> None:
    """A 3x3 conv of 64 channels split over 2 input-channel blocks (partial sums reduced), f16."""
    text = conv_module(GEO, "f16", (1, 2, 2, 2)).replace(
        "grid = [1, 2, 2, 2]>", f"grid = [1, 2, 2, 2], partials = {partials}>"
    )
    compiled = api.compile(text, "sim16")
    called = kernels_called(compiled.package)
    half = {"amp_conv_half", "reduce_half"}
    assert (called & (half | {"amp_conv", "reduce_sum"})) == (half if partials == "f16" else {"amp_conv", "reduce_sum"})
    assert api.half_partials(compiled.package) == (partials == "f16")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 8, 64)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 64, 32)) / 24).astype(np.float32)
    report = api.run(compiled, {"x": x, "w": w})
    assert report.passed, [(c.name, c.result.reason) for c in report.checks if not c.result.passed]


def test_half_partials_cost_less_and_are_announced() -> None:
    runs = {}
    for partials in ("f32", "f16"):
        c = api.compile(MLP, "sim16", partials=partials, options={"finalists": 1})
        r = api.run(c)
        assert r.passed
        runs[partials] = (r.total_cycles, c.package.metrics["estimated_cycles"], kernels_called(c.package))
    assert runs["f16"][0] < runs["f32"][0]
    assert runs["f16"][0] == runs["f16"][1]  # the plan's estimate is what the emulator counts
    assert {"amp_matmul_half", "reduce_half"} <= runs["f16"][2]
    assert not runs["f32"][2] & {"amp_matmul_half", "amp_conv_half", "reduce_half"}
    out = CliRunner().invoke(run_cli, [MLP, "--target", "sim16", "--partials", "f16"])
    assert out.exit_code == 0, out.output
    assert "numericalTest=PASS partials=f16 scaleUlps=8" in out.output


def test_partials_option_errors() -> None:
    with pytest.raises(api.ApiError, match="partials must be 'f32' or 'f16', got 'f8'"):
        api.compile(MLP, "sim16", partials="f8")
    out = CliRunner().invoke(run_cli, [MLP, "--partials", "f8"])
    assert out.exit_code != 0 and "'f8' is not one of 'f32', 'f16'" in out.output


def test_partials_apply_when_compiling(tmp_path) -> None:
    pkg = tmp_path / "m.ipuexe"
    write_package(api.compile(MLP, "sim16").package, str(pkg))
    out = CliRunner().invoke(run_cli, [str(pkg), "--partials", "f16"])
    assert out.exit_code != 0 and "--precision and --partials apply when compiling" in out.output
    out = CliRunner().invoke(run_cli, [MLP, "--system", "pod2", "--partials", "f16"])
    assert out.exit_code != 0 and "--partials: not available for a system run yet" in out.output
