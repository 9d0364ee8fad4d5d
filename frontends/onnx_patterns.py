"""Subgraph patterns the ONNX importer still fuses on the ONNX graph into one `graph` op:
rotary's `rotate_half` (attention is in `onnx_attention`). GeLU, SiLU, rsqrt, LayerNorm and
RMSNorm are raised on graph IR after import (`transforms/graph/raise_graph_ops.py`), where both
frontends share them. Each matcher
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
    """A matched chain: `kind` ("rotate_half" | "attention" | "refused"), the ONNX value(s) it
    reads (`input` first, then `more`) and its attributes."""

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


MATCHERS = (match_rotate_half,)
