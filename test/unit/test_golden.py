"""Golden reference evaluator and sampled comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu.dialects.graph import GaussianAttr
from ipu.golden.compare import compare, sample_indices
from ipu.golden.evaluator import GoldenError, evaluate, load_module, main_function, make_inputs

MLP = """
func.func @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.2> : tensor<16x32xf16>
  %b1 = graph.parameter "b1" #graph.gaussian<seed = 2, std = 0.2> : tensor<32xf16>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 3, std = 0.2> : tensor<32x16xf16>
  %b2 = graph.parameter "b2" #graph.gaussian<seed = 4, std = 0.2> : tensor<16xf16>
  %h = graph.matmul %x, %w1 : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>
  %hb = graph.add %h, %b1 : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
  %g = graph.gelu %hb : tensor<8x32xf16> -> tensor<8x32xf16>
  %y = graph.matmul %g, %w2 : (tensor<8x32xf16>, tensor<32x16xf16>) -> tensor<8x16xf16>
  %yb = graph.add %y, %b2 : (tensor<8x16xf16>, tensor<16xf16>) -> tensor<8x16xf16>
  func.return %yb : tensor<8x16xf16>
}
"""


def gaussian(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return GaussianAttr(seed, 0.2).materialize(shape, np.float16)


def ref_gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.float32(math.sqrt(2 / math.pi)) * (x + np.float32(0.044715) * x**3)))


def run(text: str, **inputs: np.ndarray):
    return evaluate(main_function(load_module(text)), inputs)


def test_mlp_matches_numpy() -> None:
    f = main_function(load_module(MLP))
    inputs = make_inputs(f, seed=7)
    assert set(inputs) == {"x"}
    assert inputs["x"].dtype == np.float16
    assert inputs["x"].shape == (8, 16)
    res = evaluate(f, inputs)

    f32 = np.float32
    w1, b1 = gaussian(1, (16, 32)), gaussian(2, (32,))
    w2, b2 = gaussian(3, (32, 16)), gaussian(4, (16,))
    h = np.matmul(inputs["x"].astype(f32), w1.astype(f32)).astype(np.float16)
    hb = (h.astype(f32) + b1.astype(f32)).astype(np.float16)
    gl = ref_gelu(hb.astype(f32)).astype(np.float16)
    y = np.matmul(gl.astype(f32), w2.astype(f32)).astype(np.float16)
    yb = (y.astype(f32) + b2.astype(f32)).astype(np.float16)

    assert len(res.outputs) == 1
    assert res.outputs[0].dtype == np.float16
    np.testing.assert_array_equal(res.outputs[0], yb)
    assert sorted(res.values) == list(range(9))  # 4 parameters + 5 computations
    np.testing.assert_array_equal(res.values[0], w1)
    np.testing.assert_array_equal(res.values[6], gl)
    assert compare(res.outputs[0], yb).passed


def test_broadcast_add_rank1_bias_and_dense_parameter() -> None:
    text = """
    func.func @main(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
      %b = graph.parameter "b" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : tensor<4xf32>
      %s = graph.add %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
      %r = graph.relu %s : tensor<3x4xf32> -> tensor<3x4xf32>
      func.return %r : tensor<3x4xf32>
    }
    """
    a = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    res = run(text, a=a)
    np.testing.assert_array_equal(res.outputs[0], np.maximum(a + np.array([1, 2, 3, 4], np.float32), 0))


def test_transpose_reshape_and_matmul_flags() -> None:
    text = """
    func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<4x6xf32>) -> tensor<4x6xf32> {
      %t = graph.transpose %a {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
      %r = graph.reshape %t : tensor<4x2x3xf32> -> tensor<4x6xf32>
      %m = graph.matmul %r, %b {transpose_rhs} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x4xf32>
      %mt = graph.matmul %r, %m {transpose_lhs} : (tensor<4x6xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
      func.return %r : tensor<4x6xf32>
    }
    """
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4), dtype=np.float32)
    b = rng.standard_normal((4, 6), dtype=np.float32)
    res = run(text, a=a, b=b)
    r = np.transpose(a, (2, 0, 1)).reshape(4, 6)
    np.testing.assert_array_equal(res.values[0], np.transpose(a, (2, 0, 1)))
    np.testing.assert_array_equal(res.outputs[0], r)
    np.testing.assert_allclose(res.values[2], r @ b.T, rtol=1e-6)
    np.testing.assert_allclose(res.values[3], r.T @ (r @ b.T), rtol=1e-5)


def test_per_value_f16_rounding() -> None:
    text = """
    func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
      %one = graph.parameter "one" dense<1.0> : tensor<4xf16> : tensor<4xf16>
      %s = graph.add %x, %one : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
      %d = graph.sub %s, %one : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
      func.return %d : tensor<4xf16>
    }
    """
    x = np.full(4, 0.0002, dtype=np.float16)
    res = run(text, x=x)
    # Fused f32 path would give x back; rounding 1 + x to f16 first loses it.
    assert float(x[0]) != 0.0
    np.testing.assert_array_equal(res.values[1], np.ones(4, np.float16))
    np.testing.assert_array_equal(res.outputs[0], np.zeros(4, np.float16))


def test_sample_indices() -> None:
    np.testing.assert_array_equal(sample_indices(5), np.arange(5))
    idx = sample_indices(10_000, limit=256)
    assert len(idx) == 256
    assert idx[0] == 0
    assert idx[-1] == 9_999
    assert np.all(np.diff(idx) > 0)
    assert len(sample_indices(0)) == 0


def test_compare_detects_perturbation_nan_and_shape() -> None:
    ref = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float16)
    ok = compare(ref.copy(), ref)
    assert ok.passed
    assert ok.samples == 256
    assert ok.max_abs_error == 0.0

    bad = ref.copy()
    idx = sample_indices(bad.size)[10]
    bad.reshape(-1)[idx] += np.float16(1.0)
    res = compare(bad, ref)
    assert not res.passed
    assert res.max_abs_error >= 0.9
    assert res.reason

    nan = ref.copy()
    nan.reshape(-1)[0] = np.nan
    assert not compare(nan, ref).passed

    shape = compare(ref[:32], ref)
    assert not shape.passed
    assert "shape" in shape.reason


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({}, "missing"),
        ({"x": np.zeros((8, 16)), "y": np.zeros(1)}, "unexpected"),
        ({"x": np.zeros((16, 8))}, "shape"),
    ],
)
def test_input_errors(inputs: dict[str, np.ndarray], message: str) -> None:
    f = main_function(load_module(MLP))
    with pytest.raises(GoldenError, match=message):
        evaluate(f, inputs)


def test_unnamed_arguments_and_unknown_op() -> None:
    from xdsl.dialects.arith import ConstantOp
    from xdsl.dialects.builtin import FloatAttr, f32

    f = main_function(load_module(MLP))
    f.args[0].name_hint = None
    assert set(make_inputs(f, 0)) == {"arg0"}
    f.body.block.insert_op_before(ConstantOp(FloatAttr(1.0, f32)), f.body.block.first_op)
    with pytest.raises(GoldenError, match="does not support"):
        evaluate(f, make_inputs(f, 0))
