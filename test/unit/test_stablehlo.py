"""JAX's StableHLO in: the committed fixtures (test/stablehlo/, written by
test/models/export_jax.py) parse in both of JAX's forms, convert to the same graph module,
compile and run on sim64 and match jax's own recorded outputs. No jax needed."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, run_tool
from xdsl.dialects import func

import ipu
from ipu import api
from ipu.frontends.stablehlo_import import (
    StablehloImportError,
    import_stablehlo,
    parse_stablehlo,
)
from ipu.golden.evaluator import evaluate

FIXTURES = ROOT / "test" / "stablehlo"
PROGRAMS = [
    "mlp",
    "attention_gqa",
    "gpt_block",
    "embedding",
    "flax_layer",
    "flax_embed",
    "flax_cnn",
    "moe_router",
    "flax_dense_norm",
    "fori_rnn",
    "scan_rnn",
    "sort_rank",
]
# the canonical ops each program must reach (the forms the ONNX frontend's lowerings give too)
CANONICAL = {
    "mlp": {"graph.gelu": 1, "graph.matmul": 2},
    "attention_gqa": {"graph.attention": 1, "graph.split_heads": 3, "graph.merge_heads": 1},
    "gpt_block": {"graph.attention": 1, "graph.layer_norm": 2, "graph.gelu": 1},
    "embedding": {"graph.gather": 1, "graph.layer_norm": 1},
    "flax_layer": {"graph.attention": 1, "graph.layer_norm": 2, "graph.gelu": 1},
    "flax_embed": {"graph.gather": 1, "graph.matmul": 1},  # jnp.take's bounds check: a reduce over `and`
    # stablehlo.convolution (strided, depthwise, 1x1) and reduce_window (max, and a sum: avg_pool)
    "flax_cnn": {"graph.conv": 3, "graph.pool": 2, "graph.matmul": 1},
    # chlo.top_k: the router's top 2 of 8 experts, two rounds of an arg reduction over its softmax
    "moe_router": {"graph.softmax": 1, "graph.arg_reduce": 2, "graph.matmul": 1},
    # a fresh BatchNorm's splat statistics: its [1, F] scale folds to a constant broadcast over the rows
    "flax_dense_norm": {"graph.matmul": 1, "graph.sub": 1, "graph.mul": 1, "graph.add": 2},
    # stablehlo.while of a static trip count from 0: one graph.repeat of two matmuls and a tanh
    "fori_rnn": {"graph.repeat": 1, "graph.matmul": 2, "graph.tanh": 1},
    # scan: one graph.repeat; each trip slices its row of xs (dynamic_slice at the counter) and
    # stores its output row into the carried ys (dynamic_update_slice at the counter)
    "scan_rnn": {
        "graph.repeat": 1,
        "graph.iteration_slice": 1,
        "graph.iteration_store": 1,
        "graph.tanh": 1,
        "graph.matmul": 2,
        "graph.concat": 0,
    },
    # stablehlo.sort as a top-k of the whole axis (a round of arg reduction per element: 8 along
    # the rows, 4 along the columns; the rows' ascending sort is shared by sort, argsort and the
    # descending sort), the reverses of the descending sort and argsort as one-hot row picks
    "sort_rank": {"graph.arg_reduce": 26, "graph.matmul": 3},
}


def _text(name: str, form: str = "") -> str:
    return (FIXTURES / f"{name}{form}.mlir").read_text()


@pytest.mark.parametrize("name", PROGRAMS)
def test_pretty_and_generic_give_one_graph_module(name):
    pretty = str(import_stablehlo(_text(name), name))
    generic = str(import_stablehlo(_text(name, ".generic"), name))
    assert pretty == generic


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("form", ["", ".generic"])
def test_dialect_round_trip(name, form):
    """Printed back (pretty), the program reads again to the same module: the same text once
    xDSL's func printer has settled (it writes `-> (T)` for a result with empty attributes)."""
    once = str(parse_stablehlo(_text(name, form)))
    assert "stablehlo." in once
    twice = str(parse_stablehlo(once))
    assert twice.replace("-> (", "->(") == once.replace("-> (", "->(") or str(parse_stablehlo(twice)) == twice
    assert str(import_stablehlo(once)) == str(import_stablehlo(_text(name, form)))


@pytest.mark.parametrize("name", PROGRAMS)
def test_canonical_forms(name):
    text = str(import_stablehlo(_text(name), name))
    for op, n in CANONICAL[name].items():
        assert text.count(f"= {op} ") == n, (op, text.count(f"= {op} "))


def test_grouped_kv_heads_stay_grouped():
    """jnp.repeat of 2 KV heads for 4 query heads becomes graph.attention's own grouping."""
    text = str(import_stablehlo(_text("attention_gqa")))
    att = next(ln for ln in text.splitlines() if "graph.attention" in ln)
    assert "causal" in att
    assert "(tensor<4x32x16xf32>, tensor<2x32x16xf32>, tensor<2x32x16xf32>)" in att


@pytest.mark.parametrize("name", PROGRAMS)
def test_fixture_runs_on_sim64_and_matches_jax(name):
    compiled = ipu.compile(str(FIXTURES / f"{name}.mlir"), target="sim64")
    inputs = dict(np.load(FIXTURES / f"{name}.inputs.npz"))
    report = ipu.run(compiled, inputs)
    assert report.passed
    want = dict(np.load(FIXTURES / f"{name}.outputs.npz"))
    assert set(want) == set(report.outputs)
    for k, w in want.items():
        np.testing.assert_allclose(report.outputs[k], w, atol=2e-5, rtol=1e-4)


def test_ipu_run_reads_and_writes_npz_by_position(tmp_path):
    """ipu-run on JAX's text: inputs arg0…, outputs out0…, integer token ids accepted."""
    out = tmp_path / "y.npz"
    r = run_tool(
        "ipu-run", str(FIXTURES / "embedding.mlir"), "--target", "sim64",
        "--inputs", str(FIXTURES / "embedding.inputs.npz"), "--outputs", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "numericalTest=PASS" in r.stdout
    with np.load(out) as y, np.load(FIXTURES / "embedding.outputs.npz") as want:
        assert y.files == ["out0"]
        np.testing.assert_allclose(y["out0"], want["out0"], atol=2e-5, rtol=1e-4)


def test_ipu_translate_import_stablehlo():
    r = run_tool("ipu-translate", "--import-stablehlo", str(FIXTURES / "mlp.generic.mlir"))
    assert r.returncode == 0, r.stderr
    assert "graph.gelu" in r.stdout and 'ipu.inputs = ["arg0"]' in r.stdout


def test_convert_pass_in_ipu_opt():
    r = run_tool("ipu-opt", str(FIXTURES / "attention_gqa.mlir"), "-p", "convert-stablehlo-to-graph")
    assert r.returncode == 0, r.stderr
    assert "graph.attention" in r.stdout and "= stablehlo." not in r.stdout


def test_neg_inf_splat_is_a_float():
    m = parse_stablehlo(
        "func.func @main() -> tensor<2xf32> {\n"
        "  %0 = stablehlo.constant dense<0xFF800000> : tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n"
    )
    c = next(op for op in m.walk() if op.name == "stablehlo.constant")
    assert list(c.value.get_values()) == [-np.inf, -np.inf]
    back = parse_stablehlo(str(m))  # printed as MLIR's hex bits, read back as -inf
    c = next(op for op in back.walk() if op.name == "stablehlo.constant")
    assert list(c.value.get_values()) == [-np.inf, -np.inf]


def test_locations_are_stripped():
    text = (
        '#loc1 = loc("x")\nmodule @jit_f {\n'
        '  func.func public @main(%arg0: tensor<4xf32> loc("x")) -> tensor<4xf32> {\n'
        "    %0 = stablehlo.tanh %arg0 : tensor<4xf32> loc(#loc2)\n    return %0 : tensor<4xf32> loc(#loc)\n  }\n}\n"
        '#loc = loc(unknown)\n#loc2 = loc("jit(f)/tanh"(#loc1))\n'
    )
    assert "graph.tanh" in str(import_stablehlo(text))


UNSUPPORTED = """func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.sine %arg0 : tensor<4x8xf32>
  %1 = stablehlo.custom_call @my_kernel(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
"""


def test_unsupported_op_is_named():
    with pytest.raises(StablehloImportError, match=r"stablehlo.custom_call @my_kernel is not supported"):
        import_stablehlo(parse_stablehlo(UNSUPPORTED))


def test_unsupported_op_tool_exit(tmp_path):
    p = tmp_path / "bad.mlir"
    p.write_text(UNSUPPORTED)
    r = run_tool("ipu-run", str(p), "--target", "sim64")
    assert r.returncode == 1
    assert "stablehlo.custom_call @my_kernel is not supported" in r.stderr
    assert "Traceback" not in r.stderr


def test_invalid_program_fails_verification():
    bad = "func.func @main(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {\n" \
          "  %0 = stablehlo.transpose %a, dims = [1, 1] : (tensor<4x8xf32>) -> tensor<8x4xf32>\n" \
          "  return %0 : tensor<8x4xf32>\n}\n"  # fmt: skip
    with pytest.raises(StablehloImportError, match="permutation"):
        parse_stablehlo(bad)


def test_gather_other_than_rows_is_refused():
    text = """func.func @main(%t: tensor<10x8xf32>, %i: tensor<4x1xi32>) -> tensor<4x1xf32> {
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
    start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}>
    : (tensor<10x8xf32>, tensor<4x1xi32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}
"""
    with pytest.raises(StablehloImportError, match="stablehlo.gather other than an embedding lookup"):
        import_stablehlo(parse_stablehlo(text))


def test_graph_text_is_not_taken_for_stablehlo(tmp_path):
    """An imported module printed and read back is graph IR (its ops' `onnx.node` names the
    StableHLO op each came from, which must not make it look like StableHLO)."""
    from ipu.frontends.stablehlo_import import looks_like_stablehlo

    text = str(import_stablehlo(_text("attention_gqa")))
    assert "stablehlo.dot_general" in text and not looks_like_stablehlo(text)
    assert all(looks_like_stablehlo(_text(n, f)) for n in PROGRAMS for f in ("", ".generic"))
    p = tmp_path / "g.mlir"
    p.write_text(text)
    assert ipu.run(ipu.compile(str(p), target="sim64"), dict(np.load(FIXTURES / "attention_gqa.inputs.npz"))).passed


def test_core_path_needs_no_jax():
    """Reading, converting and compiling StableHLO imports no jax (it is the optional extra)."""
    code = (
        "import sys, ipu; from ipu.frontends.stablehlo_import import import_stablehlo; "
        f"import_stablehlo(open({str(FIXTURES / 'mlp.mlir')!r}).read()); "
        "assert not any(m == 'jax' or m.startswith('jax.') for m in sys.modules), 'jax imported'"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_api_example_args_need_a_function():
    with pytest.raises(api.ApiError, match="example arguments apply to a Python function"):
        api.compile(str(FIXTURES / "mlp.mlir"), "sim64", "extra")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("reverse = [false, false]", "reverse = [true, false]"), "stablehlo.convolution with window reversal"),
        (("lhs_dilate = [1, 1]", "lhs_dilate = [2, 2]"), "result shape .* differs from the expected"),
        (("stride = [2, 2]", "strides = [2, 2]"), "unknown window field 'strides'"),
        (("[b, 0, 1, f]x", "[b, 0, 0, f]x"), "does not name each of 4 dimensions once"),
        (("window_dimensions = array<i64: 1, 3, 3, 1>", "window_dimensions = array<i64: 1, 3, 3>"), "must be 4"),
    ],
)
def test_convolution_and_pooling_refusals(edit, message):
    """A convolution or pooling window the importer cannot express, or one that is malformed,
    is refused naming the op and what is wrong."""
    text = _text("flax_cnn")
    assert edit[0] in text
    with pytest.raises(StablehloImportError, match=message):
        import_stablehlo(text.replace(edit[0], edit[1], 1), "flax_cnn")


def test_the_frontend_builds_no_onnx():
    """StableHLO lowers straight to `graph` through the value builder both frontends share: the
    frontend imports nothing of onnx, and there is no ONNX translation left to call."""
    import ast

    import ipu.frontends.stablehlo_import as shi

    tree = ast.parse((ROOT / "frontends" / "stablehlo_import.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m == "onnx" or m.startswith("onnx.") for m in imported), imported
    assert not hasattr(shi, "to_onnx")


CONSTANT_ROWS = """func.func @main(%x: tensor<10x8xf32>) -> tensor<3x8xf32> {
  %t = stablehlo.tanh %x : tensor<10x8xf32>
  %i = stablehlo.constant dense<[[1], [7], [12]]> : tensor<3x1xi32>
  %1 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
    start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}>
    : (tensor<10x8xf32>, tensor<3x1xi32>) -> tensor<3x8xf32>
  return %1 : tensor<3x8xf32>
}
"""


def test_constant_rows_of_a_computed_tensor(tmp_path):
    """A gather of constant rows (clamped: 12 reads row 9) from a computed tensor is the ONNX
    frontend's one-hot selection (`pick_rows`), shared."""
    text = str(import_stablehlo(CONSTANT_ROWS))
    assert text.count("= graph.matmul ") == 1 and "graph.gather" not in text
    p = tmp_path / "rows.mlir"
    p.write_text(CONSTANT_ROWS)
    x = np.random.default_rng(0).standard_normal((10, 8)).astype(np.float32)
    report = ipu.run(ipu.compile(str(p), target="sim64"), {"arg0": x})
    assert report.passed
    np.testing.assert_allclose(report.outputs["out0"], np.tanh(x)[[1, 7, 9]], atol=1e-6)


_COUNTER_LOOP = """
func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = stablehlo.constant dense<START> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %x = %arg0) : tensor<i32>, tensor<4x8xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %y = stablehlo.BODY %x, %b : tensor<4x8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %y : tensor<i32>, tensor<4x8xf32>
  }
  return %0#1 : tensor<4x8xf32>
}
"""


@pytest.mark.parametrize(
    ("start", "body", "loop", "want"),
    [
        (0, "add", False, lambda x: x + 3),  # the counter's value is data: unrolled
        (1, "add", False, lambda x: x + 3),  # from 1: unrolled (a trip is not its iteration)
        (0, "maximum", False, lambda x: np.maximum(x, 2)),
    ],
)
def test_a_while_whose_counter_is_data_is_unrolled(start, body, loop, want):
    """Only a counter that indexes the leading axis of slices and stores becomes a graph.repeat;
    any other use of it (here, added to the state) unrolls the loop, with the same values."""
    text = _COUNTER_LOOP.replace("START", str(start)).replace("BODY", body)
    module = import_stablehlo(text, "counter")
    assert ("graph.repeat" in str(module)) is loop
    f = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_allclose(evaluate(f, {"arg0": x}).outputs[0], want(x), rtol=1e-6)


def test_a_scan_is_one_loop_whatever_its_length():
    """scan_rnn's 5 trips and the same program at 500: the same graph, but for the lengths."""
    text = _text("scan_rnn")
    longer = text.replace("5x4x64", "500x4x64").replace("dense<5>", "dense<500>")
    short, long = str(import_stablehlo(text, "scan")), str(import_stablehlo(longer, "scan"))
    assert short.replace("5x4x64", "500x4x64").replace("repeat 5 ", "repeat 500 ") == long
