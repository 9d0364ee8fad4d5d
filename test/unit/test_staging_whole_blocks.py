"""Padding that is and is not read as data (`padding_reads`): a staging buffer of partial sums
is not zeroed when nothing reads the sum's padding, and host-written blocks get zeros where a
kernel reads their padding. Each model is run on memory whose every byte starts as NaN bits, so
no padding left unzeroed can leak into real elements."""

from __future__ import annotations

import pytest

import ipu
import ipu.transforms.tilemap.map_tiles as map_tiles
from ipu.abi.isa import Opcode, unpack
from ipu.abi.kernels import KERNEL_NAMES

MATMUL = """func.func @main(%x: tensor<{m}x{k}xf16>, %w: tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16> {{
  %y = graph.matmul %x, %w : (tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16>
  %g = graph.gelu %y : tensor<{m}x{n}xf16> -> tensor<{m}x{n}xf16>
  func.return %g : tensor<{m}x{n}xf16>
}}"""

# a sum that a second matmul contracts
CHAIN = """func.func @main(%x: tensor<{m}x{k}xf16>, %w: tensor<{k}x{n}xf16>, %v: tensor<{n}x24xf16>)
    -> tensor<{m}x24xf16> {{
  %y = graph.matmul %x, %w : (tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16>
  %z = graph.matmul %y, %v : (tensor<{m}x{n}xf16>, tensor<{n}x24xf16>) -> tensor<{m}x24xf16>
  func.return %z : tensor<{m}x24xf16>
}}"""


def _poisoned_run(c: ipu.Compiled) -> bool:
    """Emulate with every byte of tile memory 0xFF (NaN in f16 and f32) at the start."""
    return bool(ipu.run(c, poison=True).passed)


@pytest.fixture
def whole(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The (source, destination) layouts of every padded staging move made of whole blocks."""
    seen: list[tuple] = []
    real = map_tiles.whole_blocks

    def spy(src, dst):
        got = real(src, dst)
        if got is not None and (src.has_padding or dst.has_padding):
            seen.append((src, dst))
        return got

    monkeypatch.setattr(map_tiles, "whole_blocks", spy)
    return seen


@pytest.mark.parametrize("mkn", [(64, 512, 100), (32, 1024, 90), (16, 4096, 50)])
def test_padded_partials_move_whole_and_stay_right(whole: list[tuple], mkn: tuple[int, int, int]) -> None:
    m, k, n = mkn
    c = ipu.compile(MATMUL.format(m=m, k=k, n=n), target="sim16")
    assert whole, "the K-split sum's staging should move whole padded blocks"
    for p in c.package.programs:
        words, _ = unpack(p.code)
        calls = words[words[:, 0] == Opcode.CALL, 1]
        assert KERNEL_NAMES.index("zero") not in calls, "no staging buffer is zeroed"
    assert _poisoned_run(c)


def test_a_sum_feeding_a_matmul_is_right_on_poisoned_memory() -> None:
    c = ipu.compile(CHAIN.format(m=32, k=1024, n=90), target="sim16")
    assert _poisoned_run(c)


# host-written blocks whose padding the AMP contracts: a weight, and an input behind an exp
HOST_PADDED = {
    "weight": """func.func @main(%x: tensor<32x1000xf16>) -> tensor<32x90xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.05> : tensor<1000x90xf16>
  %a = graph.gelu %x : tensor<32x1000xf16> -> tensor<32x1000xf16>
  %y = graph.matmul %a, %w : (tensor<32x1000xf16>, tensor<1000x90xf16>) -> tensor<32x90xf16>
  func.return %y : tensor<32x90xf16>
}""",
    "inputs": """func.func @main(%x: tensor<32x1000xf16>, %w: tensor<1000x90xf16>) -> tensor<32x90xf16> {
  %a = graph.exp %x : tensor<32x1000xf16> -> tensor<32x1000xf16>
  %y = graph.matmul %a, %w : (tensor<32x1000xf16>, tensor<1000x90xf16>) -> tensor<32x90xf16>
  func.return %y : tensor<32x90xf16>
}""",
}


@pytest.mark.parametrize("name", sorted(HOST_PADDED))
def test_host_written_padding_is_zeroed(name: str) -> None:
    """The host writes real elements only; a weight's padding is written as zeros, an input is
    moved into a zero-padded block (wrong on poisoned memory before either)."""
    assert _poisoned_run(ipu.compile(HOST_PADDED[name], target="sim16"))


# an odd contraction of halves: the exchange moves whole words, so each lhs row's last word
# carries the source block's first padding element into the AMP's (zeroed) padding
ODD_K = """func.func @main(%x: tensor<64x501xf16>) -> tensor<64x256xf16> {{
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<501x256xf16>
  %g = graph.gelu %x : tensor<64x501xf16> -> tensor<64x501xf16>
  %y = graph.matmul %g, %w {pin} : (tensor<64x501xf16>, tensor<501x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}}"""
ODD_K_PINS = {
    "chosen": "",
    "gemm 2x2x4": "{plan.choice = #plan.choice<gemm, grid = [2, 2, 4]>}",
    "gemm 2x8x1": "{plan.choice = #plan.choice<gemm, grid = [2, 8, 1]>}",
    "serial 2x8": "{plan.choice = #plan.choice<gemm_serial, grid = [2, 8], k_steps = 2>}",
    "serial split 2x4x2": "{plan.choice = #plan.choice<gemm_serial, grid = [2, 4, 2], k_steps = 2>}",
}


@pytest.mark.parametrize("name", sorted(ODD_K_PINS))
def test_an_odd_half_contraction_is_right_on_poisoned_memory(name: str) -> None:
    """The padding element a move carries along is the input's, computed through the gelu: the
    host writes the input's blocks whole, padding as zeros (no extra move), so it is gelu(0)."""
    c = ipu.compile(ODD_K.format(pin=ODD_K_PINS[name]), target="sim16")
    assert _poisoned_run(c)
    x = next(b for b in c.package.inputs if b.name == "x")
    assert x.device_shape()[-1] % 2 == 0 and x.shape == (64, 501), "the host writes x's padded blocks whole"
