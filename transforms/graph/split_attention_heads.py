"""`split-attention-heads`: a `graph.attention` with more query heads than the target has tiles
becomes one attention per group of heads that fits, their results joined along the heads.

The attention plan gives every query head tiles of its own (its grid is kv heads x group x query
blocks x key blocks), so 18 heads on a 16-tile target had no plan. Split, each part is an
attention over whole KV groups (query heads [a, a + c) with the KV heads they read), or, when
one group alone has more query heads than tiles (multi-query attention), over a divisor of the
group sharing its KV head; a per-head bias is sliced with its heads, a shared one read by every
part. The parts run one after another: slower than one attention, never refused for its heads.
`plan-ops` applies it for its target before planning.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import TensorType, UnitAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ipu.dialects import graph
from ipu.dialects.value_names import DERIVED
from ipu.transforms.levels import expect_level
from ipu.transforms.target_of import set_module_target


def head_chunks(hq: int, hkv: int, tiles: int) -> list[tuple[int, int, int, int]]:
    """(first query head, query heads, first KV head, KV heads) of each part: whole KV groups of
    at most `tiles` query heads, or pieces of one group when a group alone is larger."""
    g = hq // hkv
    if g <= tiles:
        m = tiles // g  # KV groups per part
        return [(k * g, min(m, hkv - k) * g, k, min(m, hkv - k)) for k in range(0, hkv, m)]
    c = max(d for d in range(1, tiles + 1) if g % d == 0)  # query heads per part, within a group
    return [(a, c, a // g, 1) for a in range(0, hq, c)]


def _slice_heads(rewriter: Rewriter, at: graph.AttentionOp, v: SSAValue, first: int, count: int) -> SSAValue:
    t = v.type
    assert isinstance(t, TensorType)
    _, s, d = t.get_shape()
    op = graph.SliceOp(v, (first, 0, 0), TensorType(t.element_type, (count, s, d)))
    op.attributes[DERIVED] = UnitAttr()  # not in the model's reference: no checkpoint
    rewriter.insert_op(op, InsertPoint.before(at))
    return op.result


def split_heads_for(op: graph.AttentionOp, tiles: int) -> bool:
    """Rewrite `op` into parts of at most `tiles` query heads; False when it already fits."""
    hq, hkv = op.q.type.get_shape()[0], op.k.type.get_shape()[0]
    if hq <= tiles:
        return False
    rewriter = Rewriter()
    parts = []
    for q0, qn, k0, kn in head_chunks(hq, hkv, tiles):
        q = _slice_heads(rewriter, op, op.q, q0, qn)
        k = _slice_heads(rewriter, op, op.k, k0, kn) if kn != hkv else op.k
        v = _slice_heads(rewriter, op, op.v, k0, kn) if kn != hkv else op.v
        operands = [q, k, v]
        if op.bias is not None:
            per_head = op.bias.type.get_shape()[0] != 1
            operands.append(_slice_heads(rewriter, op, op.bias, q0, qn) if per_head else op.bias)
        part = graph.AttentionOp.create(
            operands=operands, result_types=[q.type], attributes=dict(op.attributes), properties=dict(op.properties)
        )
        part.attributes[DERIVED] = UnitAttr()
        rewriter.insert_op(part, InsertPoint.before(op))
        parts.append(part.results[0])
    joined = graph.ConcatOp(parts, 0, op.result.type)
    if "onnx.node" in op.attributes:
        joined.attributes["onnx.node"] = op.attributes["onnx.node"]
    joined.result.name_hint = op.result.name_hint
    rewriter.replace_op(op, joined)
    return True


def split_function(f: func.FuncOp, tiles: int) -> int:
    """Split every attention of `f` (nested bodies included) that has more heads than `tiles`."""
    return sum(split_heads_for(op, tiles) for op in list(f.walk()) if isinstance(op, graph.AttentionOp))


@dataclass(frozen=True)
class SplitAttentionHeadsPass(ModulePass):
    """Split attentions with more query heads than the target has tiles."""

    name = "split-attention-heads"
    target: str | None = None  # unset: the module's #ipu.target, else mk2

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        t = set_module_target(op, self.target, self.name)
        for f in op.body.block.ops:
            if isinstance(f, func.FuncOp):
                split_function(f, t.tiles)


__all__ = ["SplitAttentionHeadsPass", "head_chunks", "split_function"]
