"""Exact GeLU (`approximate = "none"`) runs its own kernel; the reference and the emulator agree,
and differ from the tanh form by more than the fp32 tolerance, so a mix-up cannot pass."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ipu
from ipu.abi.kernels import erf
from ipu.dialects.graph import gelu, gelu_exact

MODEL = """
func.func @main(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {{
  %g = graph.gelu %x {attr}: tensor<64x256xf32> -> tensor<64x256xf32>
  func.return %g : tensor<64x256xf32>
}}
"""


def test_emulator_erf_matches_the_c_library() -> None:
    x = np.linspace(-6, 6, 20001)
    assert np.abs(erf(x) - np.array([math.erf(v) for v in x])).max() < 2e-7


@pytest.mark.parametrize("exact", [True, False])
def test_exact_and_tanh_gelu_each_match_their_reference(exact: bool) -> None:
    c = ipu.compile(MODEL.format(attr='{approximate = "none"} ' if exact else ""), target="sim16")
    x = {"x": (np.random.default_rng(1).standard_normal((64, 256)) * 3).astype(np.float32)}
    r = ipu.run(c, x)
    assert r.passed
    y = r.outputs["output0"]
    want, other = (gelu_exact, gelu) if exact else (gelu, gelu_exact)
    np.testing.assert_allclose(y, want(x["x"]), atol=1e-6, rtol=1e-6)
    assert np.abs(y - other(x["x"])).max() > 1e-4  # the two forms differ visibly


def test_bad_approximate_is_rejected() -> None:
    with pytest.raises(ipu.ApiError, match='approximate must be "tanh" or "none"'):
        ipu.compile(MODEL.format(attr='{approximate = "fast"} '), target="sim16")
