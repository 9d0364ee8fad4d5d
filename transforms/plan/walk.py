"""The plan emitter: walks a graph function in order and builds its plan ops, each op by its
plan family (`families`), which asks the planner's chooser at a decision point (a matmul's
grid, an attention's grid) and converts operand layouts with explicit `plan.rearrange`.

A `plan.layout` attribute on a graph op pins its result layout: the emitter rearranges the
op's natural result into it. Materialization is one ordered walk rather than independent
per-op rewrite patterns because its state is function-wide: an input or weight takes the layout
of its first consumer, a rearranged value is shared by every consumer wanting that layout, and
matmul budgets count the bytes live and held by resident weights at that point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, StringAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.dialects.value_names import name_values
from ipu.target import Target
from ipu.transforms.plan.families import family_of
from ipu.transforms.plan.families.attention import ATTENTION, AttentionRequest
from ipu.transforms.plan.families.base import Chooser, DecisionFamily
from ipu.transforms.plan.layouts import (
    attention_bias_layout,
    attention_layouts,
    attention_window,
    default_layout,
    plan_type,
    scalar_layout,
)
from ipu.transforms.plan.pricing import conversion_cost
from ipu.transforms.plan.state import (
    CARRY_ATTR,
    CHOICE_ATTR,
    LAYOUT_ATTR,
    LINK_INPUTS_ATTR,
    Planner,
    defined_in,
    describe,
    function_partials,
    function_spread,
    heavy_weights,
    pack_weights,
)


@dataclass
class Planned:
    """A function planned into `block` (not yet installed): its outputs and summary figures."""

    block: Block
    outputs: list[SSAValue]
    figures: dict[str, int]
    spread_weights: list[tuple[int, int]] = field(default_factory=list)  # (tiles, bytes per tile) each
    fixed_weights: list[tuple[int, int, int]] = field(default_factory=list)  # (first, tiles, bytes) each


def plan_body(f: func.FuncOp, target: Target, chooser: Chooser, log: bool = True) -> Planned:
    """Plan the graph function `f` into a new block, leaving `f`'s ops untouched (its values are
    given their stable names once, `name_values`). Each plan op that computes a graph value
    carries that value's name (`value = "h"`), by which its checkpoint is matched. With its
    weights spread (`function_spread`), a first walk finds them and `pack_weights` places them
    heaviest first for the second."""
    name_values(f)
    heavy = heavy_weights(f, target)  # once: the search plans a function many times
    if not function_spread(f, target, heavy):
        return _plan_body(f, target, chooser, log, False, None, heavy)
    first = _plan_body(f, target, chooser, False, True, None, heavy)
    first.block.erase(safe_erase=False)
    places = pack_weights(first.spread_weights, target.tiles, first.fixed_weights)
    return _plan_body(f, target, chooser, log, True, places, heavy)


def _plan_body(
    f: func.FuncOp, target: Target, chooser: Chooser, log: bool, spread: bool, places: list[int] | None, heavy: bool
) -> Planned:
    old = f.body.block
    new = Block()
    p = Planner(target, chooser, new, {a: i for i, a in enumerate(old.args)}, new, log)
    p.half_partials = function_partials(f)
    p.spread, p.places, p.heavy = spread, places, heavy
    _pre_plan(p, old)
    linked = f.attributes.get(LINK_INPUTS_ATTR)
    if isinstance(linked, ArrayAttr):  # written by a link: one copy, in the default layout, before any reader
        names = [n.data for n in f.attributes["ipu.inputs"].data]  # type: ignore[union-attr]
        for a, name in zip(old.args, names, strict=True):
            if StringAttr(name) in linked.data and a.uses:
                p.get(a, None, "link input")
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
            shape = tuple(a.type.get_shape())
            p.arg(a, plan_type(a.type, default_layout(shape, target.tiles) if shape else scalar_layout()))
    figures = {"operations": index, "conversions": len(p.conversions), "gemms": p.gemms}
    return Planned(new, outs, figures, p.spread_weights, p.fixed_weights)


def install(f: func.FuncOp, planned: Planned) -> None:
    """Replace `f`'s graph body by its plan and give it its plan-level signature and names."""
    old, new, outs = f.body.block, planned.block, planned.outputs
    declared = [a.type for a in old.args], [v.type for v in old.last_op.operands] if old.last_op else []
    f.body.detach_block(old)
    old.erase(safe_erase=False)
    f.body.add_block(new)
    f.function_type = builtin.FunctionType.from_lists([a.type for a in new.args], [v.type for v in outs])
    names = [StringAttr(a.name_hint or f"arg{i}") for i, a in enumerate(new.args)]
    outputs = [StringAttr(f"output{i}") for i in range(len(outs))]
    # names declared by the graph function (e.g. an imported model's own) are kept
    f.attributes["ipu.inputs"] = _declared_names(f, "ipu.inputs", len(names)) or ArrayAttr(names)
    f.attributes["ipu.outputs"] = _declared_names(f, "ipu.outputs", len(outs)) or ArrayAttr(outputs)
    record_host_shapes(f, *declared)


HOST_SHAPES = "ipu.host_shapes"
"""Function attribute: run input or output name -> its declared shape, for the streams whose
device tensor has another shape of the same elements (a scalar carried as [1])."""


def record_host_shapes(f: func.FuncOp, arg_types: list[Attribute], result_types: list[Attribute]) -> None:
    """Record in `ipu.host_shapes` the graph-level shape of every rank-0 input and output of `f`
    (planned as [1]: the host still writes and reads the declared scalar)."""
    entries: dict[str, Attribute] = {}
    for key, types in (("ipu.inputs", arg_types), ("ipu.outputs", result_types)):
        names = f.attributes[key].data  # type: ignore[union-attr]
        for n, t in zip(names, types, strict=True):
            if isinstance(t, TensorType) and not t.get_shape():
                entries[n.data] = DenseArrayBase.from_list(i64, [])
    if entries:
        f.attributes[HOST_SHAPES] = DictionaryAttr(entries)


def _declared_names(f: func.FuncOp, key: str, n: int) -> ArrayAttr | None:
    a = f.attributes.get(key)
    if isinstance(a, ArrayAttr) and len(a.data) == n and all(isinstance(x, StringAttr) for x in a.data):
        return a
    return None


def plan_block(p: Planner, block: Block, index: int) -> tuple[int, Operation | None]:
    """Plan the ops of `block` in order (op indices in pre-order, as diagnostics and the search's
    choices number them); returns the next index and the block's terminator."""
    ret: Operation | None = None
    for op in list(block.ops):
        _check_pins(op, index)
        if isinstance(op, graph.ParameterOp):
            p.params[op.result] = op
            index += 1
            continue
        if isinstance(op, graph.IterationSliceOp):
            if op.input not in p.params and op.input.owner is not None and defined_in(op.input, block):
                raise DiagnosticException(
                    f"plan-ops: {describe(op, index)}: graph.iteration_slice of a value its own loop computes "
                    "(it can only slice a weight or a value computed before the loop)"
                )
            p.slices[op.result] = op
            p.consumed(op)
            index += 1
            continue
        if isinstance(op, graph.IterationStoreOp):
            _plan_store(p, op, index)
            index += 1
            continue
        if isinstance(op, func.ReturnOp | graph.YieldOp):
            ret = op
            continue
        if isinstance(op, graph.RepeatOp):
            index = _plan_repeat(p, op, index)
            continue
        family = family_of(op)
        if family is None:
            raise DiagnosticException(f"plan-ops: no plan for operation {op.name}")
        _check_scalars(op, index)
        family.emit(p, op, index)
        _pin_layout(p, op, index)
        p.consumed(op)
        index += 1
    return index, ret


def _check_scalars(op: Operation, index: int) -> None:
    """A rank-0 value is planned only where it crosses the function boundary: the reshape to or
    from [1] next to a scalar input or output (the device carries it as [1])."""
    if isinstance(op, graph.ReshapeOp):
        return
    for v in (*op.operands, *op.results):
        if isinstance(v.type, TensorType) and not v.type.get_shape():
            raise DiagnosticException(
                f"plan-ops: {describe(op, index)}: a rank-0 operand or result is planned only at the function "
                "boundary; reshape the scalar to [1] (graph.reshape) before computing with it"
            )


def _check_pins(op: Operation, index: int) -> None:
    """Refuse a pin the planner would otherwise ignore."""
    if CHOICE_ATTR in op.attributes and not isinstance(family_of(op), DecisionFamily):
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: {CHOICE_ATTR} applies to graph.matmul, graph.attention and "
            "graph.gather only"
        )
    if CARRY_ATTR in op.attributes and not isinstance(op, graph.RepeatOp):
        raise DiagnosticException(f"plan-ops: {describe(op, index)}: {CARRY_ATTR} applies to graph.repeat only")
    if LAYOUT_ATTR in op.attributes and isinstance(op, graph.ParameterOp | graph.RepeatOp):
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: {LAYOUT_ATTR} cannot be pinned here (a weight takes its first "
            "consumer's layout and a repeat carries its inputs' layouts, or those its plan.carry names); pin the "
            "consumer or producer instead"
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
    check_pinned_layout(attr, tuple(op.results[0].type.get_shape()), where, target)
    return plan.PlanTensorType(op.results[0].type, attr)


def check_pinned_layout(attr: plan.LayoutAttr, shape: tuple[int, ...], where: str, target: Target) -> None:
    """Refuse a pinned layout that does not fit a value of `shape` or the target's tiles."""
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
            c = p.chooser.decide(ATTENTION, AttentionRequest(op, p.index_of[op]), p.target)
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
            if op.bias is not None:
                b_lay = attention_bias_layout(c.grid, c.rows, hq, op.bias.type.get_shape()[0], s, sk, c.form)
                p.desired.setdefault(op.bias, plan_type(op.bias.type, b_lay))
            for v in (op.q, op.k, op.v):
                _slice_into_heads(p, v)


def _slice_into_heads(p: Planner, v: SSAValue) -> None:
    """A head split of a slice read by nothing else (a fused projection's q, k or v columns, with
    its bias added or not), its heads one a block: the slice is wanted in the split's 2-D twin
    and memory, so its window lands each head where the split's result lies (the bias is added
    there, in the slice's layout) and the split is a view of it, not a second move."""
    split = v.owner
    if not isinstance(split, graph.SplitHeadsOp) or v not in p.desired:
        return
    x = split.input
    add = x.owner
    if isinstance(add, graph.AddOp) and x.has_one_use() and add.lhs.type == x.type:
        x = add.lhs  # the bias add keeps its lhs's layout and memory
    want = p.desired[v].layout
    if isinstance(x.owner, graph.SliceOp) and x.has_one_use() and plan.one_head_blocks(want):
        memory = p.desired[v].layout_attr.memory.data  # the split's: it is then a view, no copy
        p.desired.setdefault(x, plan_type(x.type, plan.heads_2d(want), memory))


def _store_layout(arg: SSAValue, count: int, tiles: int) -> plan.PlanTensorType | None:
    """The layout of a carried value an iteration_store writes into (`arg`, a body argument):
    a slice's default layout, stacked, so each trip's store is local to the tiles."""
    for use in arg.uses:
        if isinstance(use.operation, graph.IterationStoreOp) and use.index == 0:
            shape = tuple(arg.type.get_shape())
            return plan_type(arg.type, plan.stacked_layout(default_layout(shape[1:], tiles), count))
    return None


def _plan_store(p: Planner, op: graph.IterationStoreOp, index: int) -> None:
    """This trip's slice written into the carried stack, in the stack's own layout."""
    acc = p.get(op.stacked, None, op.name)
    lay = acc.type.layout
    if lay.split and lay.split[0] or lay.partial >= 0:
        raise DiagnosticException(
            f"plan-ops: {describe(op, index)}: the stacked value is not laid out slice by slice "
            "(it must be a value the loop carries from outside)"
        )
    one = Layout(lay.shape[1:], lay.grid, lay.split[1:], -1, lay.first_tile, lay.align[1:] if lay.align else ())
    val = p.get(op.value, plan_type(op.value.type, one), op.name)
    nv = p.emit(plan.IterationStoreOp.create(operands=[acc, val], result_types=[acc.type])).results[0]
    p.set(op.result, nv)
    p.consumed(op)


def _carry_as_yielded(p: Planner, arg: SSAValue, y: SSAValue, trips: int) -> bool:
    """Whether a carried value should travel in the layout the body yields it in (`y`'s) rather
    than its entry layout (`arg`'s): then the yield converts nothing and every body conversion of
    the argument into that layout goes, and the init is converted once before the loop. Only
    when the body reads the argument through conversions alone (each then starts from the new
    layout), and the words and phases saved over the trips outweigh the init's conversion. GPT-2's
    residual stream: yielded from the last add as [12 x 6] blocks on 1,452 tiles, carried as the
    embedding's [16 x 6] on 1,024, and moved back into the add's layout on every trip."""
    if y is arg or y.type == arg.type or y.type.layout.partial >= 0:
        return False
    uses = [u.operation for u in arg.uses]
    if not uses or not all(isinstance(o, plan.RearrangeOp) for o in uses):
        return False

    def cost(src: plan.PlanTensorType, dst: plan.PlanTensorType) -> int:  # its words, phase and fragments
        cycles, frags = conversion_cost(src, dst, p.target)
        return cycles + frags * p.target.exchange["fragment_cycles"]

    per_trip = cost(y.type, arg.type)  # the yield's conversion back
    for o in uses:
        want = o.result.type
        # a conversion into the yielded layout goes; any other starts from it instead
        per_trip += cost(arg.type, want) - (0 if want == y.type else cost(y.type, want))
    return trips * per_trip > cost(arg.type, y.type)


def _retype_arg(body: Block, i: int, t: Attribute) -> SSAValue:
    """Body argument `i` replaced by one of type `t`: each conversion of the old argument into `t`
    is the new argument itself, every other converts from it (`_carry_as_yielded` admits only
    conversions)."""
    old = body.args[i]
    new = body.insert_arg(t, i)
    new.name_hint = old.name_hint
    for use in list(old.uses):
        r = use.operation
        assert isinstance(r, plan.RearrangeOp)
        if r.result.type == t:
            r.result.replace_all_uses_with(new)
            r.detach()
            r.erase()
        else:
            r.operands[0] = new
    body.erase_arg(old)
    return new


def carry_pins(op: graph.RepeatOp, index: int, target: Target) -> list[plan.LayoutAttr | None]:
    """The layouts a repeat's `plan.carry` pins for its carried values (None: the entry
    layout; all None without the attribute), each checked against its value."""
    attr = op.attributes.get(CARRY_ATTR)
    if attr is None:
        return [None] * len(op.inits)
    where = describe(op, index)
    if not isinstance(attr, ArrayAttr) or len(attr.data) != len(op.inits):
        raise DiagnosticException(
            f"plan-ops: {where}: {CARRY_ATTR} must list one #plan.layout<…> (or unit) per carried value "
            f"({len(op.inits)})"
        )
    out: list[plan.LayoutAttr | None] = []
    for i, (a, v) in enumerate(zip(attr.data, op.inits, strict=True)):
        if isinstance(a, UnitAttr):
            out.append(None)
            continue
        if not isinstance(a, plan.LayoutAttr):
            raise DiagnosticException(f"plan-ops: {where}: {CARRY_ATTR} entry {i} is not a #plan.layout<…> or unit")
        check_pinned_layout(a, tuple(v.type.get_shape()), f"{where}: carried value {i}", target)
        out.append(a)
    return out


def _plan_repeat(p: Planner, op: graph.RepeatOp, index: int) -> int:
    """A structured plan.repeat: carried values keep their entry layouts across iterations, or
    travel in the layout the body yields them in where that saves conversions on every trip
    (`_carry_as_yielded`, or where the search found it cheaper and hints it: `Decisions.carry`;
    or as a `plan.carry` pins them); a stack an iteration_store fills is laid out slice by slice.
    A value the body yields in another layout than it enters in is recorded (`Decisions.yielded`)
    for the search to try carrying it so."""
    n = op.count.value.data
    pins = carry_pins(op, index, p.target)
    hints = getattr(p.chooser, "carry", {}).get(index, {})

    def entry(i: int, a: SSAValue) -> plan.PlanTensorType | None:
        store = _store_layout(a, n, p.target.tiles)
        lay = pins[i] or hints.get(i)
        return store if store is not None or lay is None else plan.PlanTensorType(a.type, lay)

    inits = [p.get(v, entry(i, a), op.name) for i, (v, a) in enumerate(zip(op.inits, op.body.block.args, strict=True))]
    carry = None  # the plan.carry this repeat takes: what its pins and the search's hints name
    if any(pins) or hints:
        carry = ArrayAttr([pins[i] or hints.get(i) or UnitAttr() for i in range(len(inits))])
        if hasattr(p.chooser, "carried"):
            p.chooser.carried[op] = carry
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
    p.outer.append((outer, n))
    nxt, term = plan_block(p, op.body.block, index + 1)
    assert isinstance(term, graph.YieldOp)
    natural = [p.current.get(v) for v in term.values]  # the yielded values as the body left them
    moved = [
        i
        for i, (y, a) in enumerate(zip(natural, body.args, strict=True))
        if y is not None and _carry_as_yielded(p, a, y, n)
    ]
    ys = [
        y if i in moved else p.get(v, a.type, "carried layout")
        for i, (v, y, a) in enumerate(zip(term.values, natural, body.args, strict=True))
    ]
    yielded = getattr(p.chooser, "yielded", None)
    for i, (y, a) in enumerate(zip(natural, body.args, strict=True)):
        if yielded is not None and i not in moved and y is not None and y.type != a.type and y.type.layout.partial < 0:
            yielded.setdefault(index, {})[i] = y.type.layout_attr
    binaries = getattr(p.chooser, "yielding_binaries", None)
    for v in term.values:
        producer = v.owner
        if binaries is not None and isinstance(producer, graph._Binary) and producer.lhs.type == producer.rhs.type:
            binaries.add(p.index_of[producer])
    body.add_op(plan.YieldOp.create(operands=ys))
    p.outer.pop()
    p.block, p.cache = outer, cache
    for i in moved:  # the init converted once, before the loop, into the layout the body yields
        entry, inits[i] = inits[i], p.get(op.inits[i], ys[i].type, "carried layout")
        if isinstance(entry.owner, plan.RearrangeOp) and not entry.uses:  # its conversion to the entry layout
            entry.owner.detach()
            entry.owner.erase()
            p.cache = {k: v for k, v in p.cache.items() if v is not entry}
        p.current[op.body.block.args[i]] = _retype_arg(body, i, ys[i].type)
    r = plan.RepeatOp(op.count.value.data, inits, Region(body))
    if carry is not None:
        r.attributes[CARRY_ATTR] = carry
    if op.results and graph.ROLLED_ATTR not in op.attributes:
        r.attributes[plan.VALUE_ATTR] = StringAttr(op.results[0].name_hint or "")
    p.emit(r)
    for gv, nv in zip(op.results, r.results, strict=True):
        p.set(gv, nv)
    p.consumed(op)
    p.event("planned repeat", op=index, count=op.count.value.data, body_operations=nxt - index - 1)
    return nxt
