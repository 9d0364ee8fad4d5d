"""Golden reference evaluator and sampled comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu.dialects.graph import GaussianAttr
from ipu.dialects.value_names import named_ops, value_names
from ipu.golden.compare import compare, sample_indices, scale_eps
from ipu.golden.evaluator import GoldenError, evaluate, flops, load_module, main_function, make_inputs

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
    assert sorted(res.values) == ["b1", "b2", "g", "h", "hb", "w1", "w2", "y", "yb"]  # 4 parameters + 5 computations
    np.testing.assert_array_equal(res.values["w1"], w1)
    np.testing.assert_array_equal(res.values["g"], gl)
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
    np.testing.assert_array_equal(res.values["t"], np.transpose(a, (2, 0, 1)))
    np.testing.assert_array_equal(res.outputs[0], r)
    np.testing.assert_allclose(res.values["m"], r @ b.T, rtol=1e-6)
    np.testing.assert_allclose(res.values["mt"], r.T @ (r @ b.T), rtol=1e-5)


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
    np.testing.assert_array_equal(res.values["s"], np.ones(4, np.float16))
    np.testing.assert_array_equal(res.outputs[0], np.zeros(4, np.float16))


def test_sample_indices() -> None:
    np.testing.assert_array_equal(sample_indices(5), np.arange(5))
    idx = sample_indices(10_000, limit=256)
    assert len(idx) == 256
    assert idx[0] == 0
    assert idx[-1] == 9_999
    assert np.all(np.diff(idx) > 0)
    assert len(sample_indices(0)) == 0


def test_half_precision_error_floor_follows_the_tensors_scale() -> None:
    """A half-precision value's elements may be off by four f16 ulps of the tensor's largest
    magnitude (186 here: 0.73), not more; float32 and explicit tolerances get no such floor."""
    ref = np.array([186.0, 0.3, -0.9, 40.0])
    near, far = ref + np.array([0.0, 0.07, -0.6, 0.0]), ref + np.array([0.0, 0.8, 0.0, 0.0])
    eps = scale_eps(np.dtype(np.float16))
    assert eps == 4 * float(np.finfo(np.float16).eps)
    assert not compare(near, ref, atol=0.03, rtol=0.03).passed
    assert compare(near, ref, atol=0.03, rtol=0.03, scale_eps=eps).passed
    assert not compare(far, ref, atol=0.03, rtol=0.03, scale_eps=eps).passed
    assert scale_eps(np.dtype(np.float32)) == 0.0 and scale_eps(np.dtype(np.float16), atol=0.01) == 0.0


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


# --- extended graph ops -------------------------------------------------------------------------

F32 = np.float32


def rng_array(seed: int, shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32).astype(dtype)


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x.astype(F32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_elementwise_cast_softmax_reduce() -> None:
    text = """
    func.func @main(%x: tensor<4x6xf16>) -> tensor<4x6xf32> {
      %e = graph.exp %x : tensor<4x6xf16> -> tensor<4x6xf16>
      %t = graph.tanh %x : tensor<4x6xf16> -> tensor<4x6xf16>
      %c = graph.cast %x : tensor<4x6xf16> -> tensor<4x6xf32>
      %s = graph.softmax %x : tensor<4x6xf16> -> tensor<4x6xf16>
      %s0 = graph.softmax %x {axis = 0 : i64} : tensor<4x6xf16> -> tensor<4x6xf16>
      %rs = graph.reduce %x {kind = "sum", axis = 1 : i64} : tensor<4x6xf16> -> tensor<4xf16>
      %rm = graph.reduce %x {kind = "max", axis = 0 : i64} : tensor<4x6xf16> -> tensor<6xf16>
      %ra = graph.reduce %x {kind = "mean", axis = -1 : i64} : tensor<4x6xf16> -> tensor<4xf16>
      %cc = graph.cast %c : tensor<4x6xf32> -> tensor<4x6xf16>
      func.return %c : tensor<4x6xf32>
    }
    """
    x = rng_array(3, (4, 6), np.float16)
    xf = x.astype(F32)
    res = run(text, x=x)
    f16 = np.float16
    assert res.values["e"].dtype == f16
    np.testing.assert_array_equal(res.values["e"], np.exp(xf).astype(f16))
    np.testing.assert_array_equal(res.values["t"], np.tanh(xf).astype(f16))
    assert res.values["c"].dtype == F32
    np.testing.assert_array_equal(res.values["c"], xf)
    np.testing.assert_array_equal(res.outputs[0], xf)
    np.testing.assert_allclose(res.values["s"].astype(F32), np_softmax(xf, -1).astype(f16).astype(F32), atol=1e-3)
    np.testing.assert_allclose(res.values["s"].astype(F32).sum(axis=1), 1.0, atol=5e-3)
    np.testing.assert_allclose(res.values["s0"].astype(F32), np_softmax(xf, 0).astype(f16).astype(F32), atol=1e-3)
    assert res.values["rs"].shape == (4,)
    np.testing.assert_allclose(res.values["rs"].astype(F32), xf.sum(axis=1), rtol=2e-3, atol=2e-3)
    np.testing.assert_array_equal(res.values["rm"], x.max(axis=0))
    np.testing.assert_allclose(res.values["ra"].astype(F32), xf.mean(axis=1), rtol=2e-3, atol=2e-3)
    np.testing.assert_array_equal(res.values["cc"], x)  # f16 -> f32 -> f16 is exact


def test_cast_f32_to_f16_rounds() -> None:
    text = """
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf16> {
      %c = graph.cast %x : tensor<3xf32> -> tensor<3xf16>
      func.return %c : tensor<3xf16>
    }
    """
    x = np.array([1.0001, 65000.0, -0.3333333], dtype=F32)
    out = run(text, x=x).outputs[0]
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, x.astype(np.float16))


def test_softmax_is_numerically_stable() -> None:
    text = """
    func.func @main(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
      %s = graph.softmax %x : tensor<1x3xf32> -> tensor<1x3xf32>
      func.return %s : tensor<1x3xf32>
    }
    """
    out = run(text, x=np.array([[1000.0, 1000.0, 0.0]], F32)).outputs[0]
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [[0.5, 0.5, 0.0]], atol=1e-6)


def test_layer_norm_and_rms_norm() -> None:
    text = """
    func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
      %g = graph.parameter "g" #graph.gaussian<seed = 5, std = 0.2> : tensor<8xf16>
      %b = graph.parameter "b" #graph.gaussian<seed = 6, std = 0.2> : tensor<8xf16>
      %ln = graph.layer_norm %x, %g, %b : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
      %ln2 = graph.layer_norm %x, %g, %b {epsilon = 0.5 : f64}
        : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
      %rn = graph.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
      func.return %rn : tensor<4x8xf16>
    }
    """
    x = rng_array(4, (4, 8), np.float16)
    xf = x.astype(np.float64)
    gm, bt = gaussian(5, (8,)).astype(np.float64), gaussian(6, (8,)).astype(np.float64)
    res = run(text, x=x)

    def ln(eps: float) -> np.ndarray:
        mu = xf.mean(axis=-1, keepdims=True)
        var = xf.var(axis=-1, keepdims=True)
        return (xf - mu) / np.sqrt(var + eps) * gm + bt

    rms = xf / np.sqrt((xf**2).mean(axis=-1, keepdims=True) + 1e-6) * gm
    for got, want in ((res.values["ln"], ln(1e-5)), (res.values["ln2"], ln(0.5)), (res.outputs[0], rms)):
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    assert not np.allclose(res.values["ln"].astype(F32), res.values["ln2"].astype(F32), atol=1e-2)


def test_split_and_merge_heads() -> None:
    text = """
    func.func @main(%x: tensor<5x12xf32>) -> tensor<5x12xf32> {
      %s = graph.split_heads %x {heads = 3 : i64} : tensor<5x12xf32> -> tensor<3x5x4xf32>
      %m = graph.merge_heads %s : tensor<3x5x4xf32> -> tensor<5x12xf32>
      func.return %m : tensor<5x12xf32>
    }
    """
    x = rng_array(5, (5, 12))
    res = run(text, x=x)
    for h in range(3):
        np.testing.assert_array_equal(res.values["s"][h], x[:, 4 * h : 4 * h + 4])
    np.testing.assert_array_equal(res.outputs[0], x)


def np_attention(q, k, v, scale, causal=False, kv_head=lambda h: h):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    out = np.zeros_like(q)
    for h in range(q.shape[0]):
        kh, vh = k[kv_head(h)], v[kv_head(h)]
        s = q[h] @ kh.T * scale
        if causal:
            i, j = np.indices(s.shape)
            s[j > i] = -np.inf
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        out[h] = (p / p.sum(axis=-1, keepdims=True)) @ vh
    return out


ATTN = """
func.func @main(%q: tensor<4x6x8xf16>, %k: tensor<2x6x8xf16>, %v: tensor<2x6x8xf16>) -> tensor<4x6x8xf16> {
  %a = graph.attention %q, %k, %v {form = "FORM"ATTRS}
    : (tensor<4x6x8xf16>, tensor<2x6x8xf16>, tensor<2x6x8xf16>) -> tensor<4x6x8xf16>
  func.return %a : tensor<4x6x8xf16>
}
"""


@pytest.mark.parametrize("form", ["materialized", "streamed"])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_gqa_and_causal(form: str, causal: bool) -> None:
    text = ATTN.replace("FORM", form).replace("ATTRS", ", causal" if causal else "")
    q, k, v = (
        rng_array(10, (4, 6, 8), np.float16),
        rng_array(11, (2, 6, 8), np.float16),
        rng_array(12, (2, 6, 8), np.float16),
    )
    out = run(text, q=q, k=k, v=v).outputs[0]
    assert out.dtype == np.float16
    scale = 1 / math.sqrt(8)
    want = np_attention(q, k, v, scale, causal, kv_head=lambda h: h // 2)  # heads 0,1 -> kv 0; 2,3 -> kv 1
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    # The wrong mapping (h % Hkv) gives a different answer.
    wrong = np_attention(q, k, v, scale, causal, kv_head=lambda h: h % 2)
    assert not np.allclose(out.astype(np.float64), wrong, rtol=2e-3, atol=2e-3)
    if causal:
        # Row 0 sees only key 0, so it equals v[kv] row 0; later keys do not affect earlier rows.
        np.testing.assert_allclose(out[:, 0].astype(F32), np.repeat(v, 2, axis=0)[:, 0].astype(F32), atol=1e-3)
        v2 = v.copy()
        v2[:, -1] += np.float16(5.0)
        out2 = run(text, q=q, k=k, v=v2).outputs[0]
        np.testing.assert_array_equal(out2[:, :-1], out[:, :-1])
        assert not np.array_equal(out2[:, -1], out[:, -1])


def test_attention_explicit_scale() -> None:
    text = ATTN.replace("FORM", "materialized").replace("ATTRS", ", scale = 0.05 : f32")
    q, k, v = (
        rng_array(1, (4, 6, 8), np.float16),
        rng_array(2, (2, 6, 8), np.float16),
        rng_array(3, (2, 6, 8), np.float16),
    )
    out = run(text, q=q, k=k, v=v).outputs[0]
    want = np_attention(q, k, v, 0.05, kv_head=lambda h: h // 2)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=2e-3, atol=2e-3)


REPEAT = """
func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %w0 = graph.parameter "w0" #graph.gaussian<seed = 1, std = 0.3> : tensor<8x8xf16>
  %h0 = graph.matmul %x, %w0 : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  %r = graph.repeat 3 iter(%h = %h0) : (tensor<4x8xf16>) {
    %w = graph.parameter "w" #graph.gaussian<seed = 2, std = 0.3> : tensor<8x8xf16>
    %m = graph.matmul %h, %w : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
    %t = graph.tanh %m : tensor<4x8xf16> -> tensor<4x8xf16>
    %y = graph.add %t, %h : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
    graph.yield %y : tensor<4x8xf16>
  }
  %o = graph.gelu %r : tensor<4x8xf16> -> tensor<4x8xf16>
  func.return %o : tensor<4x8xf16>
}
"""


def test_repeat_applies_body_count_times_and_indexes_body_ops() -> None:
    f = main_function(load_module(REPEAT))
    x = rng_array(20, (4, 8), np.float16)
    res = evaluate(f, {"x": x})

    f16 = np.float16
    w0, w = (GaussianAttr(s, 0.3).materialize((8, 8), f16) for s in (1, 2))
    h0 = (x.astype(F32) @ w0.astype(F32)).astype(f16)
    h = h0
    trace = []
    for _ in range(3):
        m = (h.astype(F32) @ w.astype(F32)).astype(f16)
        t = np.tanh(m.astype(F32)).astype(f16)
        y = (t.astype(F32) + h.astype(F32)).astype(f16)
        trace.append((m, t, y))
        h = y
    out = ref_gelu(h.astype(F32)).astype(f16)

    np.testing.assert_array_equal(res.outputs[0], out)
    # Values by stable name, in pre-order: the repeat (its first result) precedes its body's.
    assert [value_names(f)[op] for op in named_ops(f)] == ["w0", "h0", "r", "w", "m", "t", "y", "o"]
    assert sorted(res.values) == ["h0", "m", "o", "r", "t", "w", "w0", "y"]
    np.testing.assert_array_equal(res.values["h0"], h0)
    np.testing.assert_array_equal(res.values["r"], h)  # repeat result = final carried value
    np.testing.assert_array_equal(res.values["w"], w)
    m, t, y = trace[-1]  # body values come from the last iteration
    np.testing.assert_array_equal(res.values["m"], m)
    np.testing.assert_array_equal(res.values["t"], t)
    np.testing.assert_array_equal(res.values["y"], y)
    assert not np.array_equal(trace[0][0], m)
    np.testing.assert_array_equal(res.values["o"], out)


def test_repeat_multiple_carried_values() -> None:
    text = """
    func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
      %r:2 = graph.repeat 4 iter(%p = %a, %q = %b) : (tensor<3xf32>, tensor<3xf32>) {
        %s = graph.add %p, %q : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
        graph.yield %q, %s : tensor<3xf32>, tensor<3xf32>
      }
      %d = graph.sub %r#1, %r#0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      func.return %d : tensor<3xf32>
    }
    """
    a, b = np.array([0.0, 1.0, 2.0], F32), np.array([1.0, 1.0, 3.0], F32)
    p, q = a, b
    for _ in range(4):  # Fibonacci-like: (p, q) -> (q, p + q)
        p, q = q, p + q
    res = run(text, a=a, b=b)
    np.testing.assert_array_equal(res.values["r"], p)
    np.testing.assert_array_equal(res.outputs[0], q - p)
    assert sorted(res.values) == ["d", "r", "s"]


def test_flops() -> None:
    assert flops(main_function(load_module(MLP))) == 2 * 8 * 16 * 32 + 2 * 8 * 32 * 16
    # Repeat bodies count once per iteration.
    assert flops(main_function(load_module(REPEAT))) == 2 * 4 * 8 * 8 * (1 + 3)
    full = ATTN.replace("FORM", "streamed").replace("ATTRS", "")
    causal = ATTN.replace("FORM", "materialized").replace("ATTRS", ", causal")
    assert flops(main_function(load_module(full))) == 4 * 4 * 6 * 6 * 8
    assert flops(main_function(load_module(causal))) == 4 * 4 * 6 * 6 * 8 // 2
    text = """
    func.func @main(%a: tensor<6x4xf32>, %b: tensor<5x6xf32>) -> tensor<4x5xf32> {
      %m = graph.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<6x4xf32>, tensor<5x6xf32>) -> tensor<4x5xf32>
      func.return %m : tensor<4x5xf32>
    }
    """
    assert flops(main_function(load_module(text))) == 2 * 4 * 6 * 5


def test_every_computing_op_defines_its_reference() -> None:
    """The evaluator has no per-op code: each graph op that computes a value (all but the
    parameter and the repeat structure) must carry its own `reference`."""
    from ipu.dialects import graph as g

    structural = {g.ParameterOp, g.YieldOp, g.RepeatOp}
    for op in g.GRAPH_OPS:
        if op in structural:
            assert not issubclass(op, g.GraphOp), op.name
            continue
        assert issubclass(op, g.GraphOp), f"{op.name} is not a GraphOp"
        owner = next(c for c in op.__mro__ if "reference" in vars(c))
        assert owner is not g.GraphOp, f"{op.name} does not define reference"
