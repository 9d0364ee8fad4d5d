"""`graph.gather`, the embedding lookup, at every level: integer (i32) host inputs, the op's
reference, the multiSlice plan (table distributed, ids replicated, partials reduced) and its
grid choice, the package's INT32 bindings, the ONNX `Gather` import and the id diagnostics of
`ipu-run` (the `embedding_slice` kernel's emulated values and cycles: test_emulator.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.utils.exceptions import DiagnosticException

import ipu
from ipu import api
from ipu.abi.isa import DType
from ipu.abi.package_io import read_package, write_package
from ipu.dialects import graph as g
from ipu.frontends.onnx_import import OnnxImportError, import_model
from ipu.golden.evaluator import GoldenError, check_inputs, evaluate, main_function, make_inputs
from ipu.runtime.emulator import EmulatorError, narrow_int32
from ipu.target import load_target
from ipu.transforms.plan.budget import WEIGHT_FRACTION
from ipu.transforms.plan.families.gather import choose_gather, gather_grids
from ipu.transforms.plan.plan_ops import PlanOpsPass

MODEL = """
func.func @main(%ids: tensor<1x8xi32>) -> (tensor<8x32xf16>, tensor<8x16xf32>) {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.5> : tensor<64x32xf16>
  %x = graph.gather %emb, %ids {axis = 0, plan.choice = #plan.choice<gather, grid = [4, 4]>}
      : (tensor<64x32xf16>, tensor<1x8xi32>) -> tensor<8x32xf16>
  %pos = graph.parameter "pos" #graph.gaussian<seed = 2, std = 0.5> : tensor<40x16xf32>
  %y = graph.gather %pos, %ids {axis = 0} : (tensor<40x16xf32>, tensor<1x8xi32>) -> tensor<8x16xf32>
  func.return %x, %y : tensor<8x32xf16>, tensor<8x16xf32>
}
"""


def _tables(f) -> dict[str, np.ndarray]:
    return {op.sym_name.data: g.parameter_values(op) for op in f.walk() if isinstance(op, g.ParameterOp)}


def test_reference_is_numpy_take_along_axis_0() -> None:
    f = main_function(api.parse(MODEL))
    ids = np.array([[0, 39, 7, 7, 1, 20, 38, 3]], np.int32)
    res = evaluate(f, {"ids": ids})
    t = _tables(f)
    np.testing.assert_array_equal(res.outputs[0], np.take(t["emb"], ids[0], axis=0))
    np.testing.assert_array_equal(res.outputs[1], np.take(t["pos"], ids[0], axis=0))
    assert res.outputs[0].dtype == np.float16 and res.outputs[1].dtype == np.float32


def test_random_ids_lie_below_every_table_they_index() -> None:
    f = main_function(api.parse(MODEL))
    draws = np.concatenate([make_inputs(f, seed)["ids"].reshape(-1) for seed in range(50)])
    assert draws.dtype == np.int32
    assert draws.min() >= 0 and draws.max() < 40  # the smaller of the two tables (40 and 64 rows)
    assert len(np.unique(draws)) > 30  # drawn across the rows, not a constant


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ([0, 1, 2, 3, 40, 5, 6, 7], r"input 'ids': index 40 at element 4 outside \[0, 40\)"),
        ([0, 1, 2, 3, -2, 5, 6, 7], r"index -2 at element 4 .*\(negative indices are not supported\)"),
        ([0, 1, 2, 3, 2**31, 5, 6, 7], r"value 2147483648 at element 4 does not fit int32"),
        ([0, 1, 2, 3.5, 4, 5, 6, 7], r"integer input holds non-integral values"),
    ],
)
def test_index_inputs_are_checked_when_narrowed(ids: list, message: str) -> None:
    f = main_function(api.parse(MODEL))
    a = np.array([ids], np.float64 if isinstance(ids[3], float) else np.int64)
    with pytest.raises(GoldenError, match=message):
        check_inputs(f, {"ids": a})


def test_int64_ids_are_narrowed_to_int32() -> None:
    f = main_function(api.parse(MODEL))
    out = check_inputs(f, {"ids": np.array([[0, 1, 2, 3, 39, 5, 6, 7]], np.int64)})["ids"]
    assert out.dtype == np.int32 and out[0, 4] == 39
    assert narrow_int32("ids", np.array([7, -7], np.int64)).dtype == np.int32
    with pytest.raises(EmulatorError, match=r"input 'ids': value -2147483649 does not fit int32"):
        narrow_int32("ids", np.array([0, -(2**31) - 1], np.int64))


def test_compiled_run_and_the_int32_binding_survive_the_package_file(tmp_path: Path) -> None:
    compiled = ipu.compile(api.parse(MODEL), target="sim16")
    pkg = compiled.package
    assert [(b.name, b.dtype, b.shape) for b in pkg.inputs] == [("ids", DType.INT32, (1, 8))]
    ids = np.array([[39, 0, 16, 15, 31, 32, 38, 17]], np.int64)  # either side of emb's 16-row blocks
    report = ipu.run(compiled, {"ids": ids})
    assert report.passed
    t = _tables(compiled.reference)
    np.testing.assert_array_equal(report.outputs["output0"], t["emb"][ids[0]])
    path = tmp_path / "gather.ipuexe"
    write_package(pkg, path)
    again = read_package(path)
    assert again.inputs[0].dtype == DType.INT32
    bare = ipu.run(again, {"ids": ids}, target="sim16")
    np.testing.assert_array_equal(bare.outputs["output1"], t["pos"][ids[0]])
    assert bare.total_cycles == report.total_cycles


def test_plan_keeps_the_table_distributed_and_reduces_row_block_partials() -> None:
    m = api.parse(MODEL)
    PlanOpsPass(target="sim16", finalists=1).apply(api.context(), m)
    text = str(m)
    assert "plan.embedding_slice %emb, %ids" in text
    assert "#plan.layout<grid = [4, 4], split = [[], [1]], partial = 0, memory = standard>" in text
    assert "plan.reduce %x_partial" in text


def test_grid_choice_fits_and_never_puts_the_whole_table_on_every_tile() -> None:
    t = load_target("sim16")
    for v, d in ((64, 32), (1000, 64), (32768, 8), (50, 2)):
        c = choose_gather(v, d, 16, 2, t)
        assert c.pv * c.pd <= t.tiles and c.bytes_per_tile <= 0.85 * (t.memory_size - t.code_reserve_bytes)
        # one copy of the table spread over the grid (blocks padded to whole rows and word pairs),
        # never a replica of it per tile
        assert c.table_bytes * c.pv * c.pd <= (v + c.pv) * (d + 2 * c.pd) * 2
        assert c.pv * c.pd > 1 or v * d * 2 < 1024  # only a tiny table stays on one tile
        assert (c.pv, c.pd) in gather_grids(v, d, t.tiles)
    # a narrow table too big for the weights' share when split by columns alone is split by rows
    narrow = choose_gather(32768, 8, 16, 2, t)
    assert narrow.pv > 1 and narrow.table_bytes <= WEIGHT_FRACTION * t.memory_size
    # without that pressure the cheapest grid has one row block: no partials, no reduce
    assert choose_gather(64, 32, 16, 2, t).grid == (1, 16)
    # ranked like the other decision points: the search's branching is the number of fitting grids
    counts: list[int] = []
    ranked = [choose_gather(64, 32, 16, 2, t, rank=r, counts=counts) for r in range(3)]
    assert counts[0] == len(gather_grids(64, 32, t.tiles)) and len(set(c.grid for c in ranked)) == 3
    assert [c.cycles for c in ranked] == sorted(c.cycles for c in ranked)
    with pytest.raises(DiagnosticException, match="does not fit table"):
        choose_gather(64, 32, 16, 2, t, pin=(4, 32))
    with pytest.raises(DiagnosticException, match="model does not fit target sim16: gather"):
        choose_gather(2**20, 64, 16, 2, t)


def _embedding_model(ids_type: int = TensorProto.INT64, ids_shape=(1, 8)) -> onnx.ModelProto:
    """The brief's tiny model: Gather on a [64, 32] initializer table by int64 ids, then a MatMul."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Gather", ["wte", "input_ids"], ["tok"], axis=0, name="embed"),
        helper.make_node("MatMul", ["tok", "w"], ["y"], name="proj"),
    ]
    graph = helper.make_graph(
        nodes,
        "embed",
        [helper.make_tensor_value_info("input_ids", ids_type, list(ids_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [*ids_shape, 16])],
        [
            numpy_helper.from_array((rng.standard_normal((64, 32)) * 0.5).astype(np.float32), "wte"),
            numpy_helper.from_array((rng.standard_normal((32, 16)) * 0.2).astype(np.float32), "w"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_embedding_model_passes_on_sim16_against_the_oracle(tool, tmp_path: Path) -> None:
    path = tmp_path / "embed.onnx"
    onnx.save(_embedding_model(), path)
    text = str(import_model(_embedding_model()))
    assert "func.func @main(%input_ids: tensor<1x8xi32>)" in text
    assert 'graph.gather %wte, %input_ids {axis = 0 : i64, onnx.node = "embed:Gather"}' in text
    r = tool("ipu-run", str(path), "--target", "sim16")
    assert r.returncode == 0, r.stderr
    assert "oracleOutput=y oracle=onnxruntime samples=128" in r.stdout
    assert "numericalTest=PASS" in r.stdout
    # int32 ids and [S] ids import alike
    assert "tensor<8xi32>" in str(import_model(_embedding_model(TensorProto.INT32, (8,))))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (64, "error: input 'input_ids': index 64 at element 5 outside [0, 64), the rows of the table it indexes"),
        (2**40, "error: input 'input_ids': value 1099511627776 at element 5 does not fit int32"),
    ],
)
def test_ipu_run_diagnoses_bad_ids(tool, tmp_path: Path, value: int, message: str) -> None:
    path, ids = tmp_path / "embed.onnx", tmp_path / "ids.npz"
    onnx.save(_embedding_model(), path)
    a = np.array([[1, 2, 3, 4, 5, 6, 7, 8]], np.int64)
    a[0, 5] = value
    np.savez(ids, input_ids=a)
    r = tool("ipu-run", str(path), "--target", "sim16", "--inputs", str(ids))
    assert r.returncode == 1
    assert r.stderr.startswith(message), r.stderr
    assert "Traceback" not in r.stderr


def _one_node(node: onnx.NodeProto, inputs: dict, output: tuple[str, list[int]], inits: list) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "m",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(output[0], TensorProto.FLOAT, output[1])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_constant_indices_pick_rows_of_a_computed_tensor() -> None:
    """GPT-2's last-token pick, Gather(h [1, S, D], -1, axis 1): a one-hot selection matmul."""
    m = _one_node(
        helper.make_node("Gather", ["h", "last"], ["z"], axis=1, name="pick"),
        {"h": (TensorProto.FLOAT, [1, 8, 16])},
        ("z", [1, 16]),
        [numpy_helper.from_array(np.array(-1, np.int64), "last")],
    )
    compiled = ipu.compile(import_model(m), target="sim16")
    h = np.random.default_rng(3).standard_normal((1, 8, 16)).astype(np.float32)
    report = ipu.run(compiled, {"h": h})
    assert report.passed
    np.testing.assert_array_equal(report.outputs["z"], h[:, -1])


def test_constant_indices_pick_columns_of_a_computed_tensor() -> None:
    """Gather(x [4, 6], [[5, 0], [-1, 2]], axis 1) -> [4, 2, 2]: x times a one-hot [6, 4]."""
    m = _one_node(
        helper.make_node("Gather", ["x", "k"], ["z"], axis=1, name="cols"),
        {"x": (TensorProto.FLOAT, [4, 6])},
        ("z", [4, 2, 2]),
        [numpy_helper.from_array(np.array([[5, 0], [-1, 2]], np.int64), "k")],
    )
    x = np.random.default_rng(4).standard_normal((4, 6)).astype(np.float32)
    report = ipu.run(ipu.compile(import_model(m), target="sim16"), {"x": x})
    assert report.passed
    np.testing.assert_array_equal(report.outputs["z"], np.take(x, [[5, 0], [-1, 2]], axis=1))


def test_positional_embeddings_fold_to_a_parameter() -> None:
    """Gather(wpe, Range(0, S)) has constant inputs only: folded at import, no graph.gather left."""
    start, limit, delta = (numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("a", 0), ("b", 8), ("c", 1)))
    wpe = np.random.default_rng(1).standard_normal((16, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Range", ["a", "b", "c"], ["pos_ids"]),
        helper.make_node("Gather", ["wpe", "pos_ids"], ["pos"], axis=0),
        helper.make_node("Add", ["x", "pos"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 4])],
        [start, limit, delta, numpy_helper.from_array(wpe, "wpe")],
    )
    module = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert "graph.gather" not in str(module)
    f = main_function(module)
    params = {op.sym_name.data: g.parameter_values(op) for op in f.walk() if isinstance(op, g.ParameterOp)}
    np.testing.assert_array_equal(params["pos"], wpe[:8])


@pytest.mark.parametrize(
    ("node", "inputs", "output", "inits", "match"),
    [
        (  # integer ids read by a float-only op
            helper.make_node("Sqrt", ["ids"], ["y"], name="c"),
            {"ids": (TensorProto.INT64, [8])},
            ("y", [8]),
            [],
            r"op_type:Sqrt, node name: c\): X typestr: T, has unsupported type: tensor\(int64\)",
        ),
        (  # a batch of id rows
            helper.make_node("Gather", ["t", "ids"], ["y"], name="g"),
            {"ids": (TensorProto.INT64, [2, 8])},
            ("y", [2, 8, 4]),
            [numpy_helper.from_array(np.zeros((16, 4), np.float32), "t")],
            r"runtime indices 'ids' have shape \[2, 8\]; the embedding lookup takes token ids of shape \[S\]",
        ),
        (  # runtime ids along another axis
            helper.make_node("Gather", ["t", "ids"], ["y"], axis=1, name="g"),
            {"ids": (TensorProto.INT64, [8])},
            ("y", [16, 8]),
            [numpy_helper.from_array(np.zeros((16, 4), np.float32), "t")],
            r"node 'g' \(Gather\): only the lookup along axis 0 of a table of rank 2 or more",
        ),
        (  # runtime ids into a computed tensor
            helper.make_node("Gather", ["x", "ids"], ["y"], name="g"),
            {"x": (TensorProto.FLOAT, [16, 4]), "ids": (TensorProto.INT64, [8])},
            ("y", [8, 4]),
            [],
            r"runtime indices into a computed tensor are not supported",
        ),
        (  # constant indices that are not integers
            helper.make_node("Gather", ["x", "k"], ["y"], axis=1, name="g"),
            {"x": (TensorProto.FLOAT, [16, 4])},
            ("y", [16]),
            [numpy_helper.from_array(np.array(2.0, np.float32), "k")],
            r"op_type:Gather, node name: g\): indices typestr: Tind, has unsupported type: tensor\(float\)",
        ),
        (  # a constant index out of range
            helper.make_node("Gather", ["x", "k"], ["y"], axis=0, name="g"),
            {"x": (TensorProto.FLOAT, [16, 4])},
            ("y", [4]),
            [numpy_helper.from_array(np.array(16, np.int64), "k")],
            r"node 'g' \(Gather\): index 16 out of range \[-16, 16\) of axis 0",
        ),
    ],
)
def test_unsupported_gathers_are_diagnosed(node, inputs, output, inits, match) -> None:
    with pytest.raises(OnnxImportError, match=match):
        import_model(_one_node(node, inputs, output, inits))


def test_builder_declares_i32_ids_and_gathers() -> None:
    from ipu.builder import GraphBuilder

    b = GraphBuilder()
    ids = b.input("ids", (8,), "i32")
    x = b.gather(b.parameter("emb", (64, 32), "f16", std=0.5, seed=1), ids, name="x")
    b.output(b.matmul(x, b.parameter("w", (32, 16), "f16", std=0.2, seed=2), name="y"))
    module = b.build()
    assert "graph.gather %emb, %ids {axis = 0 : i64} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x32xf16>" in str(
        module
    )
    report = ipu.run(ipu.compile(module, target="sim16"), seed=3)
    assert report.passed and report.inputs["ids"].dtype == np.int32
    b2 = GraphBuilder()
    table, floats = b2.parameter("t", (4, 4), "f32"), b2.input("f", (2,), "f32")
    with pytest.raises(ValueError, match="graph.gather.*i32 ids"):
        b2.gather(table, floats)


def _viewed_ids_model(shape: list[int]) -> onnx.ModelProto:
    """GPT-2's `input_ids.view(-1, S)` and friends between the id input and its Gather."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Reshape", ["input_ids", "shape"], ["ids2"], name="view"),
        helper.make_node("Squeeze", ["ids2", "ax"], ["ids3"], name="sq"),
        helper.make_node("Unsqueeze", ["ids3", "ax"], ["ids4"], name="unsq"),
        helper.make_node("Gather", ["wte", "ids4"], ["tok"], axis=0, name="embed"),
        helper.make_node("MatMul", ["tok", "w"], ["y"], name="proj"),
    ]
    graph = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16])],
        [
            numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32), "wte"),
            numpy_helper.from_array((rng.standard_normal((32, 16)) * 0.2).astype(np.float32), "w"),
            numpy_helper.from_array(np.array(shape, np.int64), "shape"),
            numpy_helper.from_array(np.array([0], np.int64), "ax"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_reshaped_ids_are_aliases_of_the_input() -> None:
    text = str(import_model(_viewed_ids_model([-1, 8])))
    assert "graph.gather %wte, %input_ids" in text  # no op between the input and the lookup
    report = ipu.run(ipu.compile(_viewed_ids_model([-1, 8]), target="sim16"), seed=1)
    assert report.passed and any(c.source == "onnxruntime" for c in report.checks)
    # any other view is an ordinary reshape of an integer tensor (whose squeeze then fails here)
    with pytest.raises(
        OnnxImportError, match=r"node name: sq\): \[ShapeInferenceError\] Dimension of input 0 must be 1"
    ):
        import_model(_viewed_ids_model([2, 4]))
