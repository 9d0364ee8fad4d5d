"""The plan emitter: walks a graph function in order and builds its plan ops, asking a
`Chooser` at each decision point (a matmul's grid, an attention's grid) and converting layouts
with explicit `plan.rearrange` where a consumer wants another layout than its producer gave.

The emitter owns only the layout bookkeeping (which plan value holds each graph value, in
which layouts, how many bytes are live); what to choose is the chooser's job: `plan_decide`
chooses by cost and records its choices on the graph ops, `plan_materialize` reads them back.
A `plan.layout` attribute on a graph op pins its result layout: the emitter rearranges the
op's natural result into it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ArrayAttr, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.target import Target
from ipu.transforms.log import log_event
from ipu.transforms.plan_candidates import AttentionChoice, GemmChoice, SerialChoice
from ipu.transforms.plan_layouts import (
    attention_layouts,
    attention_window,
    default_layout,
    plan_type,
    replicated_vector,
    row_layout,
    serial_gemm_layouts,
)

CHOICE_ATTR = "plan.choice"  # a decision point's implementation (#plan.choice<…>)
LAYOUT_ATTR = "plan.layout"  # a pinned result layout (#plan.layout<…>)


def describe(op: Operation, index: int) -> str:
    """How diagnostics name a graph op: its name, pre-order index and result name."""
    res = f" %{op.results[0].name_hint}" if op.results and op.results[0].name_hint else ""
    return f"{op.name}{res} (op {index})"


@dataclass(frozen=True)
class MatmulContext:
    """What a matmul's choice depends on, as the emitter has it when it reaches the op."""

    op: graph.MatmulOp
    index: int
    m: int
    k: int
    n: int
    esize: int
    a_moves: bool  # the lhs exists already
    b_moves: bool  # the rhs exists already (must be exchanged into place)
    a_current: Layout | None
    reserved: int  # bytes per tile held by resident weights and live values
    resident: int  # bytes per tile of weights kept resident so far
    weight: bool  # the rhs is a parameter not yet placed: resident or fetched is a choice
    home_bytes: int  # per tile, a fetched weight's distributed home


@dataclass(frozen=True)
class MatmulPlan:
    """A matmul's implementation: a (pm, pn, pk) gemm, or the serial gemm when none fits."""

    gemm: GemmChoice | None = None
    serial: SerialChoice | None = None
    fetch: bool = False  # the weight is stored spread over the grid and fetched before use
    weight: bool = False  # the rhs was a parameter not yet placed (resident or fetched)

    def attr(self) -> plan.ChoiceAttr:
        if self.gemm is not None:
            mode = ("fetched" if self.fetch else "resident") if self.weight else ""
            return plan.ChoiceAttr("gemm", self.gemm.grid, weight=mode)
        assert self.serial is not None
        return plan.ChoiceAttr("gemm_serial", (self.serial.pm, self.serial.pn), k_steps=self.serial.steps)


def attention_attr(c: AttentionChoice) -> plan.ChoiceAttr:
    return plan.ChoiceAttr("attention", c.grid, key_block=c.keys)


class Chooser(Protocol):
    """Chooses each decision point's implementation while the emitter walks the function."""

    def matmul(self, ctx: MatmulContext, target: Target) -> MatmulPlan: ...

    def attention(self, op: graph.AttentionOp, index: int, target: Target) -> AttentionChoice: ...


@dataclass
class Planner:
    """Layout bookkeeping while one function is planned into `top` (and repeat bodies)."""

    target: Target
    chooser: Chooser
    block: Block
    arg_map: dict[SSAValue, int]
    top: Block = field(default=None)  # type: ignore[assignment]
    log: bool = True  # log each op's plan (the materialized plan, not each trial of a search)
    current: dict[SSAValue, SSAValue] = field(default_factory=dict)
    cache: dict[tuple[SSAValue, plan.PlanTensorType], SSAValue] = field(default_factory=dict)
    params: dict[SSAValue, graph.ParameterOp] = field(default_factory=dict)
    new_args: dict[int, SSAValue] = field(default_factory=dict)
    conversions: list[str] = field(default_factory=list)
    desired: dict[SSAValue, plan.PlanTensorType] = field(default_factory=dict)  # consumer-chosen layouts
    attention: dict[Operation, AttentionChoice] = field(default_factory=dict)
    resident: int = 0  # bytes per tile of weights kept in their consumer's layout
    gemms: int = 0
    index_of: dict[Operation, int] = field(default_factory=dict)
    uses_left: dict[SSAValue, int] = field(default_factory=dict)  # graph uses not yet planned

    def live_bytes(self, exclude: tuple[SSAValue, ...] = ()) -> int:
        """Per-tile bytes of planned values that later ops still read (weights excluded)."""
        total = 0
        for v, nv in self.current.items():
            if v in exclude or v in self.params or self.uses_left.get(v, 0) <= 0:
                continue
            lay = nv.type.layout
            total += lay.block_elements * nv.type.tensor.element_type.bitwidth // 8
        return total

    def consumed(self, op: Operation) -> None:
        for v in op.operands:
            self.uses_left[v] = self.uses_left.get(v, 0) - 1

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def has(self, v: SSAValue) -> bool:
        return v in self.current

    def arg(self, v: SSAValue, t: plan.PlanTensorType) -> SSAValue:
        i = self.arg_map[v]
        pos = sum(1 for j in self.new_args if j < i)
        a = self.top.insert_arg(t, pos)
        a.name_hint = v.name_hint
        self.new_args[i] = a
        return a

    def get(self, v: SSAValue, want: plan.PlanTensorType | None, reason: str) -> SSAValue:
        """The plan value for graph value `v` in layout `want` (materializing or converting)."""
        if v not in self.current:
            t = want or plan_type(v.type, default_layout(tuple(v.type.get_shape()), self.target.tiles))
            if v in self.params:
                p = self.params[v]
                # weights are loaded once by `initialize`: declared at function level even when a
                # repeat body uses them
                decl = plan.ParameterOp(p.sym_name.data, p.init, t)
                self.top.add_op(decl)
                nv = decl.results[0]
            else:
                nv = self.arg(v, t)
            nv.name_hint = v.name_hint
            self.current[v] = nv
            self.cache[(v, t)] = nv
            return nv
        cur = self.current[v]
        if want is None or cur.type == want:
            return cur
        if (v, want) in self.cache:
            return self.cache[(v, want)]
        nv = self.emit(plan.RearrangeOp(cur, want, reason)).results[0]
        nv.name_hint = f"{v.name_hint or 'v'}_r"
        self.cache[(v, want)] = nv
        self.conversions.append(reason)
        return nv

    def set(self, v: SSAValue, nv: SSAValue) -> None:
        nv.name_hint = v.name_hint
        self.current[v] = nv
        self.cache[(v, nv.type)] = nv

    def event(self, message: str, **fields: object) -> None:
        if self.log:
            log_event(message, **fields)


@dataclass
class Planned:
    """A function planned into `block` (not yet installed): its outputs and summary figures."""

    block: Block
    outputs: list[SSAValue]
    figures: dict[str, int]


def plan_body(f: func.FuncOp, target: Target, chooser: Chooser, log: bool = True) -> Planned:
    """Plan the graph function `f` into a new block, leaving `f` untouched."""
    old = f.body.block
    new = Block()
    p = Planner(target, chooser, new, {a: i for i, a in enumerate(old.args)}, new, log)
    _pre_plan(p, old)
    index, ret = plan_block(p, old, 0)
    if not isinstance(ret, func.ReturnOp):
        raise DiagnosticException("plan-ops: function has no func.return")
    outs = [p.get(v, None, "output") for v in ret.arguments]
    for v in outs:
        if v.type.layout.partial >= 0:
            raise DiagnosticException("plan-ops: an output is still a partial sum")
    new.add_op(func.ReturnOp(*outs))
    for i, a in enumerate(old.args):  # unused inputs still get a layout
        if i not in p.new_args:
            p.arg(a, plan_type(a.type, default_layout(tuple(a.type.get_shape()), target.tiles)))
    return Planned(new, outs, {"operations": index, "conversions": len(p.conversions), "gemms": p.gemms})


def install(f: func.FuncOp, planned: Planned, target: Target) -> None:
    """Replace `f`'s graph body by its plan and give it its plan-level signature and names."""
    old, new, outs = f.body.block, planned.block, planned.outputs
    f.body.detach_block(old)
    old.erase(safe_erase=False)
    f.body.add_block(new)
    f.function_type = builtin.FunctionType.from_lists([a.type for a in new.args], [v.type for v in outs])
    names = [StringAttr(a.name_hint or f"arg{i}") for i, a in enumerate(new.args)]
    outputs = [StringAttr(f"output{i}") for i in range(len(outs))]
    # names declared by the graph function (e.g. an imported model's own) are kept
    f.attributes["ipu.inputs"] = _declared_names(f, "ipu.inputs", len(names)) or ArrayAttr(names)
    f.attributes["ipu.outputs"] = _declared_names(f, "ipu.outputs", len(outs)) or ArrayAttr(outputs)
    f.attributes["ipu.target"] = StringAttr(target.name)


def _declared_names(f: func.FuncOp, key: str, n: int) -> ArrayAttr | None:
    a = f.attributes.get(key)
    if isinstance(a, ArrayAttr) and len(a.data) == n and all(isinstance(x, StringAttr) for x in a.data):
        return a
    return None


def plan_block(p: Planner, block: Block, index: int) -> tuple[int, Operation | None]:
    """Plan the ops of `block` in order (op indices in pre-order, as the golden evaluator
    numbers them); returns the next index and the block's terminator."""
    ret: Operation | None = None
    for op in list(block.ops):
        _check_pins(op, index)
        if isinstance(op, graph.ParameterOp):
            p.params[op.result] = op
            index += 1
            continue
        if isinstance(op, func.ReturnOp | graph.YieldOp):
            ret = op
            continue
        if isinstance(op, graph.RepeatOp):
            index = _plan_repeat(p, op, index)
            continue
        emitter = EMITTERS.get(type(op))
        if emitter is None:
            raise DiagnosticException(f"plan-ops: no plan for operation {op.name}")
        emitter(p, op, index)
        _pin_layout(p, op, index)
        p.consumed(op)
        index += 1
    return index, ret


def _check_pins(op: Operation, index: int) -> None:
    """Refuse a pin the planner would otherwise ignore."""
    if CHOICE_ATTR in op.attributes and not isinstance(op, graph.MatmulOp | graph.AttentionOp):
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: {CHOICE_ATTR} applies to graph.matmul and graph.attention only"
        )
    if LAYOUT_ATTR in op.attributes and isinstance(op, graph.ParameterOp | graph.RepeatOp):
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: {LAYOUT_ATTR} cannot be pinned here (a weight takes its first "
            "consumer's layout and a repeat carries its inputs' layouts); pin the consumer or producer instead"
        )


def pinned_layout(op: Operation, index: int, target: Target) -> plan.PlanTensorType | None:
    """The result type a `plan.layout` attribute pins for `op`, checked against its result."""
    attr = op.attributes.get(LAYOUT_ATTR)
    if attr is None:
        return None
    where = describe(op, index)
    if not isinstance(attr, plan.LayoutAttr):
        raise DiagnosticException(f"plan-ops: {where}: {LAYOUT_ATTR} must be a #plan.layout<…>")
    if len(op.results) != 1 or not isinstance(op.results[0].type, TensorType):
        raise DiagnosticException(f"plan-ops: {where}: only an op with one tensor result can pin its layout")
    shape = tuple(op.results[0].type.get_shape())
    if len(attr.split.data) != len(shape):
        raise DiagnosticException(
            f"plan-ops: {where}: pinned layout splits {len(attr.split.data)} axes; the result has {len(shape)}"
        )
    if attr.partial.data >= 0:
        raise DiagnosticException(f"plan-ops: {where}: a pinned result layout cannot be a partial sum")
    tiles = math.prod(attr.grid_dims) + attr.first.data
    if tiles > target.tiles:
        raise DiagnosticException(
            f"plan-ops: {where}: pinned layout grid {'x'.join(map(str, attr.grid_dims))} from tile {attr.first.data} "
            f"needs {tiles} tiles; target {target.name} has {target.tiles}"
        )
    try:
        attr.layout(shape)
    except ValueError as e:
        raise DiagnosticException(
            f"plan-ops: {where}: pinned layout does not fit the result {list(shape)}: {e}"
        ) from None
    return plan.PlanTensorType(op.results[0].type, attr)


def _pin_layout(p: Planner, op: Operation, index: int) -> None:
    want = pinned_layout(op, index, p.target)
    if want is not None:
        p.current[op.results[0]] = p.get(op.results[0], want, "pinned layout")


def _pre_plan(p: Planner, block: Block) -> None:
    """Look ahead: op indices, use counts (for liveness-aware budgets), attention layouts."""
    ops = [o for o in block.walk() if not isinstance(o, func.ReturnOp | graph.YieldOp)]
    p.index_of = {o: i for i, o in enumerate(ops)}
    for op in block.walk():
        for v in op.operands:
            p.uses_left[v] = p.uses_left.get(v, 0) + 1
        if isinstance(op, graph.AttentionOp):
            (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
            c = p.chooser.attention(op, p.index_of[op], p.target)
            p.attention[op] = c
            lays = attention_layouts(c.grid, c.rows, hq, hkv, s, sk, d)
            p.desired.setdefault(op.q, plan_type(op.q.type, lays["q"], "interleaved"))
            if c.form == "materialized":
                for v in (op.k, op.v):
                    p.desired.setdefault(v, plan_type(v.type, lays["kv"], "interleaved"))
            else:
                win = attention_window(hkv, sk, d, c.keys)
                for v in (op.k, op.v):
                    p.desired.setdefault(v, plan_type(v.type, win))


def _plan_repeat(p: Planner, op: graph.RepeatOp, index: int) -> int:
    """A structured plan.repeat: carried values keep their entry layouts across iterations."""
    inits = [p.get(v, None, op.name) for v in op.inits]
    for v in inits:
        if v.type.layout.partial >= 0:
            raise DiagnosticException("plan-ops: a repeat cannot carry a partial sum")
    outer, cache = p.block, dict(p.cache)
    body = Block(arg_types=[v.type for v in inits])
    for ga, na in zip(op.body.block.args, body.args, strict=True):
        na.name_hint = ga.name_hint
        p.current[ga] = na
        p.cache[(ga, na.type)] = na
    p.block = body
    nxt, term = plan_block(p, op.body.block, index + 1)
    assert isinstance(term, graph.YieldOp)
    ys = [p.get(v, a.type, "carried layout") for v, a in zip(term.values, body.args, strict=True)]
    body.add_op(plan.YieldOp.create(operands=ys))
    p.block, p.cache = outer, cache
    r = plan.RepeatOp(op.count.value.data, inits, Region(body))
    r.attributes["op_index"] = builtin.IntegerAttr(index, 64)
    p.emit(r)
    for gv, nv in zip(op.results, r.results, strict=True):
        p.set(gv, nv)
    p.consumed(op)
    p.event("planned repeat", op=index, count=op.count.value.data, body_operations=nxt - index - 1)
    return nxt


def _op_index(index: int) -> dict[str, Attribute]:
    return {"op_index": builtin.IntegerAttr(index, 64)}


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
        op.rhs in p.params and not p.has(op.rhs),
        math.ceil(k * n / p.target.tiles) * esize,
    )
    mp = p.chooser.matmul(ctx, p.target)
    if mp.serial is not None:
        _emit_serial_gemm(p, op, index, mp.serial)
        return
    c = mp.gemm
    assert c is not None
    if mp.weight:
        p.resident += ctx.home_bytes if mp.fetch else c.weight_bytes
    lays = c.layouts
    el = op.result.type.element_type
    if mp.fetch:
        assert lays.home is not None
        p.get(op.rhs, plan_type(op.rhs.type, lays.home), "weight home")
    a = p.get(op.lhs, plan_type(op.lhs.type, lays.a), op.name)
    b = p.get(op.rhs, plan_type(op.rhs.type, lays.b, "interleaved"), "weight fetch" if mp.fetch else op.name)
    r_t = TensorType(builtin.f32 if c.pk > 1 else el, [m, n])
    g = p.emit(plan.GemmOp(a, b, plan_type(r_t, lays.partial, "interleaved"), None if c.pk > 1 else index)).results[0]
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
        g = p.emit(plan.ReduceOp(g, plan_type(op.result.type, lays.result), index)).results[0]
    p.set(op.result, g)


def _emit_serial_gemm(p: Planner, op: graph.MatmulOp, index: int, c: SerialChoice) -> None:
    (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
    la, lb, lo = serial_gemm_layouts(m, k, n, c.pm, c.pn)
    a = p.get(op.lhs, plan_type(op.lhs.type, la), op.name)
    b = p.get(op.rhs, plan_type(op.rhs.type, lb), "weight home")
    r = plan.SerialGemmOp.create(
        operands=[a, b],
        result_types=[plan_type(op.result.type, lo)],
        attributes={"k_steps": builtin.IntegerAttr(c.steps, 64), **_op_index(index)},
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


def unary_kind(op: Operation) -> str:
    """The `plan.unary` kind a graph unary op lowers to."""
    return "gelu_erf" if isinstance(op, graph.GeluOp) and op.exact else op.name.split(".")[1]


def _plan_unary(p: Planner, op: Operation, index: int) -> None:
    """Every elementwise unary op: computed in its operand's layout."""
    x = p.get(op.operands[0], None, op.name)
    p.set(op.results[0], p.emit(plan.UnaryOp(unary_kind(op), x, index)).results[0])


def _plan_cast(p: Planner, op: graph.CastOp, index: int) -> None:
    x = p.get(op.input, None, op.name)
    r = plan.CastOp.create(
        operands=[x],
        result_types=[plan.PlanTensorType(op.result.type, x.type.layout_attr)],
        attributes=_op_index(index),
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
    else:
        raise DiagnosticException(f"plan-ops: {op.name} broadcast of {rs} to {lay.shape} is not planned yet")
    b = p.get(rhs, want, op.name)
    kind = op.name.split(".")[1]
    p.set(op.results[0], p.emit(plan.BinaryOp(kind, a, b, index)).results[0])


def _plan_transpose(p: Planner, op: graph.TransposeOp, index: int) -> None:
    x = p.get(op.input, None, op.name)
    lay = x.type.layout
    if len(lay.shape) != 2:
        raise DiagnosticException("plan-ops: only rank-2 transposes are planned")
    if lay.block[0] % 2:
        al = (2, lay.align[1] if lay.align else 1)
        lay = Layout(lay.shape, lay.grid, lay.split, -1, lay.first_tile, al)
        x = p.get(op.input, plan_type(op.input.type, lay, x.type.layout_attr.memory.data), "transpose alignment")
    out = Layout(lay.shape[::-1], lay.grid, lay.split[::-1], -1, lay.first_tile, (lay.block[1], lay.block[0]))
    r = plan.TransposeOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, out)],
        attributes={"op_index": builtin.IntegerAttr(index, 64)},
    )
    p.set(op.result, p.emit(r).results[0])


def _plan_reshape(p: Planner, op: graph.ReshapeOp, index: int) -> None:
    target = p.target
    a, r = tuple(op.input.type.get_shape()), tuple(op.result.type.get_shape())
    g = math.gcd(a[0], r[0]) if len(a) > 1 and len(r) > 1 else 1
    while g > target.tiles:
        g = max(d for d in range(1, target.tiles + 1) if g % d == 0)
    # layouts pad an odd last axis to whole 32-bit words of fp16 (for every dtype): a block copy
    # is right only when both sides pad their rows alike (the same last axis) or not at all
    ok = a[-1] == r[-1] or all(s[-1] % 2 == 0 for s in (a, r))
    if not ok or (len(a) == 1) != (len(r) == 1) and g != 1:
        raise DiagnosticException(f"plan-ops: reshape {a} -> {r} is not planned yet (odd last dimension)")
    ia = Layout(a, (g,), ((0,),) + ((),) * (len(a) - 1))
    ir = Layout(r, (g,), ((0,),) + ((),) * (len(r) - 1))
    x = p.get(op.input, plan_type(op.input.type, ia), op.name)
    res = plan.ReshapeOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, ir)],
        attributes={"op_index": builtin.IntegerAttr(index, 64)},
    )
    p.set(op.result, p.emit(res).results[0])


def _plan_rowwise(p: Planner, op: Operation, index: int) -> None:
    x_val = op.operands[0]
    rank = len(x_val.type.get_shape())
    if isinstance(op, graph.SoftmaxOp | graph.ReduceOp) and op.axis_index() != rank - 1:
        raise DiagnosticException(f"plan-ops: {op.name} over axis {op.axis_index()} is planned only on the last axis")
    x = p.get(x_val, None, op.name)
    lay = x.type.layout
    if lay.partial >= 0 or lay.split[-1]:
        lay = row_layout(lay.shape, p.target.tiles)
        x = p.get(x_val, plan_type(x_val.type, lay), op.name)
    params = []
    attrs: dict[str, Attribute] = {"op_index": builtin.IntegerAttr(index, 64)}
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


def _plan_split_heads(p: Planner, op: graph.SplitHeadsOp, index: int) -> None:
    h, s, d = op.result.type.get_shape()
    want = p.desired.get(op.result) or plan_type(op.result.type, row_layout((h, s, d), p.target.tiles))
    # the input in the 2-D layout whose head view is the result: the split then moves whole blocks
    x = p.get(op.input, plan_type(op.input.type, plan.heads_2d(want.layout)), op.name)
    r = plan.SplitHeadsOp.create(
        operands=[x], result_types=[want], attributes={"op_index": builtin.IntegerAttr(index, 64)}
    )
    p.set(op.result, p.emit(r).results[0])


def _plan_merge_heads(p: Planner, op: graph.MergeHeadsOp, index: int) -> None:
    x = p.get(op.input, None, op.name)
    if x.type.layout.partial >= 0:
        raise DiagnosticException("plan-ops: merge_heads of a partial sum")
    r = plan.MergeHeadsOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, plan.heads_2d(x.type.layout))],
        attributes={"op_index": builtin.IntegerAttr(index, 64)},
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
    st_t = TensorType(builtin.f32, [hq, s, d + 2])
    attrs: dict[str, Attribute] = {
        "form": StringAttr(c.form),
        "scale": builtin.FloatAttr(op.scale_value(), builtin.f64),
        "key_block": builtin.IntegerAttr(c.keys, 64),
    }
    if op.causal is not None:
        attrs["causal"] = builtin.UnitAttr()
    attrs["op_index"] = builtin.IntegerAttr(index, 64)  # for the scores checkpoint
    st = plan.AttentionOp.create(operands=[q, k, v], result_types=[plan_type(st_t, lays["state"])], attributes=attrs)
    sv = p.emit(st).results[0]
    sv.name_hint = f"{op.result.name_hint or 'attn'}_state"
    comb = plan.AttentionCombineOp.create(
        operands=[sv],
        result_types=[plan_type(op.result.type, lays["out"])],
        attributes={"op_index": builtin.IntegerAttr(index, 64)},
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


Emitter = Callable[[Planner, Operation, int], None]

EMITTERS: dict[type[Operation], Emitter] = {
    graph.MatmulOp: _plan_matmul,
    graph.AddOp: _plan_binary,
    graph.SubOp: _plan_binary,
    graph.MulOp: _plan_binary,
    graph.MaxOp: _plan_binary,
    graph.GeluOp: _plan_unary,
    graph.ReluOp: _plan_unary,
    graph.ExpOp: _plan_unary,
    graph.TanhOp: _plan_unary,
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
}  # type: ignore[dict-item]
"""How each graph op (by class) becomes plan ops; `plan.repeat` and parameters are structural."""
