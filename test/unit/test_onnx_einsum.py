"""ONNX `Einsum`, spelled with the importer's own lowerings (`frontends/onnx_einsum.py`): each
equation compiled for sim16, emulated, and compared with numpy's einsum."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ipu import api  # noqa: E402
from ipu.frontends.onnx_einsum import parse_equation  # noqa: E402


def test_parse_equation_expands_ellipses_and_implicit_outputs():
    assert parse_equation("...ij,...jk->...ik", [3, 3]) == (["Zij", "Zjk"], "Zik")
    assert parse_equation("ij,kj", [2, 2]) == (["ij", "kj"], "ik")  # implicit: letters used once, sorted
    assert parse_equation("bii", [3]) == (["bii"], "b")
    with pytest.raises(ValueError, match="names 2 axes of a rank-3 operand"):
        parse_equation("ij->i", [3])
    with pytest.raises(ValueError, match="repeats a letter or names one no operand has"):
        parse_equation("ij->iz", [2])


def _model(eq: str, ins: list[tuple[int, ...]], weights: list[np.ndarray], out_shape: tuple[int, ...]):
    names = [f"x{i}" for i in range(len(ins))]
    nodes = [helper.make_node("Relu", [n], [n + "r"]) for n in names]
    operands = [n + "r" for n in names] + [f"w{i}" for i in range(len(weights))]
    nodes.append(helper.make_node("Einsum", operands, ["y"], equation=eq))
    inits = [numpy_helper.from_array(w, f"w{i}") for i, w in enumerate(weights)]
    ins_vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in zip(names, ins, strict=True)]
    g = helper.make_graph(
        nodes, "g", ins_vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))], inits
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("eq", "ins", "weights"),
    [
        ("bhqd,bhkd->bhqk", [(1, 2, 4, 8), (1, 2, 6, 8)], []),  # attention scores
        ("bii->bi", [(2, 5, 5)], []),  # a diagonal
        ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], []),  # a batch under an ellipsis
        ("bnd,nde->bne", [(4, 3, 8)], [(3, 8, 6)]),  # a per-head weight: batch n, contraction d
        ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 3)], []),  # three operands, pairwise
        ("ij,kj", [(3, 4), (5, 4)], []),  # implicit output
    ],
)
def test_einsum_matches_numpy(tmp_path, eq, ins, weights):
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(s).astype(np.float32) for s in weights]
    xs = {f"x{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(ins)}
    want = np.einsum(eq, *(np.maximum(x, 0) for x in xs.values()), *ws)
    path = tmp_path / "m.onnx"
    onnx.save(_model(eq, ins, ws, want.shape), path)
    report = api.run(api.compile(str(path), "sim16"), xs)
    assert report.checks and all(c.result.passed for c in report.checks)
    np.testing.assert_allclose(report.result.outputs["y"], want, rtol=1e-4, atol=1e-4)


def test_einsum_refusal_names_the_equation(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_model("ij,jk->ik", [(3, 4), (5, 6)], [], (3, 6)), path)
    with pytest.raises(api.ApiError, match=r"Einsum.*equation 'ij,jk->ik': letter 'j' has sizes 4 and 5"):
        api.compile(str(path), "sim16")
