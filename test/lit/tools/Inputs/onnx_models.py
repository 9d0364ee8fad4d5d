"""Write the small ONNX models the ipu-translate --import-onnx lit tests read: `mlp OUT`, `act OUT`,
`ints OUT` or `bad OUT`."""

import math
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "fc1.weight"),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "fc1.bias"),
        numpy_helper.from_array(np.float32(math.sqrt(2)), "sqrt2"),
        numpy_helper.from_array(np.float32(1), "one"),
        numpy_helper.from_array(np.float32(0.5), "half"),
    ]
    nodes = [
        helper.make_node("MatMul", ["input.1", "fc1.weight"], ["h"], name="/fc1/MatMul"),
        helper.make_node("Add", ["h", "fc1.bias"], ["hb"], name="/fc1/Add"),
        helper.make_node("Div", ["hb", "sqrt2"], ["d"], name="/act/Div"),
        helper.make_node("Erf", ["d"], ["e"], name="/act/Erf"),
        helper.make_node("Add", ["e", "one"], ["a"], name="/act/Add"),
        helper.make_node("Mul", ["hb", "a"], ["m"], name="/act/Mul"),
        helper.make_node("Mul", ["m", "half"], ["g"], name="/act/Mul_1"),
        helper.make_node("Softmax", ["g"], ["probs"], name="/softmax/Softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("input.1", F, [4, 8])],
        [helper.make_tensor_value_info("probs", F, [4, 16])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def act() -> onnx.ModelProto:
    """A rank-4 input through the activations of real exports: SiLU as x * Sigmoid(x), an RMS
    scale as Reciprocal(Sqrt(.)), Div by a computed tensor, Clip with constant bounds, Neg."""
    inits = [numpy_helper.from_array(np.float32(v), n) for n, v in (("lo", -2.0), ("hi", 2.0), ("eps", 1e-6))]
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["sg"], name="/act/Sigmoid"),
        helper.make_node("Mul", ["x", "sg"], ["h"], name="/act/Mul"),
        helper.make_node("Mul", ["h", "h"], ["sq"], name="/rms/Mul"),
        helper.make_node("Add", ["sq", "eps"], ["se"], name="/rms/Add"),
        helper.make_node("Sqrt", ["se"], ["rt"], name="/rms/Sqrt"),
        helper.make_node("Reciprocal", ["rt"], ["inv"], name="/rms/Reciprocal"),
        helper.make_node("Div", ["h", "inv"], ["d"], name="/div/Div"),
        helper.make_node("Clip", ["d", "lo", "hi"], ["c"], name="/clip/Clip"),
        helper.make_node("Neg", ["c"], ["y"], name="/out/Neg"),
    ]
    graph = helper.make_graph(
        nodes,
        "act",
        [helper.make_tensor_value_info("x", F, [1, 2, 4, 8])],
        [helper.make_tensor_value_info("y", F, [1, 2, 4, 8])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def ints() -> onnx.ModelProto:
    """int8 and int64 inputs, a bool and an int8 output: the narrow add wraps, a comparison and a
    Where on the floats it casts to, ArgMax."""
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"], name="/add/Add"),
        helper.make_node("Less", ["a", "b"], ["lt"], name="/cmp/Less"),
        helper.make_node("Cast", ["s"], ["f"], name="/cast/Cast", to=F),
        helper.make_node("Neg", ["f"], ["nf"], name="/neg/Neg"),
        helper.make_node("Where", ["lt", "f", "nf"], ["w"], name="/where/Where"),
        helper.make_node("ArgMax", ["k"], ["am"], name="/argmax/ArgMax", axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "ints",
        [
            helper.make_tensor_value_info("a", TensorProto.INT8, [4, 8]),
            helper.make_tensor_value_info("b", TensorProto.INT8, [4, 8]),
            helper.make_tensor_value_info("k", TensorProto.INT64, [4, 8]),
        ],
        [
            helper.make_tensor_value_info("s", TensorProto.INT8, [4, 8]),
            helper.make_tensor_value_info("lt", TensorProto.BOOL, [4, 8]),
            helper.make_tensor_value_info("w", F, [4, 8]),
            helper.make_tensor_value_info("am", TensorProto.INT64, [4]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def bad() -> onnx.ModelProto:
    nodes = [helper.make_node("Bernoulli", ["x"], ["y"], name="/head/Bernoulli")]  # random: never lowered
    vi = [helper.make_tensor_value_info(n, F, [4]) for n in ("x", "y")]
    return helper.make_model(helper.make_graph(nodes, "bad", vi[:1], vi[1:]), opset_imports=[helper.make_opsetid("", 18)])


if __name__ == "__main__":
    onnx.save({"mlp": mlp, "act": act, "ints": ints, "bad": bad}[sys.argv[1]](), sys.argv[2])
