"""Subgraph patterns the ONNX importer still fuses on the ONNX graph into one `graph` op:
LayerNorm and RMSNorm over the last axis, and rotary's `rotate_half` (attention is in
`onnx_attention`). GeLU, SiLU and rsqrt are raised on graph IR after import
(`transforms/graph/raise_graph_ops.py`), where both frontends share them. Each matcher
looks at a root node (the last node of the chain) and returns a `Fused` description: the kind
of op, the ONNX value it reads and its attributes. Interior nodes are then lowered only if
something else still reads their values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx


@dataclass
class Fused:
    """A matched chain: `kind` ("gelu" | "layer_norm" | "rms_norm" | "silu" | "rsqrt" |
    "rotate_half" | "attention" | "refused"), the ONNX value(s) it reads (`input` first, then
    `more`) and its attributes."""

    kind: str
    input: str
    attrs: dict[str, object] = field(default_factory=dict)
    more: tuple[str, ...] = ()

    @property
    def reads(self) -> tuple[str, ...]:
        """The values lowering it needs (none for a refusal: it fails before reading any)."""
        return () if self.kind == "refused" else (self.input, *self.more)


@dataclass
class GraphView:
    """Producers, consumers and folded constants of an ONNX graph, for matching."""

    producer: dict[str, onnx.NodeProto]
    consumers: dict[str, list[onnx.NodeProto]]
    consts: dict[str, np.ndarray]
    outputs: set[str]
    last_axis_reduce: Callable[[onnx.NodeProto], bool]  # a ReduceMean over the last axis, keepdims
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # static shapes, where inferred
    opset: int = 17

    def node(self, name: str, *op_types: str) -> onnx.NodeProto | None:
        n = self.producer.get(name)
        return n if n is not None and n.op_type in op_types and name not in self.consts else None

    def sole(self, name: str, *op_types: str) -> onnx.NodeProto | None:
        """`node(name, ...)` when only one node reads `name` (the chain may be folded away)."""
        n = self.node(name, *op_types)
        return n if n is not None and self.private(name) else None

    def private(self, name: str) -> bool:
        """Read by exactly one node and not a graph output: safe to fold into a pattern."""
        return len(self.consumers.get(name, [])) == 1 and name not in self.outputs

    def scalar(self, name: str) -> float | None:
        c = self.consts.get(name)
        if c is None or c.size != 1 or c.dtype.kind not in "fiu":
            return None
        return float(c.reshape(-1)[0])


def _near(v: float | None, want: float, rel: float = 1e-4) -> bool:
    return v is not None and abs(v - want) <= rel * abs(want)


def _square_of(v: GraphView, name: str) -> str | None:
    n = v.node(name, "Pow", "Mul")
    if n is None or not v.private(name):
        return None
    if n.op_type == "Pow":
        return n.input[0] if _near(v.scalar(n.input[1]), 2.0) else None
    return n.input[0] if n.input[0] == n.input[1] else None


def match_norm(v: GraphView, root: onnx.NodeProto) -> Fused | None:
    """`t / sqrt(mean(t^2) + eps)` over the last axis (or `t * reciprocal(...)`): RMSNorm of t,
    or LayerNorm of x when t = x - mean(x)."""
    if root.op_type == "Div":
        num, den = root.input
    elif root.op_type == "Mul":
        for n, r in (root.input, root.input[::-1]):
            rec = v.node(r, "Reciprocal")
            if rec is not None and v.private(r):
                num, den = n, rec.input[0]
                break
            one_over = v.node(r, "Div")  # the classic exporter's rsqrt: 1 / sqrt(...)
            if one_over is not None and v.private(r) and _near(v.scalar(one_over.input[0]), 1.0):
                num, den = n, one_over.input[1]
                break
        else:
            return None
    else:
        return None
    sq = v.node(den, "Sqrt")
    if sq is None or not v.private(den):
        return None
    add = v.node(sq.input[0], "Add")
    if add is None or not v.private(sq.input[0]):
        return None
    for var, eps_name in (add.input, add.input[::-1]):
        eps = v.scalar(eps_name)
        mean = v.node(var, "ReduceMean")
        if eps is None or mean is None or not v.private(var) or not v.last_axis_reduce(mean):
            continue
        if _square_of(v, mean.input[0]) != num:
            continue
        sub = v.node(num, "Sub")
        if sub is not None:
            m = v.node(sub.input[1], "ReduceMean")
            if m is not None and m.input[0] == sub.input[0] and v.last_axis_reduce(m):
                # `num` is read by the square and the division: not private, by construction
                if len(v.consumers.get(num, [])) == 2 and num not in v.outputs and v.private(sub.input[1]):
                    return Fused("layer_norm", sub.input[0], {"epsilon": eps})
        return Fused("rms_norm", num, {"epsilon": eps})
    return None


def _last_axis_slice(v: GraphView, name: str) -> tuple[str, int, int] | None:
    """(x, start, stop) of a private step-1 `Slice` of x along its last axis."""
    n = v.node(name, "Slice")
    shape = v.shapes.get(n.input[0]) if n is not None else None
    if n is None or shape is None or not v.private(name) or len(n.input) < 3:
        return None
    consts = [v.consts.get(i) for i in n.input[1:]]
    if any(c is None for c in consts):
        return None
    starts, ends = consts[0].reshape(-1), consts[1].reshape(-1)
    axes = consts[2].reshape(-1) if len(consts) > 2 and consts[2] is not None else np.arange(len(starts))
    steps = consts[3].reshape(-1) if len(consts) > 3 and consts[3] is not None else np.ones_like(starts)
    if len(starts) != 1 or int(axes[0]) % len(shape) != len(shape) - 1 or int(steps[0]) != 1:
        return None
    d = shape[-1]
    lo, hi = (int(min(max(x if x >= 0 else x + d, 0), d)) for x in (starts[0], ends[0]))
    return n.input[0], lo, hi


def match_rotate_half(v: GraphView, root: onnx.NodeProto) -> Fused | None:
    """Rotary embedding's `concat(-x[..., h:], x[..., :h])` over the last axis (h = D / 2): a
    fixed signed permutation of x's last axis, lowered as a matmul by that permutation."""
    if root.op_type != "Concat" or len(root.input) != 2:
        return None
    shape = v.shapes.get(root.output[0])
    a = next((x.i for x in root.attribute if x.name == "axis"), None)
    if shape is None or a is None or a % len(shape) != len(shape) - 1:
        return None
    neg = v.node(root.input[0], "Neg")
    if neg is None or not v.private(root.input[0]):
        return None
    hi, lo = _last_axis_slice(v, neg.input[0]), _last_axis_slice(v, root.input[1])
    d = shape[-1]
    if hi is None or lo is None or hi[0] != lo[0] or d % 2 or hi[1:] != (d // 2, d) or lo[1:] != (0, d // 2):
        return None
    return Fused("rotate_half", hi[0])


MATCHERS = (match_norm, match_rotate_half)
