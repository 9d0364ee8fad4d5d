"""How each graph op becomes plan ops, given the layouts its operands have (`Planner.get`
converts an operand with `plan.rearrange` where the op wants another layout). One emitter per
op kind, looked up by op class in `EMITTERS`; every elementwise unary op shares one."""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.transforms.plan.candidates import SerialChoice, gather_result_rows
from ipu.transforms.plan.datamove import plan_concat, plan_pad, plan_slice
from ipu.transforms.plan.layouts import (
    attention_bias_layout,
    attention_layouts,
    leading_layout,
    plan_type,
    replicated_vector,
    row_layout,
    serial_gemm_layouts,
)
from ipu.transforms.plan.state import MatmulContext, Planner, describe


def _value(op: Operation) -> dict[str, Attribute]:
    """`value = "h"`: the stable name of the graph value `op` computes (`plan_body` named every
    graph value before the walk), by which the plan op's checkpoint is matched."""
    return {plan.VALUE_ATTR: builtin.StringAttr(_name(op))}


def _name(op: Operation) -> str:
    return op.results[0].name_hint or ""


def _plan_matmul(p: Planner, op: graph.MatmulOp, index: int) -> None:
    if any(op.flags()):
        raise DiagnosticException("plan-ops: transposed matmul operands are not planned yet; use graph.transpose")
    (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
    esize = op.lhs.type.element_type.bitwidth // 8
    ctx = MatmulContext(
        op,
        index,
        m,
        k,
        n,
        esize,
        p.has(op.lhs),
        p.has(op.rhs),
        p.current[op.lhs].type.layout if p.has(op.lhs) else None,
        p.resident + p.live_bytes(exclude=(op.lhs, op.rhs)),
        p.resident,
        p.is_weight(op.rhs) and not p.has(op.rhs),
        math.ceil(k * n / p.target.tiles) * esize,
        _consumer_layout(p, op.result),
    )
    mp = p.chooser.matmul(ctx, p.target)
    if mp.serial is not None:
        _emit_serial_gemm(p, op, index, mp.serial)
        return
    c = mp.gemm
    assert c is not None
    if mp.weight:
        p.resident += (ctx.home_bytes if mp.fetch else c.weight_bytes) * p.weight_copies(op.rhs)
    lays = c.layouts
    el = op.result.type.element_type
    if mp.fetch:
        assert lays.home is not None
        p.get(op.rhs, plan_type(op.rhs.type, lays.home), "weight home")
    a = p.get(op.lhs, plan_type(op.lhs.type, lays.a), op.name)
    b = p.get(op.rhs, plan_type(op.rhs.type, lays.b, "interleaved"), "weight fetch" if mp.fetch else op.name)
    r_t = TensorType(builtin.f32 if c.pk > 1 else el, [m, n])
    value = None if c.pk > 1 else _name(op)  # a partial sum is checked after its reduce
    g = p.emit(plan.GemmOp(a, b, plan_type(r_t, lays.partial, "interleaved"), value)).results[0]
    p.gemms += 1
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        grid=f"{c.pm}x{c.pn}x{c.pk}",
        weight="fetched" if mp.fetch else "resident",
        estimated_cycles=c.cycles,
        estimated_exchange_cycles=c.exchange_cycles,
        bytes_per_tile=c.bytes_per_tile,
    )
    if c.pk > 1:
        g.name_hint = f"{op.result.name_hint or 'mm'}_partial"
        g = p.emit(plan.ReduceOp(g, plan_type(op.result.type, lays.result), _name(op))).results[0]
    p.set(op.result, g)


ROWWISE = (graph.LayerNormOp, graph.RmsNormOp, graph.SoftmaxOp)


def _consumer_layout(p: Planner, v: SSAValue, depth: int = 3) -> Layout | None:
    """The layout a consumer of `v` will convert it to, looking through elementwise ops that
    keep their lhs's layout: whole rows for a norm or softmax (`_plan_rowwise`), the lhs's layout
    when `v` is the rhs of a binary op whose lhs is planned. None when the graph does not say."""
    shape = tuple(v.type.get_shape())
    for use in v.uses:
        op = use.operation
        if isinstance(op, ROWWISE) and use.index == 0:
            return row_layout(shape, p.target.tiles)
        if isinstance(op, graph.ElementwiseUnaryOp) and depth:
            want = _consumer_layout(p, op.results[0], depth - 1)
        elif isinstance(op, graph._Binary) and tuple(op.results[0].type.get_shape()) == shape:
            lhs = op.operands[0]
            if use.index == 1 and lhs is not v and p.has(lhs):
                want = p.current[lhs].type.layout
            elif use.index == 0 and depth:
                want = _consumer_layout(p, op.results[0], depth - 1)
            else:
                want = None
        else:
            want = None
        if want is not None and want.shape == shape:
            return want
    return None


def _emit_serial_gemm(p: Planner, op: graph.MatmulOp, index: int, c: SerialChoice) -> None:
    (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
    la, lb, lo = serial_gemm_layouts(m, k, n, c.pm, c.pn)
    a = p.get(op.lhs, plan_type(op.lhs.type, la), op.name)
    b = p.get(op.rhs, plan_type(op.rhs.type, lb), "weight home")
    r = plan.SerialGemmOp.create(
        operands=[a, b],
        result_types=[plan_type(op.result.type, lo)],
        attributes={"k_steps": builtin.IntegerAttr(c.steps, 64), **_value(op)},
    )
    p.set(op.result, p.emit(r).results[0])
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        grid=f"{c.pm}x{c.pn}",
        serial_k_steps=c.steps,
        estimated_cycles=c.cycles,
        bytes_per_tile=c.bytes_per_tile,
    )


def _plan_unary(p: Planner, op: graph.ElementwiseUnaryOp, index: int) -> None:
    """Every elementwise unary op: computed in its operand's layout by the kernel the op names."""
    x = p.get(op.input, None, op.name)
    p.set(op.result, p.emit(plan.UnaryOp(op.kernel(), x, _name(op))).results[0])


def _plan_cast(p: Planner, op: graph.CastOp, index: int) -> None:
    """A cast in place: to bool the `to_bool` kernel (x != 0), otherwise a converting copy (from
    bool, an i32 word 0/1, to i32 nothing at all)."""
    x = p.get(op.input, None, op.name)
    src, dst = op.input.type.element_type, op.result.type.element_type
    if graph.is_bool_type(dst):
        if graph.is_bool_type(src):
            p.set(op.result, x)
        else:
            p.set(op.result, p.emit(plan.UnaryOp("to_bool", x, _name(op))).results[0])
        return
    if graph.is_bool_type(src) and graph.is_index_type(dst):
        p.set(op.result, x)
        return
    r = plan.CastOp.create(
        operands=[x],
        result_types=[plan.PlanTensorType(op.result.type, x.type.layout_attr)],
        attributes=_value(op),
    )
    p.set(op.result, p.emit(r).results[0])


def _plan_binary(p: Planner, op: Operation, index: int) -> None:
    lhs, rhs = op.operands
    a = p.get(lhs, None, op.name)
    lay = a.type.layout
    rs = tuple(rhs.type.get_shape())
    if rs == lay.shape:
        want = a.type
    elif len(rs) == 1 and len(lay.shape) == 2 and rs[0] == lay.shape[1]:
        al = (lay.align[1],) if lay.align else ()
        bl = Layout(rs, lay.grid, (lay.split[1],), -1, lay.first_tile, al)
        want = plan_type(rhs.type, bl)
    elif len(rs) == 2 and len(lay.shape) == 2 and rs == (lay.shape[0], 1):
        _plan_column_binary(p, op, a)
        return
    else:
        raise DiagnosticException(f"plan-ops: {op.name} broadcast of {rs} to {lay.shape} is not planned yet")
    b = p.get(rhs, want, op.name)
    kind = op.name.split(".")[1]  # the kernel of the op's mnemonic (graph.less -> less)
    p.set(op.results[0], p.emit(plan.BinaryOp(kind, a, b, _name(op))).results[0])


def _plan_column_binary(p: Planner, op: Operation, a: SSAValue) -> None:
    """lhs [R, C] (op) rhs [R, 1]: the column, gathered on one tile as the vector [R] (a
    reshape), goes to every tile in the lhs rows' split (a rearrange). The lhs rows are cut in
    even blocks so the vector's blocks (its one axis padded to whole words) hold the same rows."""
    lhs, rhs = op.operands
    lay = a.type.layout
    if lay.parts(0) > 1 and lay.block[0] % 2:
        al = (math.lcm(lay.align[0] if lay.align else 1, 2), lay.align[1] if lay.align else 1)
        lay = Layout(lay.shape, lay.grid, lay.split, -1, lay.first_tile, al)
        a = p.get(lhs, plan_type(lhs.type, lay, a.type.layout_attr.memory.data), "column broadcast alignment")
    rows = lay.shape[0]
    el = rhs.type.element_type
    col = p.get(rhs, plan_type(rhs.type, Layout((rows, 1), (1,), ((), ()))), op.name)
    vec_t = TensorType(el, [rows])
    want = plan_type(vec_t, Layout((rows,), lay.grid, (lay.split[0],), -1, lay.first_tile, lay.align[:1]))
    key = (rhs, want)
    if key not in p.cache:
        flat = plan.ReshapeOp.create(operands=[col], result_types=[plan_type(vec_t, Layout((rows,), (1,), ((),)))])
        v = p.emit(flat).results[0]
        v.name_hint = f"{rhs.name_hint or 'v'}_col"
        v = p.emit(plan.RearrangeOp(v, want, "column broadcast")).results[0]
        v.name_hint = f"{rhs.name_hint or 'v'}_cols"
        p.conversions.append("column broadcast")
        p.cache[key] = v
    r = plan.BinaryOp(op.name.split(".")[1], a, p.cache[key], _name(op))
    r.attributes["column"] = builtin.UnitAttr()
    p.set(op.results[0], p.emit(r).results[0])


def _plan_where(p: Planner, op: graph.WhereOp, index: int) -> None:
    """x where cond else y: the values and the condition in the layout x has, one `select`."""
    a = p.get(op.lhs, None, op.name)
    if a.type.layout.partial >= 0:
        a = p.get(op.lhs, plan_type(op.lhs.type, row_layout(a.type.layout.shape, p.target.tiles)), op.name)
    b = p.get(op.rhs, a.type, op.name)
    c = p.get(op.condition, plan_type(op.condition.type, a.type.layout, a.type.layout_attr.memory.data), op.name)
    r = plan.SelectOp.create(operands=[a, b, c], result_types=[a.type], attributes=_value(op))
    p.set(op.result, p.emit(r).results[0])


def _plan_arg_reduce(p: Planner, op: graph.ArgReduceOp, index: int) -> None:
    """The index of each row's largest or smallest value: whole rows per tile (as the row
    reductions), one `arg_rows` kernel."""
    x_val = op.input
    x = p.get(x_val, None, op.name)
    lay = x.type.layout
    if lay.partial >= 0 or lay.split[-1] or (len(lay.shape) >= 2 and lay.block[-2] % 2):
        lay = row_layout(lay.shape, p.target.tiles)
        if len(lay.shape) >= 2 and lay.block[-2] % 2:  # the result's one axis is padded to even blocks
            align = list(lay.align or (1,) * len(lay.shape))
            align[-2] = math.lcm(align[-2], 2)
            lay = Layout(lay.shape, lay.grid, lay.split, lay.partial, lay.first_tile, tuple(align))
        x = p.get(x_val, plan_type(x_val.type, lay), op.name)
    rl = Layout(lay.shape[:-1], lay.grid, lay.split[:-1], -1, lay.first_tile, tuple(lay.align[:-1]))
    attrs: dict[str, Attribute] = {**_value(op), "kind": StringAttr(f"arg{op.kind.data}")}
    if op.select_last_index is not None:
        attrs["select_last_index"] = builtin.UnitAttr()
    r = plan.RowwiseOp.create(operands=[x], result_types=[plan_type(op.result.type, rl)], attributes=attrs)
    p.set(op.result, p.emit(r).results[0])


def _plan_transpose(p: Planner, op: graph.TransposeOp, index: int) -> None:
    perm = tuple(op.perm.get_values())
    if len(perm) >= 3 and perm[-1] == len(perm) - 1:
        _plan_permute(p, op, perm)
        return
    x = p.get(op.input, None, op.name)
    lay = x.type.layout
    if len(lay.shape) != 2:
        raise DiagnosticException(
            f"plan-ops: transpose {list(perm)} of rank {len(perm)} is not planned (rank 2, or any rank with the "
            "last axis kept last)"
        )
    if lay.block[0] % 2:
        al = (2, lay.align[1] if lay.align else 1)
        lay = Layout(lay.shape, lay.grid, lay.split, -1, lay.first_tile, al)
        x = p.get(op.input, plan_type(op.input.type, lay, x.type.layout_attr.memory.data), "transpose alignment")
    out = Layout(lay.shape[::-1], lay.grid, lay.split[::-1], -1, lay.first_tile, (lay.block[1], lay.block[0]))
    r = plan.TransposeOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, out)],
        attributes=_value(op),
    )
    p.set(op.result, p.emit(r).results[0])


def _lead_axis(shape: tuple[int, ...]) -> int:
    """The first axis before the last one that is not 1 (0 if there is none)."""
    return next((i for i, d in enumerate(shape[:-1]) if d != 1), 0)


def _plan_permute(p: Planner, op: graph.TransposeOp, perm: tuple[int, ...]) -> None:
    """A permutation that keeps the last axis: one exchange into the result's row layout."""
    x = p.get(op.input, None, op.name)
    if x.type.layout.partial >= 0:
        x = p.get(op.input, plan_type(op.input.type, row_layout(x.type.layout.shape, p.target.tiles)), op.name)
    out = p.desired.get(op.result) or plan_type(
        op.result.type, leading_layout(tuple(op.result.type.get_shape()), p.target.tiles)
    )
    r = plan.PermuteOp.create(operands=[x], result_types=[out], attributes={"perm": op.perm, **_value(op)})
    p.set(op.result, p.emit(r).results[0])


def _plan_reshape(p: Planner, op: graph.ReshapeOp, index: int) -> None:
    target = p.target
    a, r = tuple(op.input.type.get_shape()), tuple(op.result.type.get_shape())
    if not a or not r:  # a scalar at the function boundary, carried as [1]: only unit axes change
        x = p.get(op.input, None, op.name)
        view = x.type.layout if x.type.layout.shape == (r or (1,)) else plan.unit_axis_view(x.type.layout, r or (1,))
        if view is None:  # its one element held with a unit axis split: gather it unsplit first
            whole = Layout(x.type.layout.shape, (1,), ((),) * len(x.type.layout.shape))
            x = p.get(op.input, plan_type(op.input.type, whole), op.name)
            view = plan.unit_axis_view(whole, r or (1,))
            assert view is not None, "an unsplit one-element layout views as any unit shape"
        if view == x.type.layout:  # the same value (its name stays the input's)
            p.current[op.result], p.cache[(op.result, x.type)] = x, x
        else:
            # a scalar result names no checkpoint: the device's [1] is not the graph's shape
            res = plan.ReshapeOp.create(
                operands=[x], result_types=[plan_type(op.result.type, view)], attributes=_value(op) if r else {}
            )
            p.set(op.result, p.emit(res).results[0])
        return
    if p.has(op.input):  # only unit axes change: the value stays where it is
        view = plan.unit_axis_view(p.current[op.input].type.layout, r)
        if view is not None:
            x = p.get(op.input, None, op.name)
            # a scalar result names no checkpoint: the device's [1] is not the graph's shape
            res = plan.ReshapeOp.create(
                operands=[x], result_types=[plan_type(op.result.type, view)], attributes=_value(op) if r else {}
            )
            p.set(op.result, p.emit(res).results[0])
            return
    # each side is split along its first non-unit leading axis (an ONNX [1, C, H, W] input and
    # its row collapse [C*H, W] both cut in whole rows): with only unit axes before it, each
    # tile's block is one contiguous element range, the same on both sides
    ax, rx = _lead_axis(a), _lead_axis(r)
    g = math.gcd(a[ax], r[rx]) if len(a) > 1 and len(r) > 1 else 1
    while g > target.tiles:
        g = max(d for d in range(1, target.tiles + 1) if g % d == 0)
    # layouts pad an odd last axis to whole 32-bit words of fp16 (for every dtype): a block copy
    # is right when both sides pad their rows alike (the same last axis) or not at all; otherwise
    # map-tiles re-cuts each tile's rows (the `repad` kernel), the same elements in order
    ia = Layout(a, (g,), tuple((0,) if i == ax else () for i in range(len(a))))
    ir = Layout(r, (g,), tuple((0,) if i == rx else () for i in range(len(r))))
    x = p.get(op.input, plan_type(op.input.type, ia), op.name)
    res = plan.ReshapeOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, ir)],
        attributes=_value(op),
    )
    p.set(op.result, p.emit(res).results[0])


def _rotated_rows(p: Planner, shape: tuple[int, ...]) -> Layout:
    """Whole rows per tile on the next tile range in turn: were every norm's and softmax's
    gather to land on tiles [0, rows), those tiles' exchange code (a family per source block)
    and replicated norm vectors would grow with the model's depth."""
    lay = row_layout(shape, p.target.tiles)
    slots = max(1, p.target.tiles // lay.tiles)
    first = p.row_turn % slots * lay.tiles
    p.row_turn += 1
    return Layout(lay.shape, lay.grid, lay.split, lay.partial, first, lay.align)


def _plan_rowwise(p: Planner, op: Operation, index: int) -> None:
    x_val = op.operands[0]
    rank = len(x_val.type.get_shape())
    if isinstance(op, graph.SoftmaxOp | graph.ReduceOp) and op.axis_index() != rank - 1:
        raise DiagnosticException(f"plan-ops: {op.name} over axis {op.axis_index()} is planned only on the last axis")
    x = p.get(x_val, None, op.name)
    lay = x.type.layout
    if lay.partial >= 0 or lay.split[-1]:
        lay = _rotated_rows(p, lay.shape)
        x = p.get(x_val, plan_type(x_val.type, lay), op.name)
    params = []
    attrs: dict[str, Attribute] = _value(op)
    if isinstance(op, graph.LayerNormOp | graph.RmsNormOp):
        vec = replicated_vector(lay.shape[-1], lay)
        ops = [op.gamma, op.beta] if isinstance(op, graph.LayerNormOp) else [op.gamma]
        params = [p.get(v, plan_type(v.type, vec), op.name) for v in ops]
        attrs["epsilon"] = builtin.FloatAttr(op.eps(), builtin.f64)
        kind = "layer_norm" if isinstance(op, graph.LayerNormOp) else "rms_norm"
        rt = x.type
    elif isinstance(op, graph.ReduceOp):
        kind = op.kind.data
        if rank >= 2 and lay.block[-2] % 2:
            # the result's last axis is the rows axis, whose block is padded to whole 32-bit words
            # (even): give the input as many rows per tile, so tile t's results are its own rows
            align = list(lay.align or (1,) * rank)
            align[-2] = math.lcm(align[-2], 2)
            lay = Layout(lay.shape, lay.grid, lay.split, lay.partial, lay.first_tile, tuple(align))
            x = p.get(x_val, plan_type(x_val.type, lay), op.name)
        rl = Layout(lay.shape[:-1], lay.grid, lay.split[:-1], -1, lay.first_tile, tuple(lay.align[:-1]))
        rt = plan_type(op.result.type, rl)
    else:
        kind = "softmax"
        rt = x.type
    attrs["kind"] = StringAttr(kind)
    r = plan.RowwiseOp.create(operands=[x, *params], result_types=[rt], attributes=attrs)
    p.set(op.results[0], p.emit(r).results[0])


def _check_head_dim(op: Operation, d: int, index: int) -> None:
    """A head split or merge moves whole head rows between [S, H*D] and [H, S, D]; rows are stored
    padded to whole 32-bit words, so an odd head_dim would move each head's pad as data."""
    if d % 2:
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: head_dim {d} is odd; {op.name} is planned for even head_dim only "
            "(a graph.transpose of the [S, H, D] view is planned for any)"
        )


def _plan_split_heads(p: Planner, op: graph.SplitHeadsOp, index: int) -> None:
    h, s, d = op.result.type.get_shape()
    _check_head_dim(op, d, index)
    want = p.desired.get(op.result)
    if want is None or want.layout.split[2]:  # head_dim stays whole (the consumer converts)
        want = plan_type(op.result.type, row_layout((h, s, d), p.target.tiles))
    # one head a block: the split moves the input as it is into the result's 2-D twin (one
    # exchange); else the input first in the 2-D layout whose head view is the result, and the
    # split then moves whole blocks
    x = p.get(op.input, None, op.name) if plan.one_head_blocks(want.layout) else None
    if x is None or x.type.layout.partial >= 0:
        x = p.get(op.input, plan_type(op.input.type, plan.heads_2d(want.layout)), op.name)
    r = plan.SplitHeadsOp.create(operands=[x], result_types=[want], attributes=_value(op))
    p.set(op.result, p.emit(r).results[0])


def _plan_merge_heads(p: Planner, op: graph.MergeHeadsOp, index: int) -> None:
    _check_head_dim(op, op.input.type.get_shape()[2], index)
    x = p.get(op.input, None, op.name)
    if x.type.layout.partial >= 0 or x.type.layout.split[2]:  # whole heads, no partial sums
        x = p.get(op.input, plan_type(op.input.type, row_layout(x.type.layout.shape, p.target.tiles)), op.name)
    r = plan.MergeHeadsOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, plan.heads_2d(x.type.layout))],
        attributes=_value(op),
    )
    p.set(op.result, p.emit(r).results[0])


def _plan_attention(p: Planner, op: graph.AttentionOp, index: int) -> None:
    c = p.attention[op]
    (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
    lays = attention_layouts(c.grid, c.rows, hq, hkv, s, sk, d)
    q = p.get(op.q, plan_type(op.q.type, lays["q"], "interleaved"), op.name)
    if c.form == "materialized":
        k = p.get(op.k, plan_type(op.k.type, lays["kv"], "interleaved"), op.name)
        v = p.get(op.v, plan_type(op.v.type, lays["kv"], "interleaved"), op.name)
    else:
        k, v = p.get(op.k, None, op.name), p.get(op.v, None, op.name)
        for x, val in ((k, op.k), (v, op.v)):
            if x.type.layout.partial >= 0:
                raise DiagnosticException("plan-ops: streamed attention keys/values must not be partial sums")
            del val
    operands = [q, k, v]
    if op.bias is not None:
        hb = op.bias.type.get_shape()[0]
        b_lay = attention_bias_layout(c.grid, c.rows, hq, hb, s, sk, c.form)
        operands.append(p.get(op.bias, plan_type(op.bias.type, b_lay), op.name))
    st_t = TensorType(builtin.f32, [hq, s, d + 2])
    attrs: dict[str, Attribute] = {
        "form": StringAttr(c.form),
        "scale": builtin.FloatAttr(op.scale_value(), builtin.f64),
        "key_block": builtin.IntegerAttr(c.keys, 64),
    }
    if op.causal is not None:
        attrs["causal"] = builtin.UnitAttr()
    attrs |= _value(op)  # for the scores checkpoint
    st = plan.AttentionOp.create(operands=operands, result_types=[plan_type(st_t, lays["state"])], attributes=attrs)
    sv = p.emit(st).results[0]
    sv.name_hint = f"{op.result.name_hint or 'attn'}_state"
    comb = plan.AttentionCombineOp.create(
        operands=[sv],
        result_types=[plan_type(op.result.type, lays["out"])],
        attributes=_value(op),
    )
    p.set(op.result, p.emit(comb).results[0])
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        form=c.form,
        grid="x".join(map(str, c.grid)),
        rows_per_tile=c.rows,
        keys_per_update=c.keys,
        estimated_cycles=c.cycles,
        bytes_per_tile=c.bytes_per_tile,
    )


def _plan_gather(p: Planner, op: graph.GatherOp, index: int) -> None:
    """The embedding lookup the PopLibs multiSlice way: the table stays distributed over a
    (pv, pd) grid, the indices are replicated on it, each tile slices its rows (`plan.embedding_slice`)
    and, with pv > 1, `plan.reduce` sums the per-row-block partials into row blocks of the result."""
    (v, d), s = op.table.type.get_shape(), op.result.type.get_shape()[0]
    reserved = p.resident + p.live_bytes(exclude=(op.table, op.indices))
    current = None  # the grid an earlier lookup placed the table on: reusing it moves no table
    if p.has(op.table):
        t_l = p.current[op.table].type.layout
        if len(t_l.grid) == 2 and t_l.split == ((0,), (1,)) and t_l.partial < 0 and not t_l.align:
            current = (t_l.grid[0], t_l.grid[1])
    c = p.chooser.gather(op, index, reserved, p.target, current)
    grid = c.grid
    if p.is_weight(op.table) and not p.has(op.table):
        p.resident += c.table_bytes * p.weight_copies(op.table)
    table = p.get(op.table, plan_type(op.table.type, Layout((v, d), grid, ((0,), (1,)))), op.name)
    ishape = tuple(op.indices.type.get_shape())
    ids = p.get(op.indices, plan_type(op.indices.type, Layout(ishape, grid, ((),) * len(ishape))), op.name)
    partial = c.pv > 1
    el = builtin.f32 if partial else op.result.type.element_type
    out_l = Layout((s, d), grid, ((), (1,)), 0 if partial else -1)
    r = plan.EmbeddingSliceOp.create(
        operands=[table, ids],
        result_types=[plan_type(TensorType(el, [s, d]), out_l)],
        attributes={} if partial else _value(op),  # a partial sum is checked after its reduce
    )
    g = p.emit(r).results[0]
    p.event(
        "planned operation",
        op=index,
        name=op.name,
        grid=f"{c.pv}x{c.pd}",
        estimated_cycles=c.cycles,
        bytes_per_tile=c.bytes_per_tile,
        table_bytes_per_tile=c.table_bytes,
    )
    if partial:
        g.name_hint = f"{op.result.name_hint or 'gather'}_partial"
        res_l = Layout((s, d), (gather_result_rows(s, c.pv), c.pd), ((0,), (1,)))
        g = p.emit(plan.ReduceOp(g, plan_type(op.result.type, res_l), _name(op))).results[0]
    p.set(op.result, g)


Emitter = Callable[[Planner, Operation, int], None]

EMITTERS: dict[type[Operation], Emitter] = (
    {
        graph.MatmulOp: _plan_matmul,
        graph.AddOp: _plan_binary,
        graph.SubOp: _plan_binary,
        graph.MulOp: _plan_binary,
        graph.MaxOp: _plan_binary,
        graph.MinOp: _plan_binary,
        graph.DivOp: _plan_binary,
        graph.PowOp: _plan_binary,
        graph.TransposeOp: _plan_transpose,
        graph.ReshapeOp: _plan_reshape,
        graph.CastOp: _plan_cast,
        graph.SoftmaxOp: _plan_rowwise,
        graph.LayerNormOp: _plan_rowwise,
        graph.RmsNormOp: _plan_rowwise,
        graph.ReduceOp: _plan_rowwise,
        graph.SplitHeadsOp: _plan_split_heads,
        graph.MergeHeadsOp: _plan_merge_heads,
        graph.AttentionOp: _plan_attention,
        graph.GatherOp: _plan_gather,
        graph.WhereOp: _plan_where,
        graph.ArgReduceOp: _plan_arg_reduce,
        graph.SliceOp: plan_slice,
        graph.PadOp: plan_pad,
        graph.ConcatOp: plan_concat,
    }
    | dict.fromkeys(
        (
            graph.ModOp,
            graph.FmodOp,
            graph.AndOp,
            graph.OrOp,
            graph.XorOp,
            graph.ShiftLeftOp,
            graph.ShiftRightOp,
            *graph.COMPARE_OPS,
        ),
        _plan_binary,
    )
    | dict.fromkeys(graph.ELEMENTWISE_UNARY_OPS, _plan_unary)  # type: ignore[dict-item]
)
"""How each graph op (by class) becomes plan ops; `plan.repeat` and parameters are structural."""
