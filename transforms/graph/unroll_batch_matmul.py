"""`unroll-batch-matmul`: every `graph.batch_matmul` becomes one `graph.matmul` per batch.

The importer keeps a batched MatMul as one `graph.batch_matmul` so that `raise-graph-ops` can
read attention chains on graph IR; what no pattern fused is unrolled here before planning: each
batch's rows of the operands read by `graph.slice` of their row views, the products joined by
`graph.concat` and viewed back as `[b, m, n]`. The new values are derived (no checkpoint); the
joined result keeps the batch matmul's name. `plan-ops` and `plan-decide` apply it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import TensorType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ipu.dialects import graph
from ipu.dialects.value_names import DERIVED
from ipu.transforms.levels import expect_level


def _derived(rewriter: Rewriter, at: Operation, op: Operation) -> SSAValue:
    op.attributes[DERIVED] = UnitAttr()
    if "onnx.node" in at.attributes:
        op.attributes["onnx.node"] = at.attributes["onnx.node"]
    rewriter.insert_op(op, InsertPoint.before(at))
    return op.results[0]


def unroll(op: graph.BatchMatmulOp) -> None:
    """Replace `op` by its per-batch matmuls."""
    rewriter = Rewriter()
    et = op.result.type.element_type
    (b, m, k), n = op.lhs.type.get_shape(), op.rhs.type.get_shape()[2]
    rows_a = _derived(rewriter, op, graph.ReshapeOp(op.lhs, TensorType(et, (b * m, k))))
    rows_b = _derived(rewriter, op, graph.ReshapeOp(op.rhs, TensorType(et, (b * k, n))))
    parts = []
    for i in range(b):
        ai = _derived(rewriter, op, graph.SliceOp(rows_a, (i * m, 0), TensorType(et, (m, k))))
        bi = _derived(rewriter, op, graph.SliceOp(rows_b, (i * k, 0), TensorType(et, (k, n))))
        parts.append(_derived(rewriter, op, graph.MatmulOp(ai, bi, TensorType(et, (m, n)))))
    joined = _derived(rewriter, op, graph.ConcatOp(parts, 0, TensorType(et, (b * m, n)))) if b > 1 else parts[0]
    view = graph.ReshapeOp(joined, op.result.type)
    if "onnx.node" in op.attributes:
        view.attributes["onnx.node"] = op.attributes["onnx.node"]
    view.result.name_hint = op.result.name_hint
    rewriter.replace_op(op, view)


def unroll_function(f: func.FuncOp) -> int:
    """Unroll every batch matmul of `f` (nested bodies included); how many there were."""
    ops = [op for op in f.walk() if isinstance(op, graph.BatchMatmulOp)]
    for op in ops:
        unroll(op)
    return len(ops)


@dataclass(frozen=True)
class UnrollBatchMatmulPass(ModulePass):
    """Turn batched matmuls into one matmul per batch."""

    name = "unroll-batch-matmul"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        for f in op.body.block.ops:
            if isinstance(f, func.FuncOp):
                unroll_function(f)


__all__ = ["UnrollBatchMatmulPass", "unroll", "unroll_function"]
