"""The model zoo: real `torch.onnx.export` files of transformers and torch models (random
weights, from configs; `test/models/export_models.py` made them), each imported, compiled for
sim64, emulated, and checked against onnxruntime's outputs recorded at export time, against the
oracle run now, and against the graph's golden evaluator at sampled checkpoints.

A model that does not get through yet is an expected failure with the reason: strict, so it
must fail (and the entry must go once it passes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ipu import api
from ipu.abi.package import kernels_called

FIXTURES = Path(__file__).resolve().parents[1] / "models" / "fixtures"
MODELS = sorted(p.name.removesuffix(".onnx") for p in FIXTURES.glob("*.onnx"))

EXPECTED_FAILURES: dict[str, str] = {}  # model -> why it does not get through yet

# the models a later test reads again: compiled (and run on their recorded inputs) once for all
SHARED = {"llama_layer.dynamo23", "t5_encoder.classic17", "t5_encoder.dynamo20", "t5_encoder.dynamo23"}
_COMPILED: dict[str, api.Compiled] = {}
_RUNS: dict[str, api.Report] = {}


def compiled_zoo(name: str) -> api.Compiled:
    """`name` compiled for sim64 (kept for the next test when in SHARED)."""
    if name in _COMPILED:
        return _COMPILED[name]
    compiled = api.compile(str(FIXTURES / f"{name}.onnx"), "sim64")
    if name in SHARED:
        _COMPILED[name] = compiled
    return compiled


def run_zoo(name: str) -> api.Report:
    """`name` emulated on its recorded inputs (kept for the next test when in SHARED)."""
    if name in _RUNS:
        return _RUNS[name]
    report = api.run(compiled_zoo(name), dict(np.load(FIXTURES / f"{name}.inputs.npz")))
    if name in SHARED:
        _RUNS[name] = report
    return report


def test_zoo_is_complete() -> None:
    """Every model x exporter the zoo script writes is committed (the classic exporter cannot
    export torch's encoder layer: `aten::_transformer_encoder_layer_fwd` / an SDPA bug)."""
    names = {m.split(".")[0] for m in MODELS}
    assert names == {
        "bert",
        "conv1d_frontend",
        "gpt2_block",
        "gru",
        "gpt2_lm",
        "llama",
        "llama_layer",
        "llama_sdpa",
        "lstm",
        "mixtral",
        "mobilenet_v2_small",
        "qwen2",
        "resnet_small",
        "t5_encoder",
        "torch_encoder_layer",
        "vit",
    }
    assert len(MODELS) == 47
    assert set(EXPECTED_FAILURES) <= set(MODELS)
    for m in MODELS:
        assert (FIXTURES / f"{m}.inputs.npz").is_file() and (FIXTURES / f"{m}.expected.npz").is_file()


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(m, marks=pytest.mark.xfail(reason=EXPECTED_FAILURES[m], strict=True))
        if m in EXPECTED_FAILURES
        else m
        for m in MODELS
    ],
)
def test_zoo_model(name: str) -> None:
    report = run_zoo(name)
    assert report.checks, "nothing was checked"
    assert any(c.kind == "oracle" for c in report.checks), "onnxruntime was not consulted"
    bad = [c for c in report.checks if not c.result.passed]
    assert not bad, [f"{c.kind} {c.name}: {c.result.reason}" for c in bad]
    expected = dict(np.load(FIXTURES / f"{name}.expected.npz"))
    assert set(expected) == set(report.result.outputs)
    for k, want in expected.items():
        got = report.result.outputs[k]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_zoo_model_in_half_precision() -> None:
    """`precision="f16"`: the float32 export computed in float16 still matches onnxruntime's
    float32 outputs within float16 tolerances, and costs fewer cycles."""
    name = "llama_layer.dynamo23"
    inputs = dict(np.load(FIXTURES / f"{name}.inputs.npz"))
    full = run_zoo(name)
    half_c = api.compile(str(FIXTURES / f"{name}.onnx"), "sim64", precision="f16")
    assert "f16" in str(half_c.reference) and "xf32> -> tensor<1x32x64xf16>" in str(half_c.reference)
    half = api.run(half_c, inputs)
    assert half.checks and all(c.result.passed for c in half.checks)
    assert any(c.kind == "oracle" for c in half.checks)
    assert half.result.total_cycles < full.result.total_cycles


@pytest.mark.parametrize("name", ["resnet_small.dynamo23", "gpt2_lm.dynamo23"])
def test_zoo_model_with_half_partials(name: str) -> None:
    """`partials="f16"` on an export computed in f16: every matmul and convolution sums in half
    on the AMP (and a ResNet's max pool of a ReLU runs planned), the outputs still match
    onnxruntime's within the half-partials check, in fewer cycles than fp32 partials."""
    inputs = dict(np.load(FIXTURES / f"{name}.inputs.npz"))
    runs = {}
    for partials in ("f32", "f16"):
        c = api.compile(str(FIXTURES / f"{name}.onnx"), "sim64", precision="f16", partials=partials)
        r = api.run(c, inputs)
        assert r.checks and all(ch.result.passed for ch in r.checks), [
            ch.name for ch in r.checks if not ch.result.passed
        ]
        assert any(ch.kind == "oracle" for ch in r.checks)
        runs[partials] = (r.total_cycles, kernels_called(c.package))
    assert runs["f16"][0] < runs["f32"][0]
    assert api.HALF_PARTIAL_KERNELS & runs["f16"][1] and not api.HALF_PARTIAL_KERNELS & runs["f32"][1]
    if name.startswith("resnet"):
        assert "max_pool" in runs["f16"][1]


def test_t5_position_bias_is_one_shared_attention_bias() -> None:
    """T5's relative-position bias (a constant once the bucket Gather folds) is the additive
    bias operand of each layer's graph.attention, declared once for both layers, unscaled."""
    for e in ("classic17", "dynamo20", "dynamo23"):
        text = str(compiled_zoo(f"t5_encoder.{e}").reference)
        atts = [line for line in text.splitlines() if "graph.attention" in line]
        assert len(atts) == 2, e
        biases = {line.split(" bias ")[1].split()[0] for line in atts}
        assert len(biases) == 1, (e, biases)
        assert all("scale = 1.000000e+00" in line and "causal" not in line for line in atts), e
        assert all("tensor<4x32x32xf32>) -> tensor<4x32x16xf32>" in line for line in atts), e


def test_sdpa_llama_attends_over_its_own_kv_heads() -> None:
    """transformers' default attention (SDPA) exported by each exporter: a NaN guard and KV heads
    repeated for the query heads (decomposed at opsets 17 and 20, ONNX `Attention` at 23). Each
    layer is one graph.attention over the 2 KV heads themselves, not 4 repeated copies."""
    for e in ("classic17", "dynamo20", "dynamo23"):
        text = str(compiled_zoo(f"llama_sdpa.{e}").reference)
        atts = [line for line in text.splitlines() if "graph.attention" in line]
        assert len(atts) == 2, e
        assert all("(tensor<4x32x16xf32>, tensor<2x32x16xf32>, tensor<2x32x16xf32>)" in line for line in atts), e


def test_fixtures_record_the_releases_that_made_them() -> None:
    import json

    versions = json.loads((FIXTURES / "versions.json").read_text())
    assert {"torch", "transformers", "onnx", "onnxruntime"} <= set(versions)


def test_mixtral_gathers_each_tokens_expert_weights() -> None:
    """The MoE layer as exported ("batched_mm"): TopK over the router's softmax picks 2 of 4
    experts per token, and each of the 64 (token, expert) pairs reads its expert's stacked
    weights by a runtime-index `graph.gather` (GatherND from dynamo, a rank-3 Gather from the
    classic exporter), 2 projections x 2 layers."""
    for e in ("classic17", "dynamo20", "dynamo23"):
        text = str(compiled_zoo(f"mixtral.{e}").reference)
        gathers = [line for line in text.splitlines() if "graph.gather " in line and "tensor<64xi32>" in line]
        assert len(gathers) == 4, e
        assert all("(tensor<4x" in line for line in gathers), e
