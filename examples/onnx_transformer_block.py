"""A pre-norm transformer block as an ONNX model, built with `onnx.helper`.

LayerNormalization, q/k/v projections, grouped-query causal `Attention` (opset 23, 3-D inputs
with q_num_heads / kv_num_heads), output projection, residual, LayerNormalization, an FFN with
GeLU spelled out as exporters emit it, residual. fp32. `gelu="tanh"` (default) is PyTorch's
`gelu(approximate="tanh")` chain (Pow, Mul, Add, Mul, Tanh, Add, Mul, Mul), which `graph.gelu`
computes exactly; `gelu="erf"` is the exact form (Div, Erf, Add, Mul, Mul), which the importer
approximates by the tanh form (|difference| <= 4.8e-4 per element).

    python examples/onnx_transformer_block.py out.onnx [--seq 64 --d-model 128 --heads 8 --kv-heads 2 --ffn 512]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 23


def build_block(
    seq: int = 64,
    d_model: int = 128,
    heads: int = 8,
    kv_heads: int = 2,
    ffn: int = 512,
    seed: int = 0,
    gelu: str = "tanh",
) -> onnx.ModelProto:
    """The block with Gaussian weights (std 0.05) from `seed`; input `x` and output `y` are [seq, d_model]."""
    rng = np.random.default_rng(seed)
    hd = d_model // heads
    kv = kv_heads * hd

    def w(name: str, *shape: int, std: float = 0.05) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * std).astype(np.float32), name)

    def const(name: str, value: object) -> onnx.TensorProto:
        return numpy_helper.from_array(np.asarray(value), name)

    inits = [
        numpy_helper.from_array((1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32), "ln1_gamma"),
        w("ln1_beta", d_model, std=0.02),
        w("wq", d_model, d_model),
        w("wk", d_model, kv),
        w("wv", d_model, kv),
        w("wo", d_model, d_model),
        numpy_helper.from_array(np.ones(d_model, np.float32), "ln2_gamma"),
        w("ln2_beta", d_model, std=0.02),
        w("w1", d_model, ffn),
        w("c1", ffn, std=0.02),
        w("w2", ffn, d_model),
        w("c2", d_model, std=0.02),
        const("shape_q", np.array([1, seq, d_model], np.int64)),
        const("shape_kv", np.array([1, seq, kv], np.int64)),
        const("shape_2d", np.array([seq, d_model], np.int64)),
        const("sqrt2", np.float32(math.sqrt(2.0))),
        const("sqrt_2_over_pi", np.float32(math.sqrt(2.0 / math.pi))),
        const("cubic", np.float32(0.044715)),
        const("three", np.float32(3.0)),
        const("one", np.float32(1.0)),
        const("half", np.float32(0.5)),
    ]
    if gelu == "erf":
        gelu_nodes = [
            helper.make_node("Div", ["hb", "sqrt2"], ["g_div"], name="gelu_div"),
            helper.make_node("Erf", ["g_div"], ["g_erf"], name="gelu_erf"),
            helper.make_node("Add", ["g_erf", "one"], ["g_add"], name="gelu_add"),
            helper.make_node("Mul", ["hb", "g_add"], ["g_mul"], name="gelu_mul"),
            helper.make_node("Mul", ["g_mul", "half"], ["ge"], name="gelu_half"),
        ]
    elif gelu == "tanh":
        gelu_nodes = [
            helper.make_node("Pow", ["hb", "three"], ["g_cube"], name="gelu_pow"),
            helper.make_node("Mul", ["g_cube", "cubic"], ["g_cubic"], name="gelu_cubic"),
            helper.make_node("Add", ["hb", "g_cubic"], ["g_inner"], name="gelu_inner"),
            helper.make_node("Mul", ["g_inner", "sqrt_2_over_pi"], ["g_scaled"], name="gelu_scale"),
            helper.make_node("Tanh", ["g_scaled"], ["g_tanh"], name="gelu_tanh"),
            helper.make_node("Add", ["g_tanh", "one"], ["g_add"], name="gelu_add"),
            helper.make_node("Mul", ["hb", "half"], ["g_half"], name="gelu_half"),
            helper.make_node("Mul", ["g_half", "g_add"], ["ge"], name="gelu_mul"),
        ]
    else:
        raise ValueError(f"gelu must be 'tanh' or 'erf', got {gelu!r}")
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln1_gamma", "ln1_beta"], ["n1"], name="ln1", axis=-1, epsilon=1e-5),
        n("MatMul", ["n1", "wq"], ["q"], name="q_proj"),
        n("MatMul", ["n1", "wk"], ["k"], name="k_proj"),
        n("MatMul", ["n1", "wv"], ["v"], name="v_proj"),
        n("Reshape", ["q", "shape_q"], ["q3"], name="q_batch"),
        n("Reshape", ["k", "shape_kv"], ["k3"], name="k_batch"),
        n("Reshape", ["v", "shape_kv"], ["v3"], name="v_batch"),
        n("Attention", ["q3", "k3", "v3"], ["att"], name="attn", is_causal=1, q_num_heads=heads, kv_num_heads=kv_heads),
        n("Reshape", ["att", "shape_2d"], ["att2"], name="att_unbatch"),
        n("MatMul", ["att2", "wo"], ["o"], name="o_proj"),
        n("Add", ["x", "o"], ["r1"], name="residual1"),
        n("LayerNormalization", ["r1", "ln2_gamma", "ln2_beta"], ["n2"], name="ln2", axis=-1, epsilon=1e-5),
        n("MatMul", ["n2", "w1"], ["h"], name="ffn_up"),
        n("Add", ["h", "c1"], ["hb"], name="ffn_up_bias"),
        *gelu_nodes,
        n("MatMul", ["ge", "w2"], ["f"], name="ffn_down"),
        n("Add", ["f", "c2"], ["fb"], name="ffn_down_bias"),
        n("Add", ["r1", "fb"], ["y"], name="residual2"),
    ]
    graph = helper.make_graph(
        nodes,
        "transformer_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, d_model])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [seq, d_model])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ipu-compiler")
    onnx.checker.check_model(model)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description="write the ONNX transformer block")
    ap.add_argument("output")
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--ffn", type=int, default=512)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gelu", choices=("tanh", "erf"), default="tanh")
    a = ap.parse_args()
    onnx.save(build_block(a.seq, a.d_model, a.heads, a.kv_heads, a.ffn, a.seed, a.gelu), a.output)


if __name__ == "__main__":
    main()
