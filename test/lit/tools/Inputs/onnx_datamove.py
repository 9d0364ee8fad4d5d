"""Write the data-movement ONNX model the ipu-translate/ipu-run lit test reads: `OUT.onnx` with
a Slice, a Split, a Pad and a Concat of computed tensors and a batched MatMul [2, 4, 8] x
[2, 8, 4] of two computed operands."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    ints = {
        "st": [2],
        "en": [6],
        "ax": [2],
        "sp": [1, 3],
        "pads": [0, 1, 0, 0, 1, 0],
    }
    nodes = [
        helper.make_node("Tanh", ["x"], ["h"], name="/h/Tanh"),
        helper.make_node("Slice", ["h", "st", "en", "ax"], ["s"], name="/s/Slice"),
        helper.make_node("Split", ["h", "sp"], ["a", "b"], axis=1, name="/sp/Split"),
        helper.make_node("Pad", ["a", "pads"], ["pa"], name="/pa/Pad"),
        helper.make_node("Concat", ["pa", "b"], ["c"], axis=1, name="/c/Concat"),
        helper.make_node("Transpose", ["h"], ["ht"], perm=[0, 2, 1], name="/ht/Transpose"),
        helper.make_node("MatMul", ["c", "ht"], ["y"], name="/y/MatMul"),
    ]
    inits = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()]
    graph = helper.make_graph(
        nodes,
        "datamove",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8])],
        [
            helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 4, 4]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 4]),
        ],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
