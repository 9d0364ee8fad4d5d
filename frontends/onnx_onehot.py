"""`OneHot`, spelled with comparisons and a `Where`: position j along the new axis is `on` where
the index equals j or j - depth (a negative index counts back from depth), else `off`; an index
outside [-depth, depth) gives a row of `off`, as ONNX defines."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ipu.frontends.onnx_import import Val, _Importer, _no_attrs, lowering


@lowering("OneHot", since=9)
def _one_hot(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("axis",))
    idx, depth, values = (im.get(i) for i in node.input)
    if not isinstance(idx, Val):
        raise im.fail("constant OneHot could not be folded")
    if isinstance(depth, Val) or isinstance(values, Val):
        raise im.fail("depth and values must be constants (the result's shape and contents)")
    d = int(np.asarray(depth).reshape(-1)[0])
    vals = np.asarray(values).reshape(-1)
    if d <= 0 or vals.size != 2:
        raise im.fail(f"depth {d} must be positive and values two (off, on), got {vals.size}")
    rank = len(idx.shape) + 1
    axis = int(attrs.get("axis", -1))  # type: ignore[call-overload]
    if not -rank <= axis < rank:
        raise im.fail(f"axis {axis} out of range for a rank-{rank} result")
    axis %= rank
    where = [d if a == axis else 1 for a in range(rank)]
    dt = np.dtype(idx.dtype)
    positions = np.arange(d, dtype=dt if dt.kind in "iuf" else np.int64).reshape(where)
    out, p = node.output[0], f"{node.output[0]}.onehot"
    consts = {
        f"{p}.axes": np.array([axis], np.int64),
        f"{p}.pos": positions,
        f"{p}.neg": positions - np.asarray(d, positions.dtype),
        f"{p}.on": vals[1:2].reshape(()),
        f"{p}.off": vals[0:1].reshape(()),
    }
    nodes = [
        helper.make_node("Unsqueeze", [node.input[0], f"{p}.axes"], [f"{p}.idx"], name=f"{p}.idx"),
        helper.make_node("Equal", [f"{p}.idx", f"{p}.pos"], [f"{p}.hit"], name=f"{p}.hit"),
        helper.make_node("Equal", [f"{p}.idx", f"{p}.neg"], [f"{p}.back"], name=f"{p}.back"),
        helper.make_node("Or", [f"{p}.hit", f"{p}.back"], [f"{p}.mask"], name=f"{p}.mask"),
        helper.make_node("Where", [f"{p}.mask", f"{p}.on", f"{p}.off"], [out], name=f"{p}.where"),
    ]
    im.lower_nodes(nodes, consts)
