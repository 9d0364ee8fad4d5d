"""`OneHot`, spelled with comparisons and a `Where`: position j along the new axis is `on` where
the index equals j or j - depth (a negative index counts back from depth), else `off`; an index
outside [-depth, depth) gives a row of `off`, as ONNX defines."""

from __future__ import annotations

import numpy as np
import onnx

from ipu.frontends.onnx_compose import Composer
from ipu.frontends.onnx_import import (
    _Importer,
    _no_attrs,
    lowering,
)
from ipu.frontends.value_builder import (
    Val,
)


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
    dt = np.dtype(idx.dtype)
    positions = np.arange(d, dtype=dt if dt.kind in "iuf" else np.int64).reshape(
        [d if a == axis else 1 for a in range(rank)]
    )
    c = Composer(node)
    i = c.node("Unsqueeze", [node.input[0], c.const(np.array([axis], np.int64))])
    hit = c.node("Equal", [i, c.const(positions)])
    back = c.node("Equal", [i, c.const(positions - np.asarray(d, positions.dtype))])
    mask = c.node("Or", [hit, back])
    c.lower(im, c.node("Where", [mask, c.const(vals[1:2].reshape(())), c.const(vals[0:1].reshape(()))]))
