"""`DepthToSpace` and `SpaceToDepth`, spelled as ONNX defines them: a reshape to rank 6, a
transpose and a reshape back (`Composer`); the transpose lowers like any other."""

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


def _shape_const(c: Composer, shape: tuple[int, ...]) -> str:
    return c.const(np.array(shape, np.int64))


@lowering("DepthToSpace", "SpaceToDepth")
def _depth_space(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    to_space = node.op_type == "DepthToSpace"
    _no_attrs(im, attrs, ("blocksize", "mode") if to_space else ("blocksize",))
    x = im.get(node.input[0])
    if not isinstance(x, Val):
        raise im.fail("constant input could not be folded")
    if len(x.shape) != 4 or "blocksize" not in attrs:
        raise im.fail(f"an input [N, C, H, W] and a blocksize are needed (input {list(x.shape)})")
    b = int(attrs["blocksize"])  # type: ignore[call-overload]
    n, ch, h, w = x.shape
    mode = attrs.get("mode", b"DCR")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    c = Composer(node)
    if to_space:
        if b <= 0 or ch % (b * b):
            raise im.fail(f"blocksize {b}: its square must divide the {ch} channels")
        if mode not in ("DCR", "CRD"):
            raise im.fail(f"mode '{mode}' is not DCR or CRD")
        if mode == "DCR":
            split, perm = (n, b, b, ch // (b * b), h, w), [0, 3, 4, 1, 5, 2]
        else:
            split, perm = (n, ch // (b * b), b, b, h, w), [0, 1, 4, 2, 5, 3]
        out = (n, ch // (b * b), h * b, w * b)
    else:
        if b <= 0 or h % b or w % b:
            raise im.fail(f"blocksize {b} must divide the height {h} and width {w}")
        split, perm = (n, ch, h // b, b, w // b, b), [0, 3, 5, 1, 2, 4]
        out = (n, ch * b * b, h // b, w // b)
    y = c.node("Reshape", [node.input[0], _shape_const(c, split)])
    y = c.node("Transpose", [y], perm=perm)
    c.lower(im, c.node("Reshape", [y, _shape_const(c, out)]))
