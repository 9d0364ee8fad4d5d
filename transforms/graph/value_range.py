"""Graph values that are provably non-negative, and the max pools that can be planned so.

A producer walk over the ops whose results cannot be negative (a ReLU, a sigmoid, an exponential,
a softmax, an absolute value, a square root), through the views that only move, cast or
zero-pad elements, and the ops that keep the sign of non-negative operands (a max with one, an
add, multiply or concat of such, a max pool of one). It answers where a zero may stand in for an
excluded element: a max over windows that include padding is unchanged by zero padding when
every element is >= 0 (each window holds at least one input element, which wins or ties), so a
ReLU's max pool runs on the conv family's zero-filled patches (`families.pool`).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from ipu.dialects import graph

_NONNEGATIVE = (graph.ReluOp, graph.SigmoidOp, graph.ExpOp, graph.AbsOp, graph.SqrtOp, graph.SoftmaxOp)
_VIEWS = (graph.ReshapeOp, graph.TransposeOp, graph.SliceOp, graph.PadOp, graph.CastOp)


def nonnegative(v: SSAValue, depth: int = 16) -> bool:
    """Whether every element of `v` is >= 0 (or NaN) by construction (`depth`: producers walked)."""
    op = v.owner
    if not isinstance(op, Operation) or depth <= 0:
        return False
    if isinstance(op, _NONNEGATIVE):
        return True
    if isinstance(op, _VIEWS):
        return nonnegative(op.operands[0], depth - 1)
    if isinstance(op, graph.MaxOp):
        return any(nonnegative(x, depth - 1) for x in op.operands)
    if isinstance(op, graph.AddOp | graph.MulOp | graph.ConcatOp):
        return all(nonnegative(x, depth - 1) for x in op.operands)
    if isinstance(op, graph.PoolOp) and op.kind.data == "max":
        return nonnegative(op.input, depth - 1)
    return False


def max_pool_planned(op: graph.PoolOp) -> bool:
    """Whether the pool plan family takes `op` as it is: a max pool with strides and dilations
    below 256 (a byte each in its kernel's call) whose zero-filled padding cannot win, because it
    has none (no pads, no ceil-mode window past the input) or its input is `nonnegative`.
    `expand-windows` rewrites the other pools."""
    geo = op.geometry()
    if op.kind.data != "max" or max(geo.strides + geo.dilations) >= 256:
        return False
    reach_h = (geo.out_h - 1) * geo.strides[0] + (geo.kh - 1) * geo.dilations[0] + 1
    reach_w = (geo.out_w - 1) * geo.strides[1] + (geo.kw - 1) * geo.dilations[1] + 1
    unpadded = not any(geo.pads) and reach_h <= geo.h and reach_w <= geo.w
    return unpadded or nonnegative(op.input)


__all__ = ["max_pool_planned", "nonnegative"]
