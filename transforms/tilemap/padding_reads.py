"""Whether a plan value's padding can be read as data, so must hold zeros.

Every tile keeps a padded block, and kernels run over whole blocks, so a block's padding is
computed on like data. That is harmless wherever padding only ever lands in padding: an
elementwise kernel puts f(padding) in its result's padding, a row kernel reads only its `valid`
columns, a reshape keeps each block one range of the flattened tensor, and moves (a
convolution's or pool's patch among them), host reads and checkpoints take real elements only
(a head split or merge that keeps each block where it is, a view or copy, carries its padding).
It matters where a padded axis is summed: the AMP's contraction. `padding_read` follows a value
through its in-place consumers and answers True at a contraction over a padded axis or at any
consumer it does not know (the conservative answer).

map-tiles asks it twice. Before staging partial sums: when no consumer reads the sum's padding,
the partials move as whole padded blocks, so the staging buffer is written in full and needs no
zero fill. And for host-written values (the host writes real elements only, and tile memory
holds anything): a weight or an input whose padding is read is written over whole blocks,
padding as zeros (an input the host cannot write so is moved once into a zero-padded buffer).

One exception to "moves take real elements only": the exchange moves whole 32-bit words, so a
row of an odd number of halves ends in a word whose second half is the source block's first
padding element, and the move writes it over the destination's (zeroed) padding. A move of such
a value carries its padding into its result's: `padding_read` follows it (`odd_half_tail`).
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects import func
from xdsl.ir import SSAValue

from ipu.dialects import plan
from ipu.dialects.layout import Layout
from ipu.dialects.repeat import RepeatBase

# consumers whose result holds f(padding) only in its own padding: follow the result
_PASS_THROUGH = (
    plan.UnaryOp,
    plan.BinaryOp,
    plan.CastOp,
    plan.SelectOp,
    plan.TransposeOp,
    plan.ReshapeOp,  # each tile's block is one range of the flattened tensor: past its end is padding
    plan.RowwiseOp,
    plan.ReduceOp,
    plan.IterationSliceOp,
    plan.IterationStoreOp,
)
# consumers that read real elements only (moves, host reads; a serial gemm moves in windows)
_REAL_ONLY = (
    plan.RearrangeOp,
    plan.SerialGemmOp,
    plan.SplitHeadsOp,
    plan.MergeHeadsOp,
    plan.PermuteOp,
    plan.WindowOp,
    func.ReturnOp,
)


def padded_axis(lay: Layout, axis: int) -> bool:
    """Whether some block of `lay` reaches past the tensor along `axis`."""
    return lay.padded_shape[axis] > lay.shape[axis]


def odd_half_tail(lay: Layout, element_type: object) -> bool:
    """Whether a move of a `lay` value copies its first padding element along the last axis: a
    half tensor whose last axis (the contiguous one) is odd and padded, moved in whole words."""
    bits = getattr(element_type, "bitwidth", 32)
    return bits == 16 and lay.shape[-1] % 2 == 1 and padded_axis(lay, len(lay.shape) - 1)


def padding_read(value: SSAValue) -> bool:
    """Whether a consumer of `value` (in place, transitively) may read its padding as data."""
    seen: set[SSAValue] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            op = use.operation
            if isinstance(op, plan.SplitHeadsOp | plan.MergeHeadsOp) and op.copies_block():
                todo.append(op.result)  # a view or copy of each block: its padding is the result's
                continue
            if isinstance(op, _REAL_ONLY):
                if isinstance(op, func.ReturnOp) or not odd_half_tail(v.type.layout, v.type.tensor.element_type):
                    continue
                if isinstance(op, plan.SerialGemmOp):
                    return True  # its windows are the AMP's operands
                todo += list(op.results)  # the move's result holds this value's tail padding
                continue
            if isinstance(op, _PASS_THROUGH):
                todo.append(op.results[0])
            elif isinstance(op, plan.GemmOp):
                # the contraction: the lhs's axis 1, the rhs's axis 0
                if padded_axis(v.type.layout, 1 if use.index == 0 else 0):
                    return True
                todo.append(op.result)
            elif isinstance(op, plan.ConvOp | plan.PoolOp):
                # the input arrives in a patch move (real elements only); a convolution's filters
                # [KH, KW, C, O] are read in place: C is contracted, O lands in the result's padding
                if use.index == 0:
                    continue
                if padded_axis(v.type.layout, 2):
                    return True
                todo.append(op.results[0])
            elif isinstance(op, plan.YieldOp):
                # the loop may already be a tilemap.repeat (map-tiles rewrites the loop before
                # its body): either way the carried value is the next trip's argument and a result
                rep = op.parent_op()
                if not isinstance(rep, RepeatBase):
                    return True
                arg = rep.regions[0].block.args[use.index]
                todo += [rep.results[use.index], arg]
            else:
                return True
    return False


def whole_blocks(src: Layout, dst: Layout) -> tuple[Layout, Layout] | None:
    """`src` and `dst` over their padded extent (every block's padding seen as data), when the
    two extents agree on every axis, so a move between them writes each destination block in
    full; else None."""
    ext = src.padded_shape
    if ext != dst.padded_shape:
        return None
    return replace(src, shape=ext), replace(dst, shape=ext)


__all__ = ["odd_half_tail", "padded_axis", "padding_read", "whole_blocks"]
