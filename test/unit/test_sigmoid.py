"""`graph.sigmoid` at every level: the op's reference, the `sigmoid` kernel's ABI entry, the builder
method, the ONNX `Sigmoid` import, and a compiled run that passes (the kernel's emulated values and
cycles: test_emulator.py)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

import ipu
from ipu.abi.kernels import KERNELS
from ipu.builder import GraphBuilder
from ipu.dialects import graph as g
from ipu.frontends.onnx_import import import_model
from ipu.golden.evaluator import evaluate, load_module, main_function

EXTREMES = [-100.0, -88.0, -20.0, -1.0, 0.0, 1.0, 20.0, 88.0, 100.0]
MODEL = """
func.func @main(%x: tensor<9xf32>) -> tensor<9xf32> {
  %s = graph.sigmoid %x : tensor<9xf32> -> tensor<9xf32>
  func.return %s : tensor<9xf32>
}
"""


def test_golden_reference_is_the_logistic_function() -> None:
    x = np.array(EXTREMES, np.float32)
    got = evaluate(main_function(load_module(MODEL)), {"x": x}).outputs[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 1.0 / (1.0 + np.exp(-x.astype(np.float64))), rtol=1e-6, atol=1e-7)
    assert got[0] == 0.0 and got[-1] == 1.0  # saturates without nan
    assert isinstance(next(iter(main_function(load_module(MODEL)).body.block.ops)), g.SigmoidOp)


def test_kernel_is_appended_to_the_abi_as_a_unary_map() -> None:
    k = KERNELS["sigmoid"]
    # indices are the package ABI: sigmoid was appended after gelu_erf, and keeps its index
    assert list(KERNELS).index("sigmoid") == list(KERNELS).index("gelu_erf") + 1 == 22
    assert k.unary and k.param_names == ("elements",) and k.n_in == 1


def test_builder_and_a_compiled_run() -> None:
    b = GraphBuilder()
    x = b.input("x", (64, 128), "f16")
    w = b.parameter("w", (128, 64), "f16", std=0.05, seed=3)
    h = b.matmul(x, w, name="h")
    b.output(b.mul(h, b.sigmoid(h, name="s"), name="silu"))
    module = b.build()
    assert "graph.sigmoid %h : tensor<64x64xf16> -> tensor<64x64xf16>" in str(module)
    report = ipu.run(ipu.compile(module, target="sim16"), seed=2)
    assert report.passed
    assert any(c.name == "s" for c in report.checks)


def test_onnx_sigmoid_imports_as_graph_sigmoid() -> None:
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["y"], name="act")],
        "m",
        [helper.make_tensor_value_info("x", f, [4, 6])],
        [helper.make_tensor_value_info("y", f, [4, 6])],
    )
    text = str(import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])))
    assert 'graph.sigmoid %x {onnx.node = "act:Sigmoid"} : tensor<4x6xf32> -> tensor<4x6xf32>' in text
    assert "graph.tanh" not in text  # no longer spelled as 0.5 tanh(x / 2) + 0.5
