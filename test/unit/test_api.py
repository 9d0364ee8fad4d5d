"""The Python API (`ipu.compile`, `ipu.run`, `ipu.api.parse`) on models built with `ipu.builder`.

Every emulated output is compared with a NumPy computation of the same model written here
(fp32 arithmetic, each op's result rounded to the storage dtype), independently of the
compiler's own golden evaluator.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES

import ipu
from ipu.api import ApiError, Compiled, Report, first_divergence, op_locations, parse
from ipu.builder import GraphBuilder
from ipu.runtime.emulator import EmulatorError
from ipu.target import TargetError

F16 = np.float16


def gaussian(shape: tuple[int, ...], seed: int, std: float) -> np.ndarray:
    """Values of `#graph.gaussian<seed, std>` as documented: float32 N(0, 1) samples times std, in f16."""
    return (np.random.default_rng(seed).standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(F16)


def r16(x: np.ndarray) -> np.ndarray:
    """Round an fp32 intermediate to fp16 storage, as every f16 op result is."""
    return np.asarray(x, dtype=np.float32).astype(F16)


def f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def np_gelu(x: np.ndarray) -> np.ndarray:
    x = f32(x)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = f32(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def assert_close(observed: np.ndarray, expected: np.ndarray, tol: float = 3e-2) -> None:
    assert observed.shape == expected.shape
    np.testing.assert_allclose(f32(observed), f32(expected), atol=tol, rtol=tol)


def inputs_for(shapes: dict[str, tuple[int, ...]], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(s).astype(F16) for n, s in shapes.items()}


# -- models ---------------------------------------------------------------------------------------


def build_mlp(b: GraphBuilder, tokens: int = 64, d: int = 256, ffn: int = 1024) -> None:
    """The model of examples/mlp_small.mlir, in the same order."""
    x = b.input("x", (tokens, d), "f16")
    w1 = b.parameter("w1", (d, ffn), "f16", std=0.02, seed=1)
    h = b.matmul(x, w1, name="h")
    hb = b.add(h, b.parameter("b1", (ffn,), "f16", std=0.02, seed=2), name="hb")
    g = b.gelu(hb, name="g")
    y = b.matmul(g, b.parameter("w2", (ffn, d), "f16", std=0.02, seed=3), name="y")
    b.output(b.add(y, b.parameter("b2", (d,), "f16", std=0.02, seed=4), name="yb"))


def build_attention(b: GraphBuilder) -> None:
    """The model of examples/attention_small.mlir (GQA: 8 query heads, 2 KV heads)."""
    x = b.input("x", (64, 128))
    wq, wk, wv, wo = (
        b.parameter(n, s, std=0.05, seed=seed)
        for n, s, seed in [("wq", (128, 128), 11), ("wk", (128, 32), 12), ("wv", (128, 32), 13), ("wo", (128, 128), 14)]
    )
    q, k, v = b.matmul(x, wq, name="q"), b.matmul(x, wk, name="k"), b.matmul(x, wv, name="v")
    qh = b.split_heads(q, 8, name="qh")
    kh, vh = b.split_heads(k, 2, name="kh"), b.split_heads(v, 2, name="vh")
    a = b.attention(qh, kh, vh, form="materialized", name="a")
    b.output(b.matmul(b.merge_heads(a, name="m"), wo, name="o"))


@pytest.fixture(scope="module")
def mlp_compiled() -> Compiled:
    b = GraphBuilder("main")
    build_mlp(b)
    return ipu.compile(b.build(), target="sim16")


# -- the builder reproduces the examples ----------------------------------------------------------


@pytest.mark.parametrize(
    ("example", "build"), [("mlp_small.mlir", build_mlp), ("attention_small.mlir", build_attention)]
)
def test_builder_reproduces_example_text(example: str, build) -> None:
    b = GraphBuilder("main")
    build(b)
    assert str(b.build()) == str(parse(EXAMPLES / example))


def test_builder_compiles_like_the_example(mlp_compiled: Compiled) -> None:
    ex = ipu.compile(EXAMPLES / "mlp_small.mlir", target="sim16")
    assert mlp_compiled.estimated_cycles == ex.estimated_cycles
    x = inputs_for({"x": (64, 256)}, seed=3)
    a, b = ipu.run(mlp_compiled, x), ipu.run(ex, x)
    assert a.total_cycles == b.total_cycles
    np.testing.assert_array_equal(a.outputs["output0"], b.outputs["output0"])


def test_repeat_reproduces_transformer_stack() -> None:
    b = GraphBuilder()

    def layer(x):
        def p(sym: str, shape: tuple[int, ...], seed: int = 0, std: float = 0.05, **kw):
            return b.parameter(sym, shape, std=std, seed=seed, **kw)

        g1, b1 = p("ln1_gamma", (128,), values=1.0, name="g1"), p("ln1_beta", (128,), values=0.0, name="b1")
        wq, wk, wv, wo = (
            p("wq", (128, 128), 21),
            p("wk", (128, 32), 22),
            p("wv", (128, 32), 23),
            p("wo", (128, 128), 24),
        )
        g2, b2 = p("ln2_gamma", (128,), values=1.0, name="g2"), p("ln2_beta", (128,), values=0.0, name="b2")
        w1, c1 = p("w1", (128, 512), 25), p("c1", (512,), 26, 0.02)
        w2, c2 = p("w2", (512, 128), 27), p("c2", (128,), 28, 0.02)
        n1 = b.layer_norm(x, g1, b1, name="n1")
        q, k, v = b.matmul(n1, wq, name="q"), b.matmul(n1, wk, name="k"), b.matmul(n1, wv, name="v")
        qh, kh, vh = b.split_heads(q, 8, name="qh"), b.split_heads(k, 2, name="kh"), b.split_heads(v, 2, name="vh")
        a = b.attention(qh, kh, vh, causal=True, name="a")
        r1 = b.add(x, b.matmul(b.merge_heads(a, name="m"), wo, name="o"), name="r1")
        n2 = b.layer_norm(r1, g2, b2, name="n2")
        ge = b.gelu(b.add(b.matmul(n2, w1, name="h"), c1, name="hb"), name="ge")
        return b.add(r1, b.add(b.matmul(ge, w2, name="f"), c2, name="fb"), name="y")

    x = b.input("x", (64, 128))
    b.output(b.repeat(4, x, layer, carry_names=["carry"], name="out"))
    assert str(b.build()) == str(parse(EXAMPLES / "transformer_stack_small.mlir"))


# -- compile and run, checked against NumPy --------------------------------------------------------


def test_compile_and_run_mlp(mlp_compiled: Compiled) -> None:
    c = mlp_compiled
    assert isinstance(c, Compiled)
    assert c.target.name == "sim16"
    assert {"plan_ops", "map_tiles", "lower_to_tasm", "package"} <= set(c.phase_seconds)
    assert all(s >= 0 for s in c.phase_seconds.values())
    assert isinstance(c.estimated_cycles, int) and c.estimated_cycles > 0
    assert [k.name for k in c.package.checkpoints] == ["h", "hb", "g", "y", "yb"]  # the builder's name= hints

    x = inputs_for({"x": (64, 256)})
    report = ipu.run(c, x)
    assert isinstance(report, Report)
    assert report.passed is True
    assert first_divergence(report.checks) is None
    assert report.total_cycles > 0
    assert report.profile and all("cycles" in p for p in report.profile)
    assert {ch.kind for ch in report.checks} == {"checkpoint", "output"}

    w1, b1 = gaussian((256, 1024), 1, 0.02), gaussian((1024,), 2, 0.02)
    w2, b2 = gaussian((1024, 256), 3, 0.02), gaussian((256,), 4, 0.02)
    g = r16(np_gelu(r16(r16(f32(x["x"]) @ f32(w1)) + f32(b1))))
    want = r16(r16(f32(g) @ f32(w2)) + f32(b2))
    assert report.outputs["output0"].dtype == F16
    assert_close(report.outputs["output0"], want)


def test_run_package_with_explicit_reference(mlp_compiled: Compiled) -> None:
    x = inputs_for({"x": (64, 256)}, seed=1)
    own = ipu.run(mlp_compiled, x)
    r = ipu.run(mlp_compiled.package, x, reference=mlp_compiled.reference)
    assert r.passed is True
    assert r.total_cycles == own.total_cycles
    np.testing.assert_array_equal(r.outputs["output0"], own.outputs["output0"])
    bare = ipu.run(mlp_compiled.package, x)  # no reference: emulated, not checked
    assert bare.passed is None and bare.checks == []


def test_dense_parameters_and_elementwise_ops_on_sim64() -> None:
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((64, 48)) * 0.1).astype(F16)
    gamma = np.linspace(0.5, 1.5, 48).astype(F16)
    b = GraphBuilder()
    x, y = b.input("x", (32, 64)), b.input("y", (32, 48))
    h = b.matmul(x, b.parameter("w", (64, 48), values=w), name="h")
    s = b.sub(h, y, name="s")
    m = b.max(b.mul(s, y, name="ms"), b.relu(h, name="r"), name="mx")
    t = b.tanh(m, name="t")
    n = b.rms_norm(t, b.parameter("gamma", (48,), values=gamma), epsilon=1e-5, name="n")
    sm = b.softmax(n, name="sm")
    b.output(b.exp(sm, name="e"), name="probs_exp")
    c = ipu.compile(b.build(), target="sim64")
    assert [o.name for o in c.package.outputs] == ["probs_exp"]

    xs = inputs_for({"x": (32, 64), "y": (32, 48)}, seed=2)
    report = ipu.run(c, xs)
    assert report.passed is True

    h_ = r16(f32(xs["x"]) @ f32(w))
    s_ = r16(f32(h_) - f32(xs["y"]))
    m_ = r16(np.maximum(r16(f32(s_) * f32(xs["y"])), r16(np.maximum(f32(h_), 0))))
    t_ = r16(np.tanh(f32(m_)))
    n_ = r16(f32(t_) / np.sqrt(np.mean(f32(t_) ** 2, axis=-1, keepdims=True) + 1e-5) * f32(gamma))
    assert_close(report.outputs["probs_exp"], r16(np.exp(f32(r16(np_softmax(n_))))))


@pytest.mark.parametrize("target", ["sim16", "sim64"])
def test_reduce_last_axis(target: str) -> None:
    b = GraphBuilder()
    x = b.input("x", (32, 64))
    b.output(b.reduce(b.exp(x, name="e"), "sum", -1, name="total"))
    b.output(b.reduce(x, "max", 1, name="top"))
    xs = inputs_for({"x": (32, 64)}, seed=8)
    report = ipu.run(ipu.compile(b.build(), target=target), xs)
    assert_close(report.outputs["output0"], r16(np.exp(f32(xs["x"])).astype(F16).astype(np.float32).sum(-1)))
    assert_close(report.outputs["output1"], xs["x"].max(1))
    assert report.passed is True


def test_attention_gqa_causal_streamed() -> None:
    b = GraphBuilder()
    x = b.input("x", (64, 64))
    q = b.split_heads(b.matmul(x, b.parameter("wq", (64, 64), std=0.1, seed=5), name="q"), 4, name="qh")
    k = b.split_heads(b.matmul(x, b.parameter("wk", (64, 32), std=0.1, seed=6), name="k"), 2, name="kh")
    v = b.split_heads(b.matmul(x, b.parameter("wv", (64, 32), std=0.1, seed=7), name="v"), 2, name="vh")
    a = b.attention(q, k, v, form="streamed", causal=True, scale=0.2, name="a")
    b.output(b.merge_heads(a, name="m"))
    module = b.build()
    assert 'graph.attention %qh, %kh, %vh {form = "streamed", causal, scale = 2.000000e-01 : f32}' in str(module)
    xs = inputs_for({"x": (64, 64)}, seed=4)
    report = ipu.run(ipu.compile(module, target="sim16"), xs)
    assert report.passed is True

    def heads(t: np.ndarray, h: int) -> np.ndarray:
        return t.reshape(64, h, -1).transpose(1, 0, 2)

    xf = f32(xs["x"])
    qv = heads(r16(xf @ f32(gaussian((64, 64), 5, 0.1))), 4)
    kv = np.repeat(heads(r16(xf @ f32(gaussian((64, 32), 6, 0.1))), 2), 2, axis=0)  # query head h reads KV h // 2
    vv = np.repeat(heads(r16(xf @ f32(gaussian((64, 32), 7, 0.1))), 2), 2, axis=0)
    scores = f32(qv) @ f32(kv).transpose(0, 2, 1) * np.float32(0.2)
    scores = np.where(np.triu(np.ones((64, 64), bool), 1)[None], -np.inf, scores)
    want = r16(np_softmax(scores) @ f32(vv)).transpose(1, 0, 2).reshape(64, 64)
    assert_close(report.outputs["output0"], want)


def test_repeat_cast_transpose_reshape_layer_norm() -> None:
    b = GraphBuilder()
    x = b.input("x", (32, 64))
    w = b.parameter("w", (64, 64), std=0.1, seed=9)

    def body(h):
        return b.tanh(b.matmul(h, w, name="mm"), name="t")

    r = b.repeat(3, x, body, carry_names=["h"], name="r")
    n = b.layer_norm(r, b.parameter("g", (64,), values=1.0), b.parameter("be", (64,), values=0.5), name="ln")
    tr = b.transpose(b.cast(n, "f32", name="c"), [1, 0], name="tr")
    b.output(b.reshape(tr, (32, 64), name="rs"))
    c = ipu.compile(b.build(), target="sim16")
    xs = inputs_for({"x": (32, 64)}, seed=6)
    report = ipu.run(c, xs)
    assert report.passed is True
    out = report.outputs["output0"]
    assert out.dtype == np.float32

    h, wf = xs["x"], f32(gaussian((64, 64), 9, 0.1))
    for _ in range(3):
        h = r16(np.tanh(f32(r16(f32(h) @ wf))))
    hf = f32(h)
    mu, var = hf.mean(-1, keepdims=True), hf.var(-1, keepdims=True)
    ln = r16((hf - mu) / np.sqrt(var + 1e-5) + 0.5)
    assert_close(out, f32(ln).T.reshape(32, 64))


def test_compile_from_written_text_reports_source_lines(tmp_path: Path) -> None:
    b = GraphBuilder()
    build_mlp(b)
    path = tmp_path / "mlp.mlir"
    path.write_text(str(b.build()))
    c = ipu.compile(path, target="sim16", options={"finalists": 1})
    locs = op_locations(c.reference, path)
    lines = path.read_text().splitlines()
    assert "%hb = graph.add" in lines[int(locs["hb"].rsplit(":", 1)[1]) - 1]


# -- round trip --------------------------------------------------------------------------------------


def test_builder_round_trip_through_parse() -> None:
    b = GraphBuilder("model")
    x = b.input("x", (16, 32))
    xt = b.transpose(x, (1, 0), name="xt")
    s = b.softmax(xt, axis=0, name="s")
    rd = b.reduce(s, "mean", 1, name="rd")
    c = b.cast(rd, np.float32, name="c")
    q = b.reshape(b.input("qi", (8, 32)), (2, 8, 16), name="q")
    a = b.attention(q, q, q, form="streamed", causal=True, scale=0.25, name="a")
    ln = b.layer_norm(
        b.merge_heads(a, name="m"), *(b.parameter(n, (32,), values=v) for n, v in [("lg", 1.0), ("lb", 0.0)])
    )
    mm = b.matmul(ln, b.parameter("w", (16, 32), values=np.arange(512).reshape(16, 32) / 512), transpose_rhs=True)
    out = b.repeat(2, [mm, c], lambda u, v: (b.relu(u), v), name=["u", "v"])
    b.output(*out)
    module = b.build()
    text = str(module)
    assert str(parse(text)) == text
    assert "func.func @model" in text and "graph.repeat 2 iter(" in text
    assert "{transpose_rhs}" in text and "{axis = 0 : i64}" in text and '{kind = "mean", axis = 1 : i64}' in text
    assert str(b.build()) == text  # build again: an equal, independent copy


# -- API errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["func.func @main(", "garbage", "nope.mlir"])
def test_api_error_for_bad_source(source: str) -> None:
    with pytest.raises(ApiError, match="parse error|no such file"):
        ipu.compile(source, target="sim16")


def test_api_error_for_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ApiError, match="no such file"):
        parse(tmp_path / "missing.mlir")


def test_unknown_target() -> None:
    with pytest.raises(TargetError, match="unknown target 'nosuch'"):
        ipu.compile(EXAMPLES / "mlp_small.mlir", target="nosuch")


def test_compile_options(mlp_compiled: Compiled) -> None:
    b = GraphBuilder()
    build_mlp(b)
    c = ipu.compile(b.build(), target="sim16", options={"finalists": 1})
    assert c.estimated_cycles is not None and c.estimated_cycles > 0
    with pytest.raises(ApiError, match="unknown pipeline option.*bogus"):
        ipu.compile(b.build(), target="sim16", options={"bogus": 1})


def test_bad_run_inputs(mlp_compiled: Compiled) -> None:
    with pytest.raises(EmulatorError, match=r"input 'x': shape \(3, 3\), expected \(64, 256\)"):
        ipu.run(mlp_compiled, {"x": np.zeros((3, 3), F16)})
    with pytest.raises(EmulatorError, match=r"missing \['x'\], unexpected \['y'\]"):
        ipu.run(mlp_compiled, {"y": np.zeros((64, 256), F16)})


def test_streamed_attention_on_rank3_inputs() -> None:
    b = GraphBuilder()
    q, k, v = b.input("q", (4, 64, 16)), b.input("k", (2, 64, 16)), b.input("v", (2, 64, 16))
    b.output(b.attention(q, k, v, form="streamed", name="a"))
    assert ipu.run(ipu.compile(b.build(), target="sim16")).passed is True


def test_lazy_top_level_names() -> None:
    assert ipu.compile is ipu.api.compile and ipu.run is ipu.api.run and ipu.ApiError is ApiError


# -- builder errors ---------------------------------------------------------------------------------------


def _fresh() -> tuple[GraphBuilder, object]:
    b = GraphBuilder()
    return b, b.input("x", (64, 256))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda b, x: b.matmul(x, b.parameter("w", (128, 64)), name="h"), r"graph.matmul %h: contraction sizes differ"),
        (lambda b, x: b.matmul(x, b.input("v", (4, 256, 2))), r"graph.matmul: operands must be rank 2"),
        (lambda b, x: b.add(x, b.parameter("p", (128,)), name="s"), r"graph.add %s: shapes do not broadcast"),
        (lambda b, x: b.add(x, b.parameter("p", (256,), "f32")), r"graph.add: element types differ"),
        (lambda b, x: b.split_heads(x, 3, name="qh"), r"graph.split_heads %qh: 3 heads do not divide"),
        (lambda b, x: b.merge_heads(x), r"graph.merge_heads: input must be rank 3"),
        (lambda b, x: b.reduce(x, "min", 1), r"graph.reduce: kind 'min' is not one of"),
        (lambda b, x: b.softmax(x, axis=2), r"graph.softmax: axis 2 out of range"),
        (lambda b, x: b.reshape(x, (3, 5)), r"graph.reshape: .* cannot hold shape \(3, 5\)"),
        (lambda b, x: b.transpose(x, (0, 0)), r"graph.transpose: perm \[0, 0\] is not a permutation"),
        (lambda b, x: b.layer_norm(x, b.parameter("g", (64,)), b.parameter("b", (256,))), r"must have shape \(256,\)"),
        (lambda b, x: b.cast(x, "i8"), r"unsupported dtype 'i8'"),
        (lambda b, x: b.parameter("w", (2, 2), values=np.ones(3)), r"values of shape \(3,\), expected \(2, 2\)"),
        (lambda b, x: b.relu(x, name="x"), r"name 'x' is already used"),
        (lambda b, x: (b.parameter("w", (4,)), b.relu(x, name="w")), r"name 'w' is already used"),
        (lambda b, x: b.relu(x, name="1bad"), r"not a valid SSA name"),
        (lambda b, x: b.relu(x, name="layer_1"), r"ends in _<digits>"),
        (lambda b, x: b.relu("x"), r"expected a value returned by this builder"),
        (lambda b, x: b.relu(GraphBuilder().input("y", (2, 2))), r"not visible here"),
        (lambda b, x: (b.output(b.relu(x)), b.output(b.tanh(x), name="output0")), r"already named 'output0'"),
        (lambda b, x: b.input("y", (2, 2), "f64"), r"unsupported dtype 'f64'"),
        (lambda b, x: b.input("bad", (0, 4)), r"positive integers"),
        (lambda b, x: b.repeat(2, x, lambda h: b.reduce(h, "sum", 0)), r"must return the carried types"),
        (lambda b, x: b.repeat(0, x, lambda h: h), r"count must be a positive integer"),
    ],
)
def test_builder_errors(make, message: str) -> None:
    b, x = _fresh()
    with pytest.raises((ValueError, TypeError), match=message):
        make(b, x)


@pytest.mark.parametrize(
    ("qkv", "kw", "message"),
    [
        (((8, 64, 16), (3, 64, 16), (3, 64, 16)), {}, "8 query heads are not a multiple of 3 KV heads"),
        (((4, 64, 16), (2, 32, 16), (2, 32, 16)), {"causal": True}, "causal attention needs equal query and key"),
        (((4, 64, 16), (2, 64, 8), (2, 64, 8)), {}, "head_dim 16"),
        (((4, 64, 16), (2, 64, 16), (2, 32, 16)), {}, r"k \(2, 64, 16\) and v \(2, 32, 16\) differ"),
        (((4, 64, 16), (2, 64, 16), (2, 64, 16)), {"form": "flash"}, "form 'flash' is not one of"),
    ],
)
def test_attention_errors(qkv, kw, message: str) -> None:
    b = GraphBuilder()
    q, k, v = (b.input(n, s) for n, s in zip("qkv", qkv, strict=True))
    with pytest.raises(ValueError, match=f"graph.attention %a: {message}"):
        b.attention(q, k, v, name="a", **kw)


def test_attention_bias_errors() -> None:
    b = GraphBuilder()
    q, k = b.input("q", (4, 64, 16)), b.input("k", (2, 32, 16))
    with pytest.raises(ValueError, match=r"graph.attention %a: bias \(4, 64, 64\) is not \[4 or 1, 64, 32\]"):
        b.attention(q, k, k, bias=b.input("b", (4, 64, 64)), name="a")
    with pytest.raises(ValueError, match="graph.attention %c: element types differ"):
        b.attention(q, k, k, bias=b.input("c", (1, 64, 32), "f32"), name="c")


@pytest.mark.parametrize("form", ["materialized", "streamed"])
def test_attention_with_a_bias_and_a_fully_masked_row(form: str) -> None:
    """softmax(q k^T * scale + bias) v with a per-head bias on one attention and a shared -inf
    mask on another (row 5 hides every key: it attends to nothing and is 0), against numpy."""
    b = GraphBuilder()
    x = b.input("x", (64, 64))
    pos, mask = b.input("pos", (4, 64, 64)), b.input("mask", (1, 64, 64))
    q = b.split_heads(b.matmul(x, b.parameter("wq", (64, 64), std=0.1, seed=5), name="q"), 4, name="qh")
    k = b.split_heads(b.matmul(x, b.parameter("wk", (64, 32), std=0.1, seed=6), name="k"), 2, name="kh")
    v = b.split_heads(b.matmul(x, b.parameter("wv", (64, 32), std=0.1, seed=7), name="v"), 2, name="vh")
    b.output(b.merge_heads(b.attention(q, k, v, form=form, scale=1.0, bias=pos, name="a"), name="m"))
    b.output(b.merge_heads(b.attention(q, k, v, form=form, causal=True, bias=mask, name="c"), name="mc"))
    rng = np.random.default_rng(7)
    hidden = rng.random((1, 64, 64)) < 0.3
    hidden[:, :, 0] = False
    hidden[:, 5, :] = True
    xs = inputs_for({"x": (64, 64)}, seed=4)
    xs["pos"] = rng.standard_normal((4, 64, 64)).astype(np.float16)
    xs["mask"] = np.where(hidden, -np.inf, 0).astype(np.float16)
    report = ipu.run(ipu.compile(b.build(), target="sim16"), xs)
    assert report.passed is True

    def heads(t: np.ndarray, h: int) -> np.ndarray:
        return t.reshape(64, h, -1).transpose(1, 0, 2)

    xf = f32(xs["x"])
    qv = heads(r16(xf @ f32(gaussian((64, 64), 5, 0.1))), 4)
    kv = np.repeat(heads(r16(xf @ f32(gaussian((64, 32), 6, 0.1))), 2), 2, axis=0)
    vv = np.repeat(heads(r16(xf @ f32(gaussian((64, 32), 7, 0.1))), 2), 2, axis=0)
    qk = f32(qv) @ f32(kv).transpose(0, 2, 1)
    want = r16(np_softmax(qk + xs["pos"]) @ f32(vv)).transpose(1, 0, 2).reshape(64, 64)
    assert_close(report.outputs["output0"], want)
    s = np.where(np.triu(np.ones((64, 64), bool), 1)[None] | hidden, -np.inf, qk * np.float32(0.25))
    with np.errstate(invalid="ignore"):
        p = np.nan_to_num(np_softmax(s), nan=0.0)  # the fully hidden row: 0, not NaN
    want_c = r16(p @ f32(vv)).transpose(1, 0, 2).reshape(64, 64)
    assert_close(report.outputs["output1"], want_c)
    assert (report.outputs["output1"][5] == 0).all()


def test_build_errors() -> None:
    b, x = _fresh()
    with pytest.raises(ValueError, match="no outputs"):
        b.build()
    b.output(b.relu(x, name="r"))
    b.build()
    with pytest.raises(ValueError, match="already built"):
        b.relu(x)
    b3, x3 = _fresh()
    b3.output(b3.relu(x3), name="output1")
    b3.output(b3.tanh(x3))  # defaults to output1 too
    with pytest.raises(ValueError, match=r"output names \['output1', 'output1'\] are not unique"):
        b3.build()
    b2, x2 = _fresh()
    r = b2.relu(x2, name="r")
    with pytest.raises(ValueError, match="already used"):
        b2.relu(x2, name="r")
    b2.output(b2.tanh(r, name="t"))  # a rejected name leaves the builder usable
    assert "%t = graph.tanh %r" in str(b2.build())
