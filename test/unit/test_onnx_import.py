"""ONNX import: per-op lowering, fused patterns, names and locations, opset handling, and
diagnostics that name the node; compiled models run on sim targets against onnx.reference."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from conftest import EXAMPLES  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ipu import api  # noqa: E402
from ipu.frontends.onnx_import import OnnxImportError, import_model  # noqa: E402

F = TensorProto.FLOAT


def model(
    nodes: list, inputs: dict[str, list[int]], outputs: dict[str, list[int]], inits=(), opset: int = 21, dtype=F
) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info(n, dtype, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, dtype, s) for n, s in outputs.items()],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in dict(inits).items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def rand(*shape: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def ir(m: onnx.ModelProto) -> str:
    return str(import_model(m))


def runs(m: onnx.ModelProto, target: str = "sim16") -> api.Report:
    """Compile and emulate; the report must pass both the graph reference and the ONNX oracle."""
    report = api.run(api.compile(m, target), seed=3)
    oracle = [c for c in report.checks if c.kind == "oracle"]
    assert oracle, "no oracle check"
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    return report


@pytest.mark.parametrize(
    ("op", "graph_op"),
    [("Add", "graph.add"), ("Sub", "graph.sub"), ("Mul", "graph.mul"), ("Max", "graph.max")],
)
def test_binary_with_bias_vector(op: str, graph_op: str) -> None:
    m = model([helper.make_node(op, ["x", "b"], ["y"], name="n0")], {"x": [4, 6]}, {"y": [4, 6]}, {"b": rand(6)})
    text = ir(m)
    assert f'{graph_op} %x, %b {{onnx.node = "n0:{op}"}}' in text
    runs(m)


def test_vector_minus_matrix() -> None:
    """A computed vector minus a matrix is -(matrix - vector); a constant one is materialized."""
    nodes = [helper.make_node("Sub", ["v", "x"], ["y"]), helper.make_node("Sub", ["b", "x"], ["z"])]
    m = model(nodes, {"x": [4, 6], "v": [6]}, {"y": [4, 6], "z": [4, 6]}, {"b": rand(6)})
    text = ir(m)
    assert "graph.sub %x, %v" in text and "graph.sub %b, %x" in text
    assert 'graph.parameter "b" dense<[[' in text  # broadcast to the full shape
    runs(m)


@pytest.mark.parametrize("op", ["Relu", "Tanh", "Exp", "Sigmoid", "Neg", "Abs", "LeakyRelu"])
def test_unary(op: str) -> None:
    runs(model([helper.make_node(op, ["x"], ["y"])], {"x": [4, 6]}, {"y": [4, 6]}))


def test_div_by_constant_is_a_product() -> None:
    """By a power of two the product is exact; by another constant it is a real division."""
    m = model([helper.make_node("Div", ["x", "d"], ["y"])], {"x": [4, 6]}, {"y": [4, 6]}, {"d": np.float32(4.0)})
    assert "graph.mul" in ir(m) and "graph.div" not in ir(m)
    runs(m)
    m3 = model([helper.make_node("Div", ["x", "d"], ["y"])], {"x": [4, 6]}, {"y": [4, 6]}, {"d": np.float32(3.0)})
    assert "graph.div %x, %d" in ir(m3) and "graph.mul" not in ir(m3)
    runs(m3)


def test_matmul_gemm_and_rank3() -> None:
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
        helper.make_node("Reshape", ["h", "s"], ["h2"]),
        helper.make_node("Gemm", ["h2", "w2", "c"], ["y"], name="gemm", transB=1, alpha=0.5, beta=2.0),
    ]
    inits = {"w": rand(8, 6), "w2": rand(4, 6), "c": rand(4), "s": np.array([6, 6], np.int64)}
    m = model(nodes, {"x": [2, 3, 8]}, {"y": [6, 4]}, inits)
    text = ir(m)
    assert "graph.reshape %x : tensor<2x3x8xf32> -> tensor<6x8xf32>" in text
    assert "tensor<6x8xf32>, tensor<8x6xf32>) -> tensor<6x6xf32>" in text
    runs(m)


def test_softmax_reduce_transpose_cast() -> None:
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], axis=-1),
        helper.make_node("ReduceSum", ["s", "ax"], ["r"], keepdims=1),
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("ReduceMax", ["t"], ["m"], axes=[1], keepdims=0),
        helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["h"], ["c"], to=F),
    ]
    m = model(nodes, {"x": [4, 6]}, {"r": [4, 1], "m": [6], "c": [4, 6]}, {"ax": np.array([-1], np.int64)}, opset=17)
    text = ir(m)
    for op in ("graph.softmax", "graph.reduce", "graph.transpose", "graph.cast"):
        assert op in text
    report = runs(m)
    assert set(report.outputs) == {"r", "m", "c"}


def test_layer_and_rms_norm_ops() -> None:
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], epsilon=1e-5),
        helper.make_node("RMSNormalization", ["n", "g"], ["y"], epsilon=1e-6),
    ]
    m = model(nodes, {"x": [8, 16]}, {"y": [8, 16]}, {"g": rand(16), "b": rand(16)}, opset=23)
    text = ir(m)
    assert "graph.layer_norm" in text and "graph.rms_norm" in text
    runs(m)


def _erf_gelu() -> list:
    return [
        helper.make_node("Div", ["x", "sqrt2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["a"]),
        helper.make_node("Mul", ["x", "a"], ["m"]),
        helper.make_node("Mul", ["m", "half"], ["y"], name="gelu_out"),
    ]


GELU_CONSTS = {"sqrt2": np.float32(math.sqrt(2)), "one": np.float32(1), "half": np.float32(0.5)}


def test_erf_gelu_pattern_is_exact_gelu() -> None:
    m = model(_erf_gelu(), {"x": [4, 8]}, {"y": [4, 8]}, GELU_CONSTS)
    text = ir(m)
    assert text.count("graph.") == 1 + text.count("graph.parameter")
    assert 'graph.gelu %x {approximate = "none"' in text
    runs(m)


def test_tanh_gelu_pattern() -> None:
    nodes = [
        helper.make_node("Pow", ["x", "three"], ["p"]),
        helper.make_node("Mul", ["c", "p"], ["cp"]),
        helper.make_node("Add", ["x", "cp"], ["i"]),
        helper.make_node("Mul", ["i", "k"], ["ik"]),
        helper.make_node("Tanh", ["ik"], ["t"]),
        helper.make_node("Add", ["one", "t"], ["a"]),
        helper.make_node("Mul", ["half", "x"], ["hx"]),
        helper.make_node("Mul", ["hx", "a"], ["y"]),
    ]
    consts = GELU_CONSTS | {"three": np.float32(3), "c": np.float32(0.044715), "k": np.float32(math.sqrt(2 / math.pi))}
    text = ir(model(nodes, {"x": [4, 8]}, {"y": [4, 8]}, consts))
    assert "graph.gelu %x {onnx.node" in text and "graph.tanh" not in text and "approximation" not in text


def test_decomposed_layer_norm_and_rms_norm() -> None:
    ln = [
        helper.make_node("ReduceMean", ["x"], ["mu"], axes=[-1]),
        helper.make_node("Sub", ["x", "mu"], ["d"]),
        helper.make_node("Pow", ["d", "two"], ["d2"]),
        helper.make_node("ReduceMean", ["d2"], ["var"], axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["sd"]),
        helper.make_node("Div", ["d", "sd"], ["n"], name="ln_div"),
        helper.make_node("Mul", ["n", "g"], ["y"]),
    ]
    rms = [
        helper.make_node("Mul", ["x", "x"], ["x2"]),
        helper.make_node("ReduceMean", ["x2"], ["ms"], axes=[-1]),
        helper.make_node("Add", ["ms", "eps"], ["me"]),
        helper.make_node("Sqrt", ["me"], ["r"]),
        helper.make_node("Reciprocal", ["r"], ["ir"]),
        helper.make_node("Mul", ["x", "ir"], ["z"], name="rms_mul"),
    ]
    consts = {"two": np.float32(2), "eps": np.float32(1e-5), "g": rand(16)}
    m = model(ln + rms, {"x": [8, 16]}, {"y": [8, 16], "z": [8, 16]}, consts, opset=17)
    text = ir(m)
    assert "graph.layer_norm %x, %norm_ones_16_f32, %norm_zeros_16_f32 {epsilon = " in text  # raise-graph-ops
    assert '"ln_div:Div"' in text and '"rms_mul:Mul"' in text and "graph.rms_norm %x" in text
    assert "graph.reduce" not in text
    runs(m)


def test_names_and_locations_survive_compilation(tool, tmp_path: Path) -> None:
    m = model(
        [helper.make_node("Relu", ["input.1"], ["out:0"], name="act/relu")], {"input.1": [4, 6]}, {"out:0": [4, 6]}
    )
    text = ir(m)
    assert 'ipu.inputs = ["input.1"], ipu.outputs = ["out:0"]' in text
    assert 'onnx.node = "act/relu:Relu"' in text
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    report = runs(m)
    assert list(report.outputs) == ["out:0"]
    r = tool("ipu-translate", "--import-onnx", str(path))
    assert r.returncode == 0, r.stderr
    opt = tool("ipu-opt", "--target", "sim16", "-p", "ipu-compile", str(_write(tmp_path / "m.mlir", r.stdout)))
    assert opt.returncode == 0, opt.stderr


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_api_accepts_onnx_paths(tmp_path: Path) -> None:
    m = model([helper.make_node("Tanh", ["x"], ["y"])], {"x": [4, 6]}, {"y": [4, 6]})
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    assert "graph.tanh" in str(api.parse(str(path)))
    compiled = api.compile(path, "sim16")
    assert compiled.oracle is not None
    assert compiled.oracle._oracle is None, "compiling does not start the oracle's runtime"
    x = {"x": rand(4, 6)}
    report = api.run(compiled, x)
    assert report.passed
    assert [c.source for c in report.checks if c.kind == "oracle"] == ["onnxruntime"]
    np.testing.assert_allclose(report.outputs["y"], np.tanh(x["x"]), atol=1e-5)


def test_opset_handling() -> None:
    # opset 11 Softmax: over the flattened trailing dims from `axis` (default 1)
    sm = model([helper.make_node("Softmax", ["x"], ["y"])], {"x": [2, 3, 4]}, {"y": [2, 3, 4]}, opset=11)
    assert "tensor<2x3x4xf32> -> tensor<2x12xf32>" in ir(sm)  # the row collapse folds into this reshape
    # onnx.reference applies the opset-13 rule (last axis) to every opset, so check against the spec
    x = rand(2, 3, 4)
    report = api.run(api.compile(sm, "sim16"), {"x": x})
    graph_checks = [c for c in report.checks if c.kind != "oracle"]
    assert all(c.result.passed for c in graph_checks)
    e = np.exp(x.reshape(2, 12) - x.reshape(2, 12).max(1, keepdims=True))
    np.testing.assert_allclose(report.outputs["y"], (e / e.sum(1, keepdims=True)).reshape(2, 3, 4), atol=1e-5)
    # opset 11 ReduceSum takes axes as an attribute; opset 13 as an input
    r11 = model(
        [helper.make_node("ReduceSum", ["x"], ["y"], axes=[1], keepdims=0)], {"x": [4, 6]}, {"y": [4]}, opset=11
    )
    r13 = model(
        [helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)],
        {"x": [4, 6]},
        {"y": [4]},
        {"a": np.array([1], np.int64)},
        opset=13,
    )
    assert ir(r11).replace("11", "") == ir(r13).replace("13", "")
    ln = model(
        [helper.make_node("LayerNormalization", ["x", "g"], ["y"], name="ln")],
        {"x": [4, 6]},
        {"y": [4, 6]},
        {"g": rand(6)},
        opset=16,
    )
    # the checker refuses it first, naming the node: no LayerNormalization in opset 16
    with pytest.raises(OnnxImportError, match=r"No Op registered for LayerNormalization .* 16 .* Name: ln"):
        import_model(ln)
    with pytest.raises(OnnxImportError, match="opset 6 is older"):
        import_model(model([helper.make_node("Relu", ["x"], ["y"])], {"x": [4]}, {"y": [4]}, opset=6))


@pytest.mark.parametrize(
    ("nodes", "inits", "match"),
    [
        (  # its function body draws random numbers (RandomUniformLike), which nothing lowers
            [helper.make_node("Bernoulli", ["x"], ["y"], name="s1")],
            {},
            r"node 's1' \(Bernoulli\): operator Bernoulli is not supported",
        ),
        (
            [helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=5)],
            {},
            r"node name: sm\): \[ShapeInferenceError\] 'axis' must be in \[-3 , 2\]. Its actual value is: 5",
        ),
        (
            [helper.make_node("Transpose", ["x"], ["y"], name="tr", perm=[0, 0, 1])],
            {},
            r"node name: tr\): \[TypeInferenceError\] Attribute perm for Transpose has repeated value: 0",
        ),
        (
            [helper.make_node("Pow", ["x", "e"], ["y"], name="p")],
            {"e": rand(5)},
            r"node name: p\): \[ShapeInferenceError\] Incompatible dimensions",
        ),
    ],
)
def test_unsupported_diagnostics_name_the_node(nodes: list, inits: dict, match: str) -> None:
    shape = [2, 3, 4]
    with pytest.raises(OnnxImportError, match=match):
        import_model(model(nodes, {"x": shape}, {"y": [4, 3, 2] if "tr" in match else shape}, inits))


@pytest.mark.parametrize(
    "node",
    [
        helper.make_node("Mish", ["x"], ["y"], name="s1"),
        helper.make_node("Clip", ["x"], ["y"], name="c1"),
        helper.make_node("LeakyRelu", ["x"], ["y"], name="lr", alpha=2.0),
    ],
    ids=["mish", "clip-without-bounds", "leaky-relu-alpha-2"],
)
def test_refused_cases_with_a_function_body_run_op_by_op(node) -> None:
    """Mish (no lowering), a Clip without bounds and a LeakyRelu of alpha > 1 (lowerings that
    refuse them) import as their ONNX function bodies and match the oracle."""
    runs(model([node], {"x": [2, 3, 4]}, {"y": [2, 3, 4]}))


def test_model_level_diagnostics() -> None:
    relu = [helper.make_node("Relu", ["x"], ["y"])]
    with pytest.raises(
        OnnxImportError, match=r"op_type:Relu\): X typestr: T, has unsupported type: tensor\(complex64\)"
    ):
        import_model(model(relu, {"x": [4]}, {"y": [4]}, dtype=TensorProto.COMPLEX64))
    with pytest.raises(OnnxImportError, match="input 'x' has a dynamic or unknown shape"):
        import_model(model(relu, {"x": ["n", 4]}, {"y": ["n", 4]}))
    foreign = [helper.make_node("FusedGemm", ["x"], ["y"], name="fg", domain="com.microsoft")]
    m = model(foreign, {"x": [4]}, {"y": [4]})
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    with pytest.raises(OnnxImportError, match=r"node 'fg' \(FusedGemm\): operator domain 'com.microsoft'"):
        import_model(m)


def test_tool_diagnostics(tool, tmp_path: Path) -> None:
    path = tmp_path / "bad.onnx"
    onnx.save(model([helper.make_node("Bernoulli", ["x"], ["y"], name="s1")], {"x": [4]}, {"y": [4]}), path)
    r = tool("ipu-translate", "--import-onnx", str(path))
    assert r.returncode == 1
    assert r.stderr.startswith("error: onnx import: node 's1' (Bernoulli)") and "Traceback" not in r.stderr


@pytest.mark.parametrize("gelu", ["tanh", "erf"])
def test_transformer_block_sim64(gelu: str) -> None:
    """The ONNX transformer block (GQA causal attention, LayerNorm, GeLU, residuals) on sim64;
    bench/onnx_transformer_block.py runs the larger one on mk2."""
    sys.path.insert(0, str(EXAMPLES))
    from onnx_transformer_block import build_block

    m = build_block(seq=64, d_model=128, heads=8, kv_heads=2, ffn=512, gelu=gelu)
    text = ir(m)
    for op in ("graph.layer_norm", "graph.split_heads", "graph.attention", "graph.merge_heads", "graph.gelu"):
        assert op in text
    assert "causal" in text and "graph.tanh" not in text
    runs(m, "sim64")


def test_castlike_of_a_constant_stays_a_constant() -> None:
    """Expanded ONNX functions cast their constants to the input's type (CastLike(alpha, x)):
    the cast is folded, and so is what reads only constants after it (Sqrt of the cast)."""
    nodes = [
        helper.make_node("CastLike", ["a", "x"], ["ac"]),
        helper.make_node("Sqrt", ["ac"], ["as"]),
        helper.make_node("Mul", ["x", "as"], ["y"], name="m"),
    ]
    m = model(nodes, {"x": [4, 6]}, {"y": [4, 6]}, {"a": np.array(4.0, np.float64)})
    text = ir(m)
    assert "graph.sqrt" not in text and 'graph.mul %x, %as {onnx.node = "m:Mul"}' in text
    report = runs(m)
    assert report.passed


def test_column_broadcast_of_a_computed_tensor() -> None:
    """Softmax as exporters spell it: x - ReduceMax(x, keepdims) and e / ReduceSum(e, keepdims)
    broadcast a computed [..., 1] column over the last axis (plan.binary {column})."""
    nodes = [
        helper.make_node("ReduceMax", ["x", "ax"], ["m"], keepdims=1),
        helper.make_node("Sub", ["x", "m"], ["s"], name="sub"),
        helper.make_node("Exp", ["s"], ["e"]),
        helper.make_node("ReduceSum", ["e", "ax"], ["t"], keepdims=1),
        helper.make_node("Div", ["e", "t"], ["y"], name="div"),
    ]
    m = model(nodes, {"x": [3, 4, 5]}, {"y": [3, 4, 5]}, {"ax": np.array([-1], np.int64)}, opset=18)
    text = ir(m)
    assert "(tensor<12x5xf32>, tensor<12x1xf32>) -> tensor<12x5xf32>" in text
    assert 'graph.div %e, %t {onnx.node = "div:Div"}' in text
    x = rand(3, 4, 5)
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert report.passed
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(report.outputs["y"], e / e.sum(-1, keepdims=True), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    ("op", "want", "spelled"),
    [
        ("ReduceMin", lambda x: x.min(-1, keepdims=True), ["graph.neg", "graph.reduce"]),
        ("ReduceSumSquare", lambda x: (x * x).sum(-1, keepdims=True), ["graph.mul", "graph.reduce"]),
        ("ReduceL1", lambda x: np.abs(x).sum(-1, keepdims=True), ["graph.abs", "graph.reduce"]),
        ("ReduceL2", lambda x: np.sqrt((x * x).sum(-1, keepdims=True)), ["graph.mul", "graph.sqrt"]),
        ("ReduceLogSum", lambda x: np.log(np.abs(x).sum(-1, keepdims=True)), ["graph.log"]),
        (
            "ReduceLogSumExp",
            lambda x: np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)) + x.max(-1, keepdims=True),
            ["graph.exp", "graph.log", "graph.add"],
        ),
    ],
)
def test_reductions_spelled_around_graph_reduce(op: str, want, spelled: list[str]) -> None:
    """ReduceMin, ReduceSumSquare, ReduceL1/L2, ReduceLogSum(Exp) over trailing axes: a
    graph.reduce with the elementwise ops onnxruntime applies before and after it."""
    nodes = [helper.make_node(op, ["x", "ax"], ["y"], keepdims=1)]
    if op == "ReduceLogSum":  # of a positive tensor
        nodes = [helper.make_node("Abs", ["x"], ["a"]), helper.make_node(op, ["a", "ax"], ["y"], keepdims=1)]
    m = model(nodes, {"x": [3, 4, 6]}, {"y": [3, 4, 1]}, {"ax": np.array([-1], np.int64)}, opset=18)
    text = ir(m)
    for s in spelled:
        assert s in text, s
    x = rand(3, 4, 6) * 3
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    np.testing.assert_allclose(report.outputs["y"], want(x.astype(np.float64)), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("opset", [11, 13])
def test_log_softmax(opset: int) -> None:
    m = model(
        [helper.make_node("LogSoftmax", ["x"], ["y"], axis=-1 if opset >= 13 else 1)],
        {"x": [2, 6]},
        {"y": [2, 6]},
        opset=opset,
    )
    text = ir(m)
    assert "graph.log" in text and "graph.softmax" not in text
    x = rand(2, 6) * 40  # large differences: log(softmax) would underflow where this does not
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert report.passed
    s = x.astype(np.float64) - x.max(-1, keepdims=True)
    np.testing.assert_allclose(report.outputs["y"], s - np.log(np.exp(s).sum(-1, keepdims=True)), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize(("axis", "out"), [(-1, [24, 5]), (-3, [2, 60]), (0, [1, 120]), (4, [120, 1])])
def test_flatten_axis_counts_from_the_end_when_negative(axis: int, out: list[int]) -> None:
    m = model([helper.make_node("Flatten", ["x"], ["y"], axis=axis)], {"x": [2, 3, 4, 5]}, {"y": out})
    x = rand(2, 3, 4, 5)
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert report.passed
    np.testing.assert_array_equal(report.outputs["y"], x.reshape(out))


def test_layer_norm_mean_and_inverse_std_outputs() -> None:
    node = helper.make_node("LayerNormalization", ["x", "g", "b"], ["y", "mean", "inv"], axis=-2, epsilon=1e-3)
    m = model(
        [node],
        {"x": [2, 3, 4]},
        {"y": [2, 3, 4], "mean": [2, 1, 1], "inv": [2, 1, 1]},
        {"g": rand(3, 4), "b": rand(3, 4)},
        opset=17,
    )
    text = ir(m)
    assert "graph.layer_norm" in text and "graph.rsqrt" in text
    x = rand(2, 3, 4)
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(report.outputs["mean"], mean, rtol=1e-6, atol=1e-7)
    inv = 1 / np.sqrt(((x64 - mean) ** 2).mean(axis=(1, 2), keepdims=True) + 1e-3)
    np.testing.assert_allclose(report.outputs["inv"], inv, rtol=1e-5)


@pytest.mark.parametrize(("op", "axes", "out"), [("ReduceSum", [0], [2, 4]), ("ReduceMax", [0, 1], [4])])
def test_reduction_over_leading_axes(op: str, axes: list[int], out: list[int]) -> None:
    """Leading axes reduce as the rows of their collapse's transpose."""
    m = model(
        [helper.make_node(op, ["x", "ax"], ["y"], keepdims=0)],
        {"x": [3, 2, 4]},
        {"y": out},
        {"ax": np.array(axes, np.int64)},
        opset=18,
    )
    assert "graph.transpose" in ir(m)
    x = rand(3, 2, 4)
    report = api.run(api.compile(m, "sim16"), {"x": x})
    assert report.passed
    f = np.sum if op == "ReduceSum" else np.max
    np.testing.assert_allclose(report.outputs["y"], f(x, axis=tuple(axes)), rtol=1e-6, atol=1e-6)


def test_equal_constants_share_one_parameter() -> None:
    """Exporters repeat constants per layer (Llama's rotary tables): equal values of one type
    become one `graph.parameter`; a constant that differs keeps its own."""
    c = rand(4, 6, seed=5)
    nodes = [
        helper.make_node("Mul", ["x", "c1"], ["a"]),
        helper.make_node("Mul", ["a", "c2"], ["b"]),
        helper.make_node("Add", ["b", "c3"], ["y"]),
    ]
    m = model(nodes, {"x": [4, 6]}, {"y": [4, 6]}, {"c1": c, "c2": c.copy(), "c3": c + 1})
    text = ir(m)
    assert text.count("graph.parameter") == 2, text
    assert "graph.mul %a, %c1" in text
    runs(m)


def test_a_weight_read_from_raw_bytes_is_not_copied_again() -> None:
    """An initializer's values viewing all of the bytes object they were read from keep those
    bytes in the dense attribute (one copy of a weight, not two); anything else is copied, with
    the same bytes either way."""
    from ipu.frontends.value_builder import dense

    raw = np.arange(12, dtype="<f4").tobytes()
    whole = np.frombuffer(raw, "<f4").reshape(3, 4)
    assert dense(whole, np.float32).data.data is raw
    part = np.frombuffer(raw, "<f4")[2:]
    assert dense(part, np.float32).data.data == raw[8:]
    swapped = np.frombuffer(np.arange(12, dtype=">f4").tobytes(), ">f4")
    assert dense(swapped, np.float32).data.data == raw
    assert dense(whole.T, np.float32).data.data == np.ascontiguousarray(whole.T).tobytes()
