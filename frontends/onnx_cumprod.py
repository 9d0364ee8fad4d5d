"""`CumProd`, spelled as a log-depth scan (Hillis-Steele) with the ops the importer lowers: in
round d the running products are multiplied by themselves shifted d positions along the axis
(the vacated positions filled with 1), d = 1, 2, 4, ...; exclusive shifts the input by one
first, reverse shifts the other way. ceil(log2 n) multiplies of the whole tensor."""

from __future__ import annotations

import numpy as np
import onnx

from ipu.frontends.onnx_compose import Composer
from ipu.frontends.onnx_import import _Importer, _no_attrs, float_input, lowering


def _shift(c: Composer, x: str, n: int, d: int, axis: int, rank: int, reverse: bool, dt: type) -> str:
    """x moved d positions along `axis` (towards the end, or the start when `reverse`), 1 filling."""
    lo, hi = (d, n) if reverse else (0, n - d)
    bounds = [c.const(np.array([v], np.int64)) for v in (lo, hi, axis)]
    part = c.node("Slice", [x, *bounds])
    pads = [0] * (2 * rank)
    pads[axis + (rank if reverse else 0)] = d
    return c.node("Pad", [part, c.const(np.array(pads, np.int64)), c.const(np.array(1, dt))])


@lowering("CumProd", since=26)
def _cumprod(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("exclusive", "reverse"))
    x = float_input(im, node)  # an integer product could leave int32
    rank = len(x.shape)
    ax = np.asarray(im.const(node.input[1], "CumProd's axis")).reshape(-1)
    if ax.size != 1 or not -rank <= int(ax[0]) < rank:
        raise im.fail(f"axis {ax.tolist()} for a rank-{rank} tensor")
    axis = int(ax[0]) % rank
    n, dt = x.shape[axis], np.dtype(x.dtype).type
    reverse, exclusive = bool(attrs.get("reverse", 0)), bool(attrs.get("exclusive", 0))
    c = Composer(node)
    y = node.input[0]
    if exclusive and n > 0:
        y = _shift(c, y, n, 1, axis, rank, reverse, dt)
    d = 1
    while d < n:
        y = c.node("Mul", [y, _shift(c, y, n, d, axis, rank, reverse, dt)])
        d *= 2
    c.lower(im, y)
