"""`fuse-sibling-matmuls`: matmuls that read the same activations with weights of their own become
one matmul over the weights side by side, whose column ranges are the old results.

GPT-2's attention projection is one [768, 2304] weight the importer splits into q, k and v
matmuls (one per part of the ONNX `Split`), and BERT or Llama write three projections of one
normed input (Llama also its gate and up projections). Each matmul pays the AMP's fixed costs,
its exchange phases and its partial-sum reduction on its own; at 128 tokens over 1,472 tiles
those dominate (GPT-2 small: three [128 x 768] x [768 x 768] products priced 9,338 cycles each,
one [128 x 768] x [768 x 2304] product 18,563). Fused, the planner chooses one grid for the whole
product, and each old result is a `graph.slice` of its columns carrying the old value's name
(its checkpoint). A slice is one more exchange (a window of the fused result), which is why
only short products are fused (at most `FUSE_ROWS` rows): with more rows each product runs near
the AMP's rate on its own and the slices cost more than fusing saves (the 1,024-token examples:
attention_gqa 1,901,675 -> 2,146,429 cycles fused, transformer_block 1,965,364 -> 2,103,791).

Siblings are `graph.matmul`s in one block with the same lhs, no transposed operand, no pinned
plan, and each a weight of its own: a `graph.parameter` with no other use, of one element type
and depth (K). Their initial values are joined along the columns (seeded ones are
materialized, as `roll-layers` does when it stacks them). The fused matmul is marked derived:
it is not a value of the model's reference.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType, UnitAttr
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ipu.dialects import graph
from ipu.dialects.value_names import DERIVED
from ipu.transforms.levels import expect_level

FUSE_ROWS = 256
"""The most rows (tokens) of the products fused."""


def _weight(op: graph.MatmulOp) -> graph.ParameterOp | None:
    """The matmul's rhs when it is a weight read by nothing else (and the matmul not pinned)."""
    p = op.rhs.owner
    pinned = any(name.startswith("plan.") for name in op.attributes)
    if isinstance(p, graph.ParameterOp) and op.rhs.has_one_use() and not pinned:
        return p
    return None


def _joined(params: list[graph.ParameterOp], vector: bool = False, name: str | None = None) -> graph.ParameterOp:
    """One parameter holding `params` side by side along the columns (`vector`: bias vectors,
    [n] or [1, n] each, joined into one [N])."""
    cols = [graph.stored_values(p) for p in params]
    t = params[0].result.type
    assert isinstance(t, TensorType)
    if len({str(el) for _, el in cols}) == 1:
        el, values = cols[0][1], [v for v, _ in cols]
    else:  # stored at different widths: all at the result's dtype
        el, values = t.element_type, [np.asarray(graph.parameter_values(p)) for p in params]
    data = np.concatenate([v.reshape(-1) for v in values] if vector else values, axis=-1)
    data = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<"))
    shape = list(data.shape)
    init = DenseIntOrFPElementsAttr(TensorType(el, shape), BytesAttr(data.tobytes()))
    op = graph.ParameterOp(name or "+".join(p.sym_name.data for p in params), init, TensorType(t.element_type, shape))
    op.result.name_hint = f"{params[0].result.name_hint or 'w'}_fused"
    return op


def _bias_add(v: SSAValue) -> tuple[graph.AddOp, graph.ParameterOp] | None:
    """The add of a bias vector to `v` when that is its only use, and the bias: a
    `graph.parameter` of [cols] or [1, cols] and `v`'s element type, in `v`'s block, the result of
    `v`'s type."""
    if not v.has_one_use():
        return None
    add = next(iter(v.uses)).operation
    if not isinstance(add, graph.AddOp) or add.lhs is add.rhs or add.parent_block() is not v.owner.parent_block():
        return None
    b = add.rhs if add.lhs is v else add.lhs
    t, bt = v.type, b.type
    assert isinstance(t, TensorType)
    if not isinstance(b.owner, graph.ParameterOp) or not isinstance(bt, TensorType) or add.result.type != t:
        return None
    cols = t.get_shape()[-1]
    if tuple(bt.get_shape()) not in ((cols,), (1, cols)) or bt.element_type != t.element_type:
        return None
    return add, b.owner


def fuse_group(group: list[graph.MatmulOp]) -> graph.MatmulOp:
    """Replace the sibling matmuls of `group` (block order) by one over their joined weights and
    a column slice of it for each. When every product's only use adds a bias vector of its own
    (BERT's q, k and v projections), the biases are joined too and added once to the fused
    product, and the slices are the biased values (one add over the product's blocks, not three
    over the sliced ones after their moves)."""
    rewriter = Rewriter()
    first = group[0]
    params = [_weight(op) for op in group]
    assert all(p is not None for p in params)
    w = _joined(params)  # type: ignore[arg-type]
    lhs_t, r_t = first.lhs.type, first.result.type
    assert isinstance(lhs_t, TensorType) and isinstance(r_t, TensorType)
    m = lhs_t.get_shape()[0]
    n = w.result.type.get_shape()[1]  # type: ignore[union-attr]
    fused = graph.MatmulOp(first.lhs, w.result, TensorType(r_t.element_type, [m, n]))
    fused.attributes[DERIVED] = UnitAttr()
    if "onnx.node" in first.attributes:
        fused.attributes["onnx.node"] = first.attributes["onnx.node"]
    fused.result.name_hint = f"{first.result.name_hint or 'mm'}_fused"
    rewriter.insert_op([w, fused], InsertPoint.before(first))
    found = [_bias_add(op.result) for op in group]
    biases = [f for f in found if f is not None] if all(found) else []  # (add, bias) a product, or none
    src: graph.MatmulOp | graph.AddOp = fused
    if biases:
        b = _joined([bias for _, bias in biases], vector=True, name=f"{w.sym_name.data}.bias")
        src = graph.AddOp(fused.result, b.result, fused.result.type)
        src.attributes[DERIVED] = UnitAttr()
        src.result.name_hint = f"{fused.result.name_hint}_biased"
        rewriter.insert_op([b, src], InsertPoint.after(fused))
    at, prev = 0, src
    for i, op in enumerate(group):
        add, bias = biases[i] if biases else (None, None)
        cols = op.result.type.get_shape()[1]  # type: ignore[union-attr]
        named = add or op  # the value the slice stands for: the biased one where the add is fused
        part = graph.SliceOp(src.result, (0, at), op.result.type)
        if "onnx.node" in named.attributes:
            part.attributes["onnx.node"] = named.attributes["onnx.node"]
        part.result.name_hint = named.result.name_hint
        rewriter.insert_op(part, InsertPoint.after(prev))
        prev = part
        named.result.replace_all_uses_with(part.result)
        if add is not None and bias is not None:
            rewriter.erase_op(add)
            if not bias.result.uses:  # BERT's export shares one zero bias among all its adds
                rewriter.erase_op(bias)
        p = op.rhs.owner
        rewriter.erase_op(op)
        assert isinstance(p, graph.ParameterOp)
        rewriter.erase_op(p)
        at += cols
    return fused


def sibling_groups(block: Block) -> list[list[graph.MatmulOp]]:
    """The matmuls of `block` worth fusing, grouped by lhs (each group in block order)."""
    groups: dict[tuple[SSAValue, str, int], list[graph.MatmulOp]] = defaultdict(list)
    for op in block.ops:
        if not isinstance(op, graph.MatmulOp) or any(op.flags()) or _weight(op) is None:
            continue
        if op.lhs.type.get_shape()[0] > FUSE_ROWS:  # type: ignore[union-attr]
            continue
        k = op.rhs.type.get_shape()[0]  # type: ignore[union-attr]
        groups[(op.lhs, str(op.rhs.type.element_type), k)].append(op)  # type: ignore[union-attr]
    return [g for g in groups.values() if len(g) > 1]


def fuse_function(f: func.FuncOp) -> int:
    """Fuse every sibling group of `f` (nested bodies included); the number of groups fused."""
    count = 0
    for block in [b for op in f.walk() for r in op.regions for b in r.blocks]:
        for group in sibling_groups(block):
            fuse_group(group)
            count += 1
    return count


@dataclass(frozen=True)
class FuseSiblingMatmulsPass(ModulePass):
    """Matmuls of one lhs by weights of their own: one matmul, its columns sliced."""

    name = "fuse-sibling-matmuls"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        for f in op.body.block.ops:
            if isinstance(f, func.FuncOp):
                fuse_function(f)


__all__ = ["FuseSiblingMatmulsPass", "fuse_function", "fuse_group", "sibling_groups"]
