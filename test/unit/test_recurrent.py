"""Recurrent layers as loops: an ONNX LSTM, GRU or RNN imports as one `graph.repeat` per
direction whose trips slice their step's input projections out of a stacked value
(`graph.iteration_slice`) and store their state into a carried stack (`graph.iteration_store`),
so the IR is one cell's size whatever the sequence length; compiled on sim16 and checked against
onnxruntime (long sequences, both directions, Y, Y_h and Y_c)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from xdsl.dialects.builtin import TensorType, f32  # noqa: E402
from xdsl.ir import Block, Region  # noqa: E402
from xdsl.utils.exceptions import VerifyException  # noqa: E402

from ipu import api  # noqa: E402
from ipu.dialects import graph as g  # noqa: E402
from ipu.frontends.onnx_import import import_model  # noqa: E402
from ipu.frontends.value_builder import dense  # noqa: E402
from ipu.golden.evaluator import evaluate  # noqa: E402

RNG = np.random.default_rng(3)


def recurrent(op: str, steps: int, batch: int = 2, inp: int = 6, hidden: int = 8, direction: str = "forward"):
    """An ONNX model of one `op` layer (LSTM, GRU or RNN) with all three outputs it has."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    d = 2 if direction == "bidirectional" else 1
    inits = [
        numpy_helper.from_array((RNG.standard_normal((d, gates * hidden, inp)) * 0.4).astype(np.float32), "W"),
        numpy_helper.from_array((RNG.standard_normal((d, gates * hidden, hidden)) * 0.4).astype(np.float32), "R"),
        numpy_helper.from_array((RNG.standard_normal((d, 2 * gates * hidden)) * 0.1).astype(np.float32), "B"),
    ]
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, ["x", "W", "R", "B"], outs, hidden_size=hidden, direction=direction)
    shapes = {"Y": [steps, d, batch, hidden], "Y_h": [d, batch, hidden], "Y_c": [d, batch, hidden]}
    graph = helper.make_graph(
        [node],
        op.lower(),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, batch, inp])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, shapes[o]) for o in outs],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def ops_of(model) -> list[str]:
    return [op.name for op in import_model(model).walk()]


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_the_ir_is_one_cell_whatever_the_sequence_length(op: str) -> None:
    short, long = ops_of(recurrent(op, 4)), ops_of(recurrent(op, 500))
    assert short == long
    assert short.count("graph.repeat") == 1
    assert short.count("graph.iteration_slice") == {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    assert short.count("graph.iteration_store") == 1


@pytest.mark.parametrize(
    ("op", "steps", "direction"),
    [
        ("LSTM", 64, "forward"),
        ("GRU", 24, "bidirectional"),
        ("RNN", 16, "reverse"),
        ("LSTM", 1, "forward"),
        ("GRU", 1, "bidirectional"),
    ],
)
def test_recurrent_layers_match_onnxruntime(op: str, steps: int, direction: str) -> None:
    m = recurrent(op, steps, direction=direction)
    text = str(import_model(m))
    assert text.count("graph.repeat") == (0 if steps == 1 else 2 if direction == "bidirectional" else 1)
    report = api.run(api.compile(m, "sim16"), seed=1)
    assert [c for c in report.checks if c.kind == "oracle"], "no oracle check"
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]


def _store_in_loop(count: int, stack: tuple[int, ...], value: tuple[int, ...]) -> g.RepeatOp:
    """A repeat of `count` trips carrying a stack of `stack` and storing a `value` into it."""
    st, vt = TensorType(f32, stack), TensorType(f32, value)
    body = Block(arg_types=[st])
    one = g.ParameterOp("one", dense(np.ones(value, np.float32), np.float32), vt)
    store = g.IterationStoreOp.create(operands=[body.args[0], one.result], result_types=[st])
    body.add_ops([one, store, g.YieldOp.create(operands=[store.result])])
    zeros = g.ParameterOp("z", dense(np.zeros(stack, np.float32), np.float32), st)
    Block([zeros])
    return g.RepeatOp(count, [zeros.result], Region(body))


def test_iteration_store_verifies_its_loop_and_shapes() -> None:
    _store_in_loop(4, (4, 2, 3), (2, 3)).verify()
    with pytest.raises(VerifyException, match="stacks 4 slices in a graph.repeat of 3 iterations"):
        _store_in_loop(3, (4, 2, 3), (2, 3)).verify()
    with pytest.raises(VerifyException, match="is not one slice of"):
        _store_in_loop(4, (4, 2, 3), (3, 2)).verify()
    st, vt = TensorType(f32, (4, 2, 3)), TensorType(f32, (2, 3))
    a = g.ParameterOp("a", dense(np.zeros((4, 2, 3), np.float32), np.float32), st)
    b = g.ParameterOp("b", dense(np.zeros((2, 3), np.float32), np.float32), vt)
    loose = g.IterationStoreOp(a.result, b.result)
    Block([a, b, loose])
    with pytest.raises(VerifyException, match="directly in the body of a graph.repeat"):
        loose.verify()


def test_the_golden_evaluator_fills_the_stack_trip_by_trip() -> None:
    m = recurrent("RNN", 5, batch=1, inp=2, hidden=3)
    module = import_model(m)
    f = next(op for op in module.walk() if op.name == "func.func")
    x = RNG.standard_normal((5, 1, 2)).astype(np.float32)
    y = evaluate(f, {"x": x}).outputs[0]
    w = numpy_helper.to_array(m.graph.initializer[0])[0]
    r = numpy_helper.to_array(m.graph.initializer[1])[0]
    b = numpy_helper.to_array(m.graph.initializer[2])[0]
    h = np.zeros((1, 3), np.float32)
    ys = []
    for t in range(5):
        h = np.tanh(x[t] @ w.T + h @ r.T + b[:3] + b[3:])
        ys.append(h)
    np.testing.assert_allclose(y.reshape(5, 1, 3), np.stack(ys), rtol=1e-5, atol=1e-6)
