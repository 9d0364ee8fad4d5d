"""`map-tiles`: place plan shards on tiles as `tilemap` IR, recording the tile mapping.

Every plan value becomes a per-tile buffer; every plan op becomes kernel runs over its tile
group, and every layout conversion a `tilemap.move` whose transfer families come from
`layout.conversion_transfers`. Host inputs, outputs, weights and checkpoints keep their
logical layouts so codegen can bind them.

Each plan op kind has one `RewritePattern` (`Map<Op>`, listed in `PATTERNS`), applied in one
forward sweep; an op no pattern maps is refused. Values cross the type boundary through
`builtin.unrealized_conversion_cast`: a pattern casts its plan operands to buffers, reads the
layouts from their plan types, and casts its buffer result back, so the next pattern still sees
plan types; the casts are reconciled away at the end. What is not op-local stays in two small
helpers: `convert_signature` (the arguments become host writes) and `number_checkpoints`
(checkpoint indices in program order). An op that runs one kernel over every element of each
tile's block is one `MapElementwise` line in `PATTERNS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPattern
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.isa import float_bits
from ipu.abi.kernels import norm_block_columns
from ipu.abi.tables import ATTENTION_OFFSETS, MOVE, SLICE_ROWS
from ipu.dialects import plan, tilemap
from ipu.dialects.layout import Layout, Windows, as_2d, conversion_transfers, patch_covered
from ipu.dialects.table import table_attr
from ipu.log import log_event
from ipu.transforms.levels import expect_level
from ipu.transforms.tilemap.padding_reads import padding_read, whole_blocks


def buffer_type(t: plan.PlanTensorType) -> tilemap.BufferType:
    lay = t.layout
    return tilemap.BufferType(lay.block, t.tensor.element_type, lay.first_tile, lay.tiles, t.layout_attr.memory.data)


def _i64(**kw: int) -> DictionaryAttr:
    return DictionaryAttr({k: IntegerAttr(v, 64) for k, v in kw.items()})


def _run(kernel: str, inputs: list[SSAValue], out: tilemap.BufferType, **params: int) -> tilemap.RunOp:
    return tilemap.RunOp.create(
        operands=inputs,
        result_types=[out],
        attributes={"kernel": StringAttr(kernel), "params": _i64(**params)},
    )


def _move(
    src: SSAValue,
    dst_t: tilemap.BufferType,
    src_l: Layout,
    dst_l: Layout,
    reason: str,
    perm: tuple[int, ...] | None = None,
    offset: tuple[int, ...] | None = None,
    clip: bool = False,
) -> tilemap.MoveOp:
    es = src.type.esize
    table = conversion_transfers(src_l, dst_l, es, es, perm, offset, clip)
    # an exchange writes only real elements: a destination with padding (or a window reaching
    # outside its source) is zeroed first, so padding never carries stale bits into kernels
    zero = dst_l.has_padding or clip
    attrs = {"transfers": table_attr(table, MOVE), "reason": StringAttr(reason)}
    if zero:
        attrs["zero_fill"] = builtin.UnitAttr()
        # only the tail past the data every tile's block holds needs zeros (a staging buffer's
        # slots and a clipped window may miss any element): whole 8-byte words of it
        if src_l.partial < 0 and not clip:
            attrs |= _zero_from(dst_l, es)
    return tilemap.MoveOp.create(operands=[src], result_types=[dst_t], attributes=attrs)


def _window_move(
    src: SSAValue,
    memory: str,
    src_l: Layout,
    dst_l: Layout,
    reason: str,
    *,
    offset: tuple[int, ...] | None = None,
    windows: Windows | None = None,
) -> tilemap.MoveOp:
    """The move giving each block of `dst_l` (in `memory`) its source window: at one `offset`
    for every block (`_move`'s), or with `windows` each block's own per axis (as a conv
    patch's), zero-filled first where a window reaches past the source."""
    dst_t = tilemap.BufferType(dst_l.block, src.type.element_type, dst_l.first_tile, dst_l.tiles, memory)
    if windows is None:
        return _move(src, dst_t, src_l, dst_l, reason, offset=offset)
    es = src.type.esize
    table = conversion_transfers(src_l, dst_l, es, es, windows=windows)
    attrs = {"transfers": table_attr(table, MOVE), "reason": StringAttr(reason)}
    if not patch_covered(src_l.shape, dst_l, windows):
        attrs["zero_fill"] = UnitAttr()  # padding, or a block reaching past the source
    return tilemap.MoveOp.create(operands=[src], result_types=[dst_t], attributes=attrs)


def _named(op: Operation, hint: str | None) -> SSAValue:
    """`op`'s first result, named `hint` (if any)."""
    if hint:
        op.results[0].name_hint = hint
    return op.results[0]


def _checkpoint(
    buf: SSAValue, name: str, value: str, tensor: TensorType, layout: plan.LayoutAttr, aspect: str = ""
) -> tilemap.CheckpointOp:
    """Sample `buf` as checkpoint `name`: graph value `value` (its stable name), or its `aspect`."""
    attrs = {
        "sym_name": StringAttr(name),
        "value": StringAttr(value),
        "tensor": tensor,
        "layout": layout,
    }
    if aspect:
        attrs["aspect"] = StringAttr(aspect)
    return tilemap.CheckpointOp.create(operands=[buf], attributes=attrs)


def _value_checkpoint(op: Operation, buf: SSAValue) -> list[Operation]:
    """The checkpoint of `op`'s graph operation (sampling its first result), if it has one."""
    value = plan.graph_value_of(op)
    if value is None:
        return []
    t: plan.PlanTensorType = op.results[0].type
    return [_checkpoint(buf, value, value, t.tensor, t.layout_attr)]


def _as_buffers(values: Sequence[SSAValue]) -> tuple[list[Operation], list[SSAValue]]:
    """Casts of plan values to their buffers (folded away by the final reconcile)."""
    casts = [UnrealizedConversionCastOp.cast_one(v, buffer_type(v.type)) for v in values]
    return [c for c, _ in casts], [b for _, b in casts]


def _replace(
    rewriter: PatternRewriter, op: Operation, new_ops: list[Operation], bufs: Sequence[SSAValue], check: bool = True
) -> None:
    """Replace plan op `op` by `new_ops`, whose buffers `bufs` hold its results; then sample
    the first for the numerical check (unless the pattern made its own checkpoints)."""
    if check:
        new_ops = new_ops + _value_checkpoint(op, bufs[0])
    backs = [UnrealizedConversionCastOp.cast_one(b, r.type) for b, r in zip(bufs, op.results, strict=True)]
    rewriter.insert([*new_ops, *(c for c, _ in backs)], InsertPoint.before(op))
    for r, (_, v) in zip(op.results, backs, strict=True):
        rewriter.replace_all_uses_with(r, v)
    rewriter.erase(op)


def _replace_by_run(
    rewriter: PatternRewriter, op: Operation, kernel: str, operands: Sequence[SSAValue] | None = None, **params: int
) -> None:
    """Replace `op` by one kernel run over its operands (or `operands` in their place) into its
    result's buffer."""
    casts, ins = _as_buffers(op.operands if operands is None else operands)
    res = op.results[0]
    r = _run(kernel, ins, buffer_type(res.type), **params)
    _replace(rewriter, op, [*casts, r], [_named(r, res.name_hint)])


def _replace_by_view_or_copy(
    rewriter: PatternRewriter, op: plan.SplitHeadsOp | plan.MergeHeadsOp | plan.ReshapeOp
) -> bool:
    """Replace a one-to-one op whose tiles copy their blocks as they are (`copies_block`) by a view
    of its operand's buffer where it is one (`is_view`: no code, the same bytes), else by a `copy`
    on each tile; False (nothing done) for any other."""
    if op.is_view():
        casts, ins = _as_buffers(op.operands)
        v = tilemap.ViewOp.create(operands=ins, result_types=[buffer_type(op.result.type)])
        _replace(rewriter, op, [*casts, v], [_named(v, op.result.name_hint)])
        return True
    if op.copies_block():
        _replace_by_run(rewriter, op, "copy", elements=op.result.type.layout.block_elements)
        return True
    return False


# --- the function boundary ----------------------------------------------------------------


def padded_inputs(f: func.FuncOp) -> set[int]:
    """The plan function's arguments whose padding some kernel reads as data."""
    return {
        i
        for i, a in enumerate(f.body.block.args)
        if isinstance(a.type, plan.PlanTensorType) and a.type.layout.has_padding and padding_read(a)
    }


def _zero_padded_write(t: plan.PlanTensorType, host: dict[str, Attribute]) -> dict[str, Attribute] | None:
    """The host write's `tensor` and `host_pads` when the host can write `t`'s blocks whole, their
    padding as zeros: the device tensor is the layout's padded extent (high pads added to any
    the host already writes), and the layout over it gives the same blocks on the same tiles.
    None where it cannot (a stream with its own host shape, or a layout that differs there)."""
    lay = t.layout
    ext = lay.padded_shape
    if "host_shape" in host or t.layout_attr.layout(ext) != replace(lay, shape=ext):
        return None
    r = len(ext)
    old = host.get("host_pads")
    pads = list(old.get_values()) if isinstance(old, DenseArrayBase) else [0] * (2 * r)
    for i in range(r):
        pads[r + i] += ext[i] - lay.shape[i]
    tensor = builtin.TensorType(t.tensor.element_type, ext)
    return {"tensor": tensor, "host_pads": DenseArrayBase.from_list(builtin.i64, pads)}


def convert_signature(f: func.FuncOp, padded_reads: set[int] = frozenset()) -> None:
    """Turn the plan function's arguments into host writes of their buffers (casts to the plan
    types keep their users unchanged) and give it no arguments or results. The host writes real
    elements only, and tile memory holds anything: an argument in `padded_reads` is written over
    its whole padded blocks, padding as zeros (host pads), or where the host cannot, moved once
    more into a zero-padded buffer of the same layout."""
    block = f.body.block
    names = [s.data for s in f.attributes["ipu.inputs"].data]  # type: ignore[union-attr]
    new_ops: list[Operation] = []
    zeroed: list[Operation] = []  # after every host write: the run call writes all inputs first
    for i, a in enumerate(block.args):
        t: plan.PlanTensorType = a.type
        host = _host_shape(f, names[i])
        whole = _zero_padded_write(t, host) if i in padded_reads else None
        w = tilemap.HostWriteOp.create(
            result_types=[buffer_type(t)],
            attributes={"sym_name": StringAttr(names[i]), "tensor": t.tensor, "layout": t.layout_attr}
            | host
            | (whole or {}),
        )
        buf = _named(w, a.name_hint)
        new_ops.append(w)
        if i in padded_reads and whole is None:  # a move leaves zeros around the real elements
            mv = _move(buf, buffer_type(t), t.layout, t.layout, "zero padding")
            buf = _named(mv, f"{a.name_hint or names[i]}_zeroed")
            zeroed.append(mv)
        back, v = UnrealizedConversionCastOp.cast_one(buf, t)
        zeroed.append(back)
        a.replace_all_uses_with(v)
    new_ops += zeroed
    if block.first_op is None:
        block.add_ops(new_ops)
    else:
        block.insert_ops_before(new_ops, block.first_op)
    for a in reversed(block.args):
        block.erase_arg(a)
    f.function_type = builtin.FunctionType.from_lists([], [])


def _zero_from(lay: Layout, esize: int) -> dict[str, Attribute]:
    """`zero_from` of a zero fill of a `lay` block: past its data prefix, in whole 8-byte words."""
    unit = max(1, 8 // esize)
    first = lay.data_prefix // unit * unit
    return {"zero_from": IntegerAttr(first, 64)} if first else {}


def _host_shape(f: func.FuncOp, name: str, output: bool = False) -> dict[str, Attribute]:
    """The `host_shape`, `host_perm` and `host_pads` attributes of stream `name`, from the plan
    function's `ipu.host_shapes`, `ipu.host_perms` and `ipu.host_pads` (inputs the host
    rearranges: `host-layout`)."""
    out: dict[str, Attribute] = {}
    keys = (("ipu.host_shapes", "host_shape"), ("ipu.host_perms", "host_perm"), ("ipu.host_pads", "host_pads"))
    for key, attr in keys[:1] if output else keys:
        table = f.attributes.get(key)
        value = table.data.get(name) if isinstance(table, builtin.DictionaryAttr) else None
        if value is not None:
            out[attr] = value
    return out


def count_checkpoints(f: func.FuncOp) -> int:
    """The function's checkpoints (loop bodies once)."""
    return sum(isinstance(op, tilemap.CheckpointOp) for op in f.body.walk())


class MapReturn(RewritePattern):
    """`func.return` -> a host read per output, then an empty return."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        f = op.parent_op()
        assert isinstance(f, func.FuncOp)
        outs = [s.data for s in f.attributes["ipu.outputs"].data]  # type: ignore[union-attr]
        casts, ins = _as_buffers(op.arguments)
        reads = [
            tilemap.HostReadOp.create(
                operands=[b],
                attributes={
                    "sym_name": StringAttr(outs[i]),
                    "tensor": v.type.tensor,
                    "layout": v.type.layout_attr,
                }
                | _host_shape(f, outs[i], output=True),
            )
            for i, (v, b) in enumerate(zip(op.arguments, ins, strict=True))
        ]
        rewriter.replace(op, [*casts, *reads, func.ReturnOp()], [])


# --- structure ---------------------------------------------------------------------------------


class MapRepeat(RewritePattern):
    """`plan.repeat` -> `tilemap.repeat` over the carried buffers; the body moves into it as is
    (its ops are mapped in place by the same sweep, once)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.RepeatOp, rewriter: PatternRewriter) -> None:
        old = op.body.block
        body = Block(arg_types=[buffer_type(a.type) for a in old.args])
        args = []
        for pa, ba in zip(old.args, body.args, strict=True):
            ba.name_hint = pa.name_hint
            back, v = UnrealizedConversionCastOp.cast_one(ba, pa.type)
            body.add_op(back)
            args.append(v)
        rewriter.inline_block(old, InsertPoint.at_end(body), args)
        casts, inits = _as_buffers(op.inits)
        r = tilemap.RepeatOp(op.count.value.data, inits, Region(body))
        for pv, tv in zip(op.results, r.results, strict=True):
            tv.name_hint = pv.name_hint
        _replace(rewriter, op, [*casts, r], list(r.results))


class MapYield(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.YieldOp, rewriter: PatternRewriter) -> None:
        casts, vals = _as_buffers(op.values)
        rewriter.replace(op, [*casts, tilemap.YieldOp.create(operands=vals)], [])


# --- values and layout conversions -------------------------------------------------------------


class MapParameter(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.ParameterOp, rewriter: PatternRewriter) -> None:
        rt: plan.PlanTensorType = op.result.type
        lay: Layout = rt.layout
        attrs = {"sym_name": op.sym_name, "init": op.init, "tensor": rt.tensor, "layout": rt.layout_attr}
        # the host writes a padded weight's padding as zeros: a kernel may read it as data, a
        # fetch can then move whole blocks (padding included) and zero nothing on the device, and
        # kernels that read whole blocks (an AMP's weight lanes, a broadcast bias) read nothing
        # never written (what `ipu-run --checked` stops at); it costs only host bytes
        if lay.has_padding:
            attrs["zero_padding"] = builtin.UnitAttr()
        w = tilemap.WeightOp.create(result_types=[buffer_type(rt)], attributes=attrs)
        _replace(rewriter, op, [w], [_named(w, op.result.name_hint)])


def _zero_padded(buf: SSAValue) -> bool:
    """Whether buffer `buf` is a weight whose padding the host writes as zeros, or this trip's
    blocks of one (a rolled layer's stacked weight: `iteration_slice` copies whole blocks, a move
    with a `trip_stride` reads them in the stack)."""
    owner = buf.owner
    while isinstance(owner, tilemap.RunOp | UnrealizedConversionCastOp):
        if isinstance(owner, tilemap.RunOp) and owner.kernel.data != "iteration_slice":
            return False
        owner = owner.operands[0].owner
    return isinstance(owner, tilemap.WeightOp) and owner.zero_padding is not None


class MapRearrange(RewritePattern):
    """One move; out of a zero-padded weight (or this trip's slice of a stacked one) into the same
    padded extent, of whole blocks (the destination's padding then holds the weight's zeros, and
    nothing is zeroed first). A slice read in place (`IterationSliceOp.read_in_place`) is moved
    out of its stack: the move's sources are trip 0's block, advancing a block a trip
    (`trip_stride`); the slice goes with its last reader."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.RearrangeOp, rewriter: PatternRewriter) -> None:
        sl = op.input.owner
        stacked = isinstance(sl, plan.IterationSliceOp) and sl.read_in_place()
        casts, ins = _as_buffers([sl.input if stacked else op.input])
        reason = op.reason.data if op.reason else "rearrange"
        src_l, dst_l = op.input.type.layout, op.result.type.layout
        source = _cast_source(sl.input if stacked else op.input)
        whole = whole_blocks(src_l, dst_l) if source is not None and _zero_padded(source) else None
        mv = _move(ins[0], buffer_type(op.result.type), *(whole or (src_l, dst_l)), reason)
        if stacked:
            mv.attributes["trip_stride"] = IntegerAttr(src_l.block_elements * ins[0].type.esize, 64)
        _replace(rewriter, op, [*casts, mv], [_named(mv, op.result.name_hint)])
        if stacked and not sl.result.uses:
            rewriter.erase(sl)


def _cast_source(v: SSAValue) -> SSAValue | None:
    """The buffer plan value `v` was cast from, if it is a cast (a value map-tiles already mapped)."""
    return v.owner.operands[0] if isinstance(v.owner, UnrealizedConversionCastOp) else None


class MapReduce(RewritePattern):
    """Stage the partial sums on their reducing tiles (a move), then sum them."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.ReduceOp, rewriter: PatternRewriter) -> None:
        lay: Layout = op.result.type.layout
        half = isinstance(op.input.type.tensor.element_type, builtin.Float16Type)  # fp16 partials
        kernel = "reduce_half" if half else "reduce_sum"
        _stage_and_combine(rewriter, op, lay, "reduce", kernel, elements=lay.block_elements)


def _stage_and_combine(
    rewriter: PatternRewriter, op: Operation, stage: Layout, reason: str, kernel: str, **params: int
) -> None:
    """Replace `op` (one partial-sum input, one result) by a move that stages every part of each
    result block on its tile, [parts, *stage.block] in `stage`'s layout and the partials' type,
    then `kernel` over it."""
    src, res = op.operands[0], op.results[0]
    casts, ins = _as_buffers([src])
    src_l: Layout = src.type.layout
    lay: Layout = res.type.layout
    el = src.type.tensor.element_type
    stage_t = tilemap.BufferType((src_l.partials, *stage.block), el, lay.first_tile, lay.tiles, "standard")
    # when nothing reads the result's padding as data, the partials move as whole padded
    # blocks (their padding is computed, so written): every slot is written and none is zeroed
    whole = None if padding_read(res) else whole_blocks(src_l, stage)
    mv = _move(ins[0], stage_t, *(whole or (src_l, stage)), reason)
    hint = res.name_hint
    r = _run(kernel, [_named(mv, f"{hint}_stage")], buffer_type(res.type), parts=src_l.partials, **params)
    _replace(rewriter, op, [*casts, mv, r], [_named(r, hint)])


def _replace_by_heads_move(
    rewriter: PatternRewriter, op: Operation, src_l: Layout, dst_l: Layout, perm: tuple[int, ...] | None = (1, 0, 2)
) -> None:
    """Replace `op` by one move between [S, H*D] seen as heads (`plan.heads_view`) and [H, S, D]
    (heads and rows swapped), or with no `perm` between two layouts of the same bytes."""
    casts, ins = _as_buffers([op.operands[0]])
    res = op.results[0]
    mv = _move(ins[0], buffer_type(res.type), src_l, dst_l, op.name.removeprefix("plan."), perm=perm)
    _replace(rewriter, op, [*casts, mv], [_named(mv, res.name_hint)])


class MapSplitHeads(RewritePattern):
    """One move: into the result's 2-D twin when each of its blocks is one head (the same bytes),
    else of the input's heads view with heads and rows swapped; when the input lies in that twin
    already (`plan.split_heads_in_place`), a view of it (`SplitHeadsOp.is_view`) or else a copy
    on each tile."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.SplitHeadsOp, rewriter: PatternRewriter) -> None:
        lay: Layout = op.result.type.layout
        if _replace_by_view_or_copy(rewriter, op):  # the input lies in the twin already
            return
        if plan.one_head_blocks(lay):
            _replace_by_heads_move(rewriter, op, op.input.type.layout, plan.heads_2d(lay), perm=None)
        else:
            _replace_by_heads_move(rewriter, op, plan.heads_view(op.input.type.layout, lay.shape[2]), lay)


class MapPermute(RewritePattern):
    """One move: destination axis i reads source axis perm[i]."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.PermuteOp, rewriter: PatternRewriter) -> None:
        casts, ins = _as_buffers([op.input])
        src_l, dst_l = op.input.type.layout, op.result.type.layout
        mv = _move(ins[0], buffer_type(op.result.type), src_l, dst_l, "permute", perm=op.permutation())
        _replace(rewriter, op, [*casts, mv], [_named(mv, op.result.name_hint)])


class MapWindow(RewritePattern):
    """One move of the window (zero-filled first where it reaches outside the input)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.WindowOp, rewriter: PatternRewriter) -> None:
        casts, ins = _as_buffers([op.input])
        src_l, dst_l = op.input.type.layout, op.result.type.layout
        clip = not op.covers()
        mv = _move(ins[0], buffer_type(op.result.type), src_l, dst_l, "window", offset=op.offset(), clip=clip)
        _replace(rewriter, op, [*casts, mv], [_named(mv, op.result.name_hint)])


class MapMergeHeads(RewritePattern):
    """One move of the input into the result's heads view (heads and rows swapped); when each
    input block is one head and the result its 2-D twin, a view of it or a copy on each tile."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.MergeHeadsOp, rewriter: PatternRewriter) -> None:
        if _replace_by_view_or_copy(rewriter, op):
            return
        a_l: Layout = op.input.type.layout
        _replace_by_heads_move(rewriter, op, a_l, plan.heads_view(op.result.type.layout, a_l.shape[2]))


# --- kernels -----------------------------------------------------------------------------------


@dataclass
class MapElementwise(RewritePattern):
    """An op that runs one kernel over every element of each tile's block (`elements` = the
    block size): unary activations (kernel = their kind), reshapes and casts (`copy`). A new
    elementwise op is one more instance of this pattern."""

    op_type: type[Operation]
    kernel: Callable[[Operation], str]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, self.op_type):
            _replace_by_run(rewriter, op, self.kernel(op), elements=op.results[0].type.layout.block_elements)


class MapReshape(RewritePattern):
    """A reshape copies each tile's block, or is a view of it (`ReshapeOp.is_view`); when the two
    sides pad their rows differently (an odd last axis that changes) the `repad` kernel re-cuts
    the rows."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.ReshapeOp, rewriter: PatternRewriter) -> None:
        a: Layout = op.input.type.layout
        r: Layout = op.result.type.layout
        if _replace_by_view_or_copy(rewriter, op):
            return
        rows, out_rows = a.block_elements // a.block[-1], r.block_elements // r.block[-1]
        _replace_by_run(rewriter, op, "repad", rows=rows, cols=a.shape[-1], out_rows=out_rows, out_cols=r.shape[-1])


class MapIterationSlice(RewritePattern):
    """Each tile copies this trip's block out of its stacked blocks (`iteration_slice`), unless
    the AMPs that read the slice read it in place (`MapGemm` then consumes the slice)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.IterationSliceOp, rewriter: PatternRewriter) -> None:
        if op.read_in_place():
            return  # left for MapGemm
        n = op.result.type.layout.block_elements
        _replace_by_run(rewriter, op, "iteration_slice", iterations=op.input.type.shape[0], elements=n)


class MapIterationStore(RewritePattern):
    """Each tile writes its block of the value into this trip's block of its stack, in place
    (`iteration_store`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.IterationStoreOp, rewriter: PatternRewriter) -> None:
        casts, (stacked, value) = _as_buffers(op.operands)
        n = op.value.type.layout.block_elements
        r = _run("iteration_store", [value, stacked], stacked.type, iterations=op.stacked.type.shape[0], elements=n)
        r.attributes["inplace"] = IntegerAttr(1, 64)
        _replace(rewriter, op, [*casts, r], [_named(r, op.result.name_hint)])


def _stacked_rhs(
    kernel: str, rhs: SSAValue, params: dict[str, int]
) -> tuple[str, SSAValue, plan.IterationSliceOp | None]:
    """(kernel, rhs operand, the slice) of a call whose rhs is this trip's slice of a stack read
    in place (`IterationSliceOp.read_in_place`): the `_stacked` kernel over the stack, its trips
    added to `params`; else the call as it is."""
    sl = rhs.owner
    if not (isinstance(sl, plan.IterationSliceOp) and sl.read_in_place()):
        return kernel, rhs, None
    params["iterations"] = sl.input.type.shape[0]
    return f"{kernel}_stacked", sl.input, sl


def _drop_consumed(rewriter: PatternRewriter, sl: plan.IterationSliceOp | None) -> None:
    """A slice read in place goes with its last reader."""
    if sl is not None and not sl.result.uses:
        rewriter.erase(sl)


class MapGemm(RewritePattern):
    """One AMP call a tile; a swapped gemm's call also takes the scratch its AMP writes the
    product's transpose into (the result's block transposed; standard memory, which may lie
    anywhere, as only the AMP's weights need the interleaved region). An rhs sliced from a
    stack the AMP can read in place is read there (`amp_matmul*_stacked`, the stack's buffer
    and its `iterations`); the slice goes with its last reader."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.GemmOp, rewriter: PatternRewriter) -> None:
        a_l: Layout = op.lhs.type.layout
        b_l: Layout = op.rhs.type.layout
        params = {"m": a_l.block[0], "k": a_l.block[1], "n": b_l.block[1]}
        kernel, rhs, sl = _stacked_rhs(op.kernel, op.rhs, params)
        casts, ins = _as_buffers([op.lhs, rhs])
        out_t = buffer_type(op.result.type)
        new: list[Operation] = []
        if op.swapped is not None:
            t_t = tilemap.BufferType(
                (params["n"], params["m"]), out_t.element_type, out_t.first.data, out_t.count.data, "standard"
            )
            alloc = tilemap.AllocOp.create(result_types=[t_t])
            ins.append(_named(alloc, f"{op.result.name_hint or 'mm'}_transposed"))
            new.append(alloc)
        r = _run(kernel, ins, out_t, **params)
        _replace(rewriter, op, [*casts, *new, r], [_named(r, op.result.name_hint)])
        _drop_consumed(rewriter, sl)


class MapConv(RewritePattern):
    """A convolution's patch move (each tile's input rows, halo included, zero-filled first for
    the padding: `conv_patch`), then `amp_conv` (depthwise: `dw_conv`) over the kernel positions."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.ConvOp, rewriter: PatternRewriter) -> None:
        casts, (x, w) = _as_buffers([op.input, op.filters])
        mv = _patch_move(op, x, "conv")
        r = _run(op.kernel, [mv.results[0], w], buffer_type(op.result.type), **op.kernel_params())
        _replace(rewriter, op, [*casts, mv, r], [_named(r, op.result.name_hint)])


def _patch_move(op: plan.ConvOp | plan.PoolOp, x: SSAValue, hint: str) -> tilemap.MoveOp:
    """The move giving each tile of a window op its patch (`op.patch()`), zero-filled first
    where it holds padding or reaches past the input."""
    patch, windows = op.patch()
    mv = _window_move(x, "standard", op.input.type.layout, patch, "halo", windows=windows)
    mv.results[0].name_hint = f"{op.result.name_hint or hint}_patch"
    return mv


class MapPool(RewritePattern):
    """A max pool's patch move (as a depthwise convolution's, zero-filled first for the padding),
    then `max_pool` over the kernel positions."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.PoolOp, rewriter: PatternRewriter) -> None:
        casts, (x,) = _as_buffers([op.input])
        mv = _patch_move(op, x, "pool")
        r = _run("max_pool", [mv.results[0]], buffer_type(op.result.type), **op.kernel_params())
        _replace(rewriter, op, [*casts, mv, r], [_named(r, op.result.name_hint)])


class MapBinary(RewritePattern):
    """Elementwise binary kernels; the rhs is the same block or a row broadcast over it. An rhs
    sliced from a rolled layer's stack is read there (`add_stacked`, `mul_stacked`), as `MapGemm`
    reads a stacked weight."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.BinaryOp, rewriter: PatternRewriter) -> None:
        lay: Layout = op.result.type.layout
        m, n = as_2d(lay.block)
        b_l: Layout = op.rhs.type.layout
        br, bc = (m, 1) if op.column is not None else (m, n) if b_l.shape == lay.shape else (1, n)
        params = {"m": m, "n": n, "b_rows": br, "b_cols": bc}
        kernel, rhs, sl = _stacked_rhs(op.kind.data, op.rhs, params)
        _replace_by_run(rewriter, op, kernel, [op.lhs, rhs], **params)
        _drop_consumed(rewriter, sl)


class MapTranspose(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.TransposeOp, rewriter: PatternRewriter) -> None:
        m, n = op.input.type.layout.block
        _replace_by_run(rewriter, op, "transpose", m=m, n=n)


ROW_KERNELS = {"softmax": "softmax_rows", "layer_norm": "layer_norm_rows", "rms_norm": "rms_norm_rows"}
REDUCE_CODES = {"sum": 1, "max": 2, "mean": 3, "prod": 4}
ARG_CODES = {"argmax": 1, "argmin": 2}


class MapSelect(RewritePattern):
    """a where cond else b over each tile's block: one `select` (operands a, b, cond)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.SelectOp, rewriter: PatternRewriter) -> None:
        _replace_by_run(rewriter, op, "select", elements=op.result.type.layout.block_elements)


class MapRowwise(RewritePattern):
    """Row kernels over whole rows: reductions, softmax, running sums, and the norms (with their epsilon)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.RowwiseOp, rewriter: PatternRewriter) -> None:
        a: Layout = op.input.type.layout
        rows, cols, valid = math.prod(a.block[:-1]), a.block[-1], a.shape[-1]
        k = op.kind.data
        if k in ARG_CODES:
            last = int(op.select_last_index is not None)
            _replace_by_run(rewriter, op, "arg_rows", rows=rows, cols=cols, valid=valid, kind=ARG_CODES[k], last=last)
        elif k in REDUCE_CODES:
            _replace_by_run(rewriter, op, "reduce_rows", rows=rows, cols=cols, valid=valid, kind=REDUCE_CODES[k])
        elif k == "softmax":
            _replace_by_run(rewriter, op, "softmax_rows", rows=rows, cols=cols, valid=valid)
        elif k == "cumsum":
            flags = int(op.exclusive is not None) | 2 * int(op.reverse is not None)
            _replace_by_run(rewriter, op, "cumsum_rows", rows=rows, cols=cols, valid=valid, flags=flags)
        else:
            eps = float_bits(op.epsilon.value.data if op.epsilon else 1e-5)
            if plan.split_norm_parts(a) > 1:
                _map_split_norm(rewriter, op, eps)
            else:
                _replace_by_run(rewriter, op, ROW_KERNELS[k], rows=rows, cols=cols, valid=valid, eps_bits=eps)


def _map_split_norm(rewriter: PatternRewriter, op: plan.RowwiseOp, eps_bits: int) -> None:
    """A norm over rows split in column blocks: each tile's row statistics of its block
    (`norm_stats`), one move gathering every block's on the row's tiles, then each tile
    normalises its block (`layer_norm_apply` / `rms_norm_apply`). Where the last blocks are
    padded, a weight of each block's real columns goes with it (`norm_stats_valid`, and the
    `_padded` apply weighing each block by its count)."""
    a: Layout = op.input.type.layout
    casts, ins = _as_buffers(op.operands)
    rows, cols, parts = math.prod(a.block[:-1]), a.block[-1], plan.split_norm_parts(a)
    own, gathered = plan.norm_stats_layouts(a)
    hint = op.result.name_hint or "norm"
    own_t = tilemap.BufferType(own.block, builtin.f32, a.first_tile, a.tiles, "standard")
    padded = plan.split_norm_padded(a)
    width: list[Operation] = []
    if padded:  # the last blocks are padded: each tile counts its own real columns only
        # [parts, 2] (a last axis is even): each block's count of real columns, then a zero
        n = np.zeros((parts, 2), np.float32)
        n[:, 0] = norm_block_columns(a.shape[-1], cols, parts)
        tt = TensorType(builtin.f32, [parts, 2])
        lay = Layout((parts, 2), a.grid, (a.split[-1], ()), -1, a.first_tile)  # a tile: its block's row
        w, wv = _compiler_weight(f"{hint}_columns", DenseIntOrFPElementsAttr.from_list(tt, n.ravel().tolist()), tt, lay)
        width = [w]
        stats = _run("norm_stats_valid", [ins[0], wv], own_t, rows=rows, cols=cols)
    else:
        stats = _run("norm_stats", [ins[0]], own_t, rows=rows, cols=cols)
    all_t = tilemap.BufferType(gathered.block, builtin.f32, a.first_tile, a.tiles, "standard")
    # norm_stats writes its whole block (padding rows too): the gather moves whole blocks, so no
    # slot of the gathered statistics is left unwritten and none is zeroed first
    mv = _move(
        _named(stats, f"{hint}_stats"), all_t, *(whole_blocks(own, gathered) or (own, gathered)), "norm statistics"
    )
    kernel = "layer_norm_apply" if op.kind.data == "layer_norm" else "rms_norm_apply"
    gathered_v = _named(mv, f"{hint}_statistics")
    r = _run(
        f"{kernel}_padded" if padded else kernel,
        [ins[0], gathered_v, *ins[1:]],
        buffer_type(op.result.type),
        rows=rows,
        cols=cols,
        parts=parts,
        eps_bits=eps_bits,
        **({"columns": a.shape[-1]} if padded else {}),
    )
    _replace(rewriter, op, [*casts, *width, stats, mv, r], [_named(r, op.result.name_hint)])


class MapAttentionCombine(RewritePattern):
    """Stage every key block's partial attention state on its query tiles, then combine them."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.AttentionCombineOp, rewriter: PatternRewriter) -> None:
        src_l: Layout = op.input.type.layout
        full = Layout(
            src_l.shape, src_l.grid, (src_l.split[0], src_l.split[1] + (src_l.partial,), ()), -1, src_l.first_tile
        )
        d = op.result.type.layout.shape[2]
        _stage_and_combine(rewriter, op, full, "attention_combine", "attention_combine", qr=full.block[1], d=d)


def _layout_attr(lay: Layout, memory: str = "standard") -> plan.LayoutAttr:
    return plan.LayoutAttr(lay.grid, lay.split, lay.partial, lay.first_tile, lay.align, memory)


def attention_offsets(
    q: Layout, kv: Layout | None, sk: int, striped: bool = False, keys_striped: bool = False
) -> np.ndarray:
    """Per tile (first query row, first key, key end) for the attention kernels, as f32 [tiles, 4];
    `striped`: each query block is a stripe, its first row the stripe's index; `keys_striped`:
    each key block is a stripe too, its first key the stripe's index and every key counting."""
    c = q.coords()
    qr = q.block_size(1)
    col = ATTENTION_OFFSETS.index
    out = np.zeros((q.tiles, len(ATTENTION_OFFSETS.columns)), np.float32)
    out[:, col("query_row")] = c[:, 2] if striped else c[:, 2] * qr
    if kv is None:  # streamed: keys arrive in windows, all keys count
        out[:, col("key_end")] = sk
    else:
        kr = kv.block_size(1)
        out[:, col("key_begin")] = c[:, 3] if keys_striped else c[:, 3] * kr
        out[:, col("key_end")] = sk if keys_striped else np.minimum(sk, (c[:, 3] + 1) * kr)
    return out


def _prescaled_queries(q: SSAValue, scale: float, st_l: Layout, name: str) -> tuple[SSAValue, list[Operation]]:
    """q * scale on every tile (a `mul` by a one-element weight of q's dtype): (q k^T) scale is
    (q scale) k^T, and the query block is smaller than any key window's scores."""
    qt: tilemap.BufferType = q.type
    one = Layout((1, 1), st_l.grid, ((), ()), -1, st_l.first_tile)
    tt = TensorType(qt.element_type, [1, 1])
    w, wv = _compiler_weight(f"{name}_scale", DenseIntOrFPElementsAttr.from_list(tt, [scale]), tt, one)
    rows = math.prod(qt.shape[:-1])
    r = _run("mul", [q, wv], qt, m=rows, n=qt.shape[-1], b_rows=1, b_cols=1)
    return _named(r, f"{name}_q_scaled"), [w, r]


def _compiler_weight(name: str, init: Attribute, tensor: TensorType, lay: Layout) -> tuple[Operation, SSAValue]:
    """A weight of the compiler's own (a table or a constant) named `name`, in standard memory."""
    w = tilemap.WeightOp.create(
        result_types=[tilemap.BufferType(lay.block, tensor.element_type, lay.first_tile, lay.tiles, "standard")],
        attributes={
            "sym_name": StringAttr(name),
            "init": init,
            "tensor": tensor,
            "layout": plan.LayoutAttr(lay.grid, lay.split, -1, lay.first_tile),
        },
    )
    return w, _named(w, name)


class MapAttention(RewritePattern):
    """Attention as kernel runs over a per-tile state: an offsets weight, then `attention_start`
    over all keys (materialized) or the first key window, `attention_update` over each later
    window moved in (streamed);
    the score scratch is checkpointed (the last window's, when streamed)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.AttentionOp, rewriter: PatternRewriter) -> None:
        casts, ins = _as_buffers(op.operands)
        out_t = buffer_type(op.result.type)
        q_l: Layout = op.q.type.layout
        k_l: Layout = op.k.type.layout
        st_l: Layout = op.result.type.layout
        hq, s, d = q_l.shape
        hkv, sk, _ = k_l.shape
        qr = st_l.block[1]
        grid_t = (st_l.first_tile, st_l.tiles)
        materialized = op.form.data == "materialized"
        name = op.result.name_hint or "attention"
        value = plan.graph_value_of(op)
        stripes = op.stripes_value()
        key_stripes = op.key_stripes_value()
        off = attention_offsets(q_l, k_l if materialized else None, sk, stripes is not None, key_stripes is not None)
        off_lay = Layout((st_l.tiles, 4), st_l.grid, (tuple(range(len(st_l.grid))), ()), -1, st_l.first_tile)
        off_tt = TensorType(builtin.f32, [st_l.tiles, 4])
        offsets_op, offsets = _compiler_weight(f"{name}_offsets", table_attr(off, ATTENTION_OFFSETS), off_tt, off_lay)
        new_ops: list[Operation] = [*casts, offsets_op]
        scale = op.scale.value.data
        if scale != 1.0:  # the query block scaled once, so no update scales its scores
            q_sc, scale_ops = _prescaled_queries(ins[0], scale, st_l, name)
            ins = [q_sc, *ins[1:]]
            new_ops += scale_ops
        score_t = op.q.type.tensor.element_type  # the scores are held in the inputs' dtype
        # causal: the global rows between consecutive local query rows (striped: the stripes)
        causal = 0 if op.causal is None else stripes or 1
        common = {"qr": qr, "d": d, "causal": causal, "scale_bits": float_bits(1.0)}
        # an additive bias: attention_update_bias reads it after v, laid out like the scores
        # (materialized: the tile's [qr, kr] block; streamed: [qr, all keys], a window moved out
        # of it for each call)
        # the first key block starts the state (attention_start: no init, nothing to rescale);
        # later windows update it in place
        start, kernel, bias, state_at = "attention_start", "attention_update", [], 5
        if op.bias is not None:
            b_l: Layout = op.bias.type.layout
            start, kernel, bias, state_at = "attention_start_bias", "attention_update_bias", [ins[3]], 6
            if b_l.block[1] != qr:
                raise DiagnosticException(f"map-tiles: bias block {b_l.block} does not have the {qr} query rows")
        else:  # keys' positions step `k_step` apart (striped keys: the key stripes; the bias forms have none)
            common["k_step"] = key_stripes or 1
        if materialized:
            kr = k_l.block_size(1)
            sc_lay = Layout((hq, s, sk), st_l.grid, ((0, 1), (2,), (3,)), -1, st_l.first_tile, (1, qr, kr))
            if sc_lay.block != (1, qr, kr):
                raise DiagnosticException(f"map-tiles: score block {sc_lay.block} does not match [1, {qr}, {kr}]")
            alloc = tilemap.AllocOp.create(
                result_types=[tilemap.BufferType(sc_lay.block, score_t, *grid_t, "standard")]
            )
            scratch = _named(alloc, f"{name}_scores")
            if bias and b_l.block[2] != kr:
                raise DiagnosticException(f"map-tiles: bias block {b_l.block} does not match the {kr} keys a tile")
            upd = _run(start, [*ins[:3], *bias, offsets, scratch], out_t, kr=kr, k_base=0, **common)
            state = _named(upd, name)
            new_ops += [alloc, upd]
            if value is not None:
                new_ops.append(
                    _checkpoint(
                        scratch,
                        f"{name}_scores",
                        value,
                        TensorType(score_t, [hq, s, sk]),
                        _layout_attr(sc_lay),
                        "scores",
                    )
                )
            _replace(rewriter, op, new_ops, [state], check=False)
            return
        kb = op.key_block.value.data
        alloc = tilemap.AllocOp.create(result_types=[tilemap.BufferType((1, qr, kb), score_t, *grid_t, "standard")])
        scratch = _named(alloc, f"{name}_scores")
        new_ops.append(alloc)
        for t0 in range(0, sk, kb):
            wk = min(kb, sk - t0)
            win = Layout((hkv, wk, d), st_l.grid, ((0,), (), ()), -1, st_l.first_tile)
            wt = tilemap.BufferType(win.block, op.k.type.tensor.element_type, *grid_t, "interleaved")
            km = _move(ins[1], wt, k_l, win, "attention window", offset=(0, t0, 0))
            vm = _move(ins[2], wt, op.v.type.layout, win, "attention window", offset=(0, t0, 0))
            kw, vw = _named(km, f"{name}_k{t0}"), _named(vm, f"{name}_v{t0}")
            new_ops += [km, vm]
            bw = []
            if bias and wk == sk:  # one window of all keys: the bias block as it is
                bw = bias
            elif bias:  # this window's keys of each tile's bias rows
                bwin = Layout(
                    (b_l.shape[0], s, wk), st_l.grid, (b_l.split[0], (2,), ()), -1, st_l.first_tile, b_l.align
                )
                bt = tilemap.BufferType(bwin.block, op.bias.type.tensor.element_type, *grid_t, "standard")
                bm = _move(ins[3], bt, b_l, bwin, "attention bias window", offset=(0, 0, t0))
                bw = [_named(bm, f"{name}_bias{t0}")]
                new_ops.append(bm)
            if t0 == 0:
                upd = _run(start, [ins[0], kw, vw, *bw, offsets, scratch], out_t, kr=wk, k_base=t0, **common)
            else:
                upd = _run(kernel, [ins[0], kw, vw, *bw, offsets, scratch, state], out_t, kr=wk, k_base=t0, **common)
                upd.attributes["inplace"] = IntegerAttr(state_at, 64)
            state = _named(upd, name)
            new_ops.append(upd)
        # the scratch keeps the last window's scores: check them (aspect "scores@<first key>")
        t_last = (sk - 1) // kb * kb
        if value is not None and sk - t_last == kb and kb % 2 == 0:
            sc_lay = Layout((hq, s, kb), st_l.grid, ((0, 1), (2,), ()), -1, st_l.first_tile, (1, qr, 1))
            new_ops.append(
                _checkpoint(
                    scratch,
                    f"{name}_scores",
                    value,
                    TensorType(score_t, [hq, s, kb]),
                    _layout_attr(sc_lay),
                    f"scores@{t_last}",
                )
            )
        _replace(rewriter, op, new_ops, [state], check=False)


class MapSerialGemm(RewritePattern):
    """Per contraction step exchange the two windows and multiply into an fp32 accumulator: the
    first step's AMP writes it (its first input group zeroes the partials, so no fill runs), later
    steps accumulate. On a (rows, cols, parts) grid each part's tiles step through its own share
    of the contraction (a window per part, `serial_windows`), and the accumulator is the op's
    fp32 partial result (the `plan.reduce` after it sums the parts)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.SerialGemmOp, rewriter: PatternRewriter) -> None:
        casts, ins = _as_buffers(op.operands)
        a_l: Layout = op.lhs.type.layout
        b_l: Layout = op.rhs.type.layout
        r_l: Layout = op.result.type.layout
        (m, k), n = a_l.shape, b_l.shape[1]
        bm, bn = r_l.block
        pk = r_l.partials
        kp, kc = plan.serial_window(k, pk, op.k_steps.value.data)
        name = op.result.name_hint or "gemm"
        grid_t = (r_l.first_tile, r_l.tiles)
        acc_t = (
            buffer_type(op.result.type) if pk > 1 else tilemap.BufferType((bm, bn), builtin.f32, *grid_t, "interleaved")
        )
        acc = None
        new_ops: list[Operation] = [*casts]
        for k0 in range(0, kp, kc):
            kw = min(kc, kp - k0)
            if pk == 1:
                aw_l = Layout((m, kw), r_l.grid, ((0,), ()), -1, r_l.first_tile)
                bw_l = Layout((kw, n), r_l.grid, ((), (1,)), -1, r_l.first_tile, (aw_l.block[1], 1))
                am = _window_move(ins[0], "standard", a_l, aw_l, "gemm window", offset=(0, k0))
                bm_ = _window_move(ins[1], "interleaved", b_l, bw_l, "gemm window", offset=(k0, 0))
            else:
                aw_l = Layout((m, pk * kw), r_l.grid, ((0,), (2,)), -1, r_l.first_tile)
                bw_l = Layout((pk * kw, n), r_l.grid, ((2,), (1,)), -1, r_l.first_tile)
                win = (kp, k0, kw)  # part p reads contraction columns [p kp + k0, p kp + k0 + kw)
                am = _window_move(ins[0], "standard", a_l, aw_l, "gemm window", windows=(None, win))
                bm_ = _window_move(ins[1], "interleaved", b_l, bw_l, "gemm window", windows=(win, None))
            aw, bw = _named(am, f"{name}_a{k0}"), _named(bm_, f"{name}_b{k0}")
            if acc is None:
                upd = _run("amp_matmul", [aw, bw], acc_t, m=bm, k=aw_l.block[1], n=bn)
            else:
                upd = _run("amp_matmul_acc", [aw, bw, acc], acc_t, m=bm, k=aw_l.block[1], n=bn)
                upd.attributes["inplace"] = IntegerAttr(2, 64)
            acc = _named(upd, f"{name}_acc")
            new_ops += [am, bm_, upd]
        assert acc is not None
        if pk > 1:  # the accumulator is the partial result
            _replace(rewriter, op, new_ops, [_named(acc.owner, name)], check=False)
            return
        out = _run("copy", [acc], buffer_type(op.result.type), elements=bm * bn)
        _replace(rewriter, op, [*new_ops, out], [_named(out, name)])


def slice_rows(table: Layout) -> np.ndarray:
    """Per tile of an embedding table's grid, the table rows [row_begin, row_end) its block holds,
    as i32 [tiles, 2] (`SLICE_ROWS`)."""
    rb = table.block_size(0)
    c0 = table.coords()[:, 0]
    out = np.zeros((table.tiles, len(SLICE_ROWS.columns)), np.int64)
    out[:, SLICE_ROWS.index("row_begin")] = np.minimum(c0 * rb, table.shape[0])
    out[:, SLICE_ROWS.index("row_end")] = np.minimum((c0 + 1) * rb, table.shape[0])
    return out


class MapEmbeddingSlice(RewritePattern):
    """A rows weight (each tile's table rows), then `embedding_slice` on every tile of the table's
    grid: for each index its block's row or zeros (the partial `plan.reduce` sums)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: plan.EmbeddingSliceOp, rewriter: PatternRewriter) -> None:
        casts, ins = _as_buffers(op.operands)
        t_l: Layout = op.table.type.layout
        r_l: Layout = op.result.type.layout
        name = (op.result.name_hint or "gather").removesuffix("_partial")
        rows_lay = Layout((t_l.tiles, 2), t_l.grid, (tuple(range(len(t_l.grid))), ()), -1, t_l.first_tile)
        rows_tt = TensorType(builtin.i32, [t_l.tiles, 2])
        rows_op, rows = _compiler_weight(f"{name}_rows", table_attr(slice_rows(t_l), SLICE_ROWS), rows_tt, rows_lay)
        r = _run(
            "embedding_slice",
            [*ins, rows],
            buffer_type(op.result.type),
            indices=r_l.shape[0],
            rows=t_l.block[0],
            cols=t_l.block[1],
        )
        _replace(rewriter, op, [*casts, rows_op, r], [_named(r, op.result.name_hint)])


class RefuseUnmapped(RewritePattern):
    """Last in the list: an op no pattern mapped is refused (a slice read in place is left for
    `MapGemm` or `MapBinary`, which consume it)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, plan.IterationSliceOp) and op.read_in_place():
            return
        raise DiagnosticException(f"map-tiles: no tile mapping for {op.name}")


PATTERNS: tuple[RewritePattern, ...] = (
    MapReturn(),
    MapRepeat(),
    MapIterationSlice(),
    MapIterationStore(),
    MapYield(),
    MapParameter(),
    MapRearrange(),
    MapReduce(),
    MapSplitHeads(),
    MapMergeHeads(),
    MapPermute(),
    MapWindow(),
    MapElementwise(plan.UnaryOp, lambda op: op.kind.data),  # type: ignore[attr-defined]
    MapReshape(),
    MapElementwise(plan.CastOp, lambda _: "copy"),
    MapGemm(),
    MapConv(),
    MapPool(),
    MapBinary(),
    MapSelect(),
    MapTranspose(),
    MapRowwise(),
    MapAttention(),
    MapAttentionCombine(),
    MapSerialGemm(),
    MapEmbeddingSlice(),
    RefuseUnmapped(),
)
"""One pattern per plan op kind (tried in order; each matches one kind)."""


def _distinct_checkpoints(f: func.FuncOp) -> None:
    """Checkpoint symbols apart from the host streams': a value named as an input or output of
    the function (a stage's output `y` that is also the value `y`) is checkpoint `y.value`, so the
    package's symbols stay distinct (its `value` still names the graph value)."""
    streams = {
        s.data
        for key in ("ipu.inputs", "ipu.outputs")
        if isinstance(f.attributes.get(key), ArrayAttr)
        for s in f.attributes[key].data  # type: ignore[union-attr]
    }
    points = [op for op in f.body.walk() if isinstance(op, tilemap.CheckpointOp)]
    taken = streams | {p.sym_name.data for p in points}
    for p in points:
        name = p.sym_name.data
        if name not in streams:
            continue
        fresh, k = f"{name}.value", 1
        while fresh in taken:
            fresh, k = f"{name}.value{k}", k + 1
        taken.add(fresh)
        p.sym_name = StringAttr(fresh)


def map_function(f: func.FuncOp) -> dict[str, int]:
    """Lower one plan function to tilemap in place; return its figures for the log."""
    padded_reads = padded_inputs(f)
    PatternRewriteWalker(
        GreedyRewritePatternApplier(list(PATTERNS), dce_enabled=False), apply_recursively=False
    ).rewrite_region(f.body)
    convert_signature(f, padded_reads)
    PatternRewriteWalker(ReconcileUnrealizedCastsPattern()).rewrite_region(f.body)
    _distinct_checkpoints(f)
    f.attributes[tilemap.MAPPING_ATTR] = tilemap.MappingAttr(1, 1)  # identity; screen-tiles may choose another
    moves = [op for op in f.body.walk() if isinstance(op, tilemap.MoveOp)]
    return {
        "moves": len(moves),
        "transfer_families": sum(len(m.transfers) for m in moves),
        "checkpoints": count_checkpoints(f),
    }


@dataclass(frozen=True)
class MapTilesPass(ModulePass):
    """Lower `plan` to `tilemap` (every finalist function), with the identity tile mapping:
    `screen-tiles` then chooses each finalist's mapping."""

    name = "map-tiles"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("plan",))
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and "ipu.inputs" in f.attributes and tilemap.MAPPING_ATTR not in f.attributes:
                figures = map_function(f)
                log_event("mapped tiles", function=f.sym_name.data, mapping=str(tilemap.mapping_of(f)), **figures)


__all__ = ["PATTERNS", "MapTilesPass", "buffer_type"]
