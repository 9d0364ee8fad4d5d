"""The ONNX graph view and fused-chain record the attention matcher (`onnx_attention`) works
with. Every other fusion (GeLU, SiLU, rsqrt, LayerNorm, RMSNorm, rotary's rotate_half, grouped KV
heads) is raised on graph IR after import (`transforms/graph/raise_graph_ops.py`), where both
frontends share it; `MATCHERS` lists matchers still run on the ONNX graph before lowering (none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx


@dataclass
class Fused:
    """A matched chain: `kind` ("attention" | "refused"), the ONNX value(s) it
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


MATCHERS: tuple = ()  # every fusion but attention is raised on graph IR
