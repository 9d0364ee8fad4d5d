"""Write the embedding-lookup ONNX model and id files the ipu-run gather lit test reads:
`model OUT.onnx` (GPT-2's first steps: Gather of token embeddings by int64 ids [1, 8], plus
position embeddings Gathered by a Range, then a MatMul), `ids OUT.npz VALUE` (ids with VALUE at
position 5)."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

S, V, D, N = 8, 64, 32, 16


def model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    scalar = {k: numpy_helper.from_array(np.array(v, np.int64)) for k, v in (("start", 0), ("limit", S), ("delta", 1))}
    nodes = [
        helper.make_node("Gather", ["wte", "input_ids"], ["tok"], axis=0, name="/wte/Gather"),
        *(helper.make_node("Constant", [], [k], value=v) for k, v in scalar.items()),
        helper.make_node("Range", ["start", "limit", "delta"], ["position_ids"], name="/Range"),
        helper.make_node("Gather", ["wpe", "position_ids"], ["pos"], axis=0, name="/wpe/Gather"),
        helper.make_node("Add", ["tok", "pos"], ["h"], name="/Add"),
        helper.make_node("MatMul", ["h", "w"], ["logits"], name="/head/MatMul"),
    ]
    inits = [
        numpy_helper.from_array((rng.standard_normal((V, D)) * 0.5).astype(np.float32), "wte"),
        numpy_helper.from_array((rng.standard_normal((S, D)) * 0.1).astype(np.float32), "wpe"),
        numpy_helper.from_array((rng.standard_normal((D, N)) * 0.2).astype(np.float32), "w"),
    ]
    graph = helper.make_graph(
        nodes,
        "embed",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, S])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, S, N])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


if __name__ == "__main__":
    if sys.argv[1] == "model":
        onnx.save(model(), sys.argv[2])
    else:
        ids = np.array([[3, 1, 4, 1, 5, 9, 2, 6]], np.int64)
        ids[0, 5] = int(sys.argv[3])
        np.savez(sys.argv[2], input_ids=ids)
