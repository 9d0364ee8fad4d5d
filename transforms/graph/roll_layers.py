"""`roll-layers`: N consecutive identical layers become one `graph.repeat N` whose body reads
each layer's own weights through `graph.iteration_slice` of a stacked parameter.

An exported model unrolls its layers: GPT-2's twelve blocks are twelve copies of the same ops
on different weights. Unrolled, every level of the ladder holds twelve copies (IR, plans, tile
programs, exchange rows), and the tile program and its exchange rows must fit the executable
region beside the data. Rolled, the code and rows of one layer serve all of them, and each
trip copies its slice of the stacked weights out of every tile's own block (no exchange).

The search works on the block's computing ops (parameters are leaves). Each op gets a signature:
its name, attributes other than provenance, types, and for each operand either the distance
back to the op that computes it, "a parameter of this type", or the outer value itself. A run
of period P over these signatures is a candidate: consecutive blocks of P ops whose operands
relate to each other the same way. A candidate is rolled when
- no value crosses more than one block boundary, and every value crossing one is a float
  tensor carried from each block into the next (the repeat's iteration values);
- values of the region used after it are the last block's carried values (the repeat's results);
- the body holds a matmul or an attention (rolling small elementwise runs does not pay), or the
  run covers at least MIN_UNANCHORED_OPS ops (code size decides: such a run would fill the
  tile programs).
Of the rotations of a run, the one carrying the fewest values is kept; then the layer before it
is taken in when it differs only in its initial values (the first layer reads the model's input
where later ones read their predecessor's output). Two layers whose first reads the input thus
form no run and stay unrolled. The body is a clone of
the LAST layer, so the values the device's final trip produces have the names the unrolled
reference gives them (checkpoints compare by name). A parameter the same in every layer stays
shared (tied); per-layer parameters are stacked in layer order into one parameter
`<name with the layer index as *>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import AnyFloat, BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass

from ipu.dialects import graph
from ipu.log import log_event
from ipu.transforms.levels import expect_level

PROVENANCE = ("onnx.node",)  # attributes naming where an op came from, not what it computes
MIN_BODY_OPS = 4
ANCHORS = (graph.MatmulOp, graph.AttentionOp)  # a rolled body holds one (rolling elementwise runs does not pay)
MIN_UNANCHORED_OPS = 1024
"""A run without an anchor is rolled from this many ops on: there code size decides, not speed
(a CALL and its checkpoint are 128 bytes of every tile program they run on: 1,024 of them fill
over half the 208 KiB executable region of every target), and the IR of a 100,000-op chain
stays the size of its period. Each trip then copies its carried values into their slots."""
MAX_UNANCHORED_PERIODS = 16


@dataclass(frozen=True)
class _Run:
    start: int  # [start, end) of the block's computing ops repeats with period `period`
    end: int
    period: int


def _computing(block: Block) -> list[Operation]:
    return [op for op in block.ops if not isinstance(op, graph.ParameterOp | func.ReturnOp | graph.YieldOp)]


def _result_index(v: SSAValue) -> int:
    return v.index if isinstance(v, OpResult) else 0


def _op_key(op: Operation) -> tuple:
    """What an op computes, operands aside: name, attributes (but provenance), properties and
    result types."""
    attrs = tuple(sorted((k, str(a)) for k, a in op.attributes.items() if k not in PROVENANCE))
    props = tuple(sorted((k, str(a)) for k, a in op.properties.items()))
    return (op.name, attrs, props, tuple(str(r.type) for r in op.results), len(op.operands))


def _signatures(ops: list[Operation], index: dict[Operation, int]) -> np.ndarray:
    """One integer per op: equal when two ops compute alike on operands related alike."""
    ids: dict[tuple, int] = {}
    out = np.zeros(len(ops), np.int64)
    for i, op in enumerate(ops):
        if op.regions:  # an existing repeat: never part of a period
            out[i] = -1 - i
            continue
        refs: list[tuple] = []
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner in index:
                refs.append(("r", i - index[owner], _result_index(v)))
            elif isinstance(owner, graph.ParameterOp):
                refs.append(("p", str(v.type)))
            else:
                refs.append(("o", id(v)))
        out[i] = ids.setdefault((_op_key(op), tuple(refs)), len(ids))
    return out


def _periods(sig: np.ndarray, anchors: np.ndarray) -> list[int]:
    """The periods worth trying, from the distance from each op to the next op of its signature
    (a run of period p also repeats with period 2p, never a better rolling; trying every period
    up to n / 2 cost O(n^2) and made a 3,000-op chain take a minute):
    - a layer holding an anchor (a matmul or an attention): the anchors' distances;
    - a run of at least MIN_UNANCHORED_OPS ops without one: a distance p that at least
      MIN_UNANCHORED_OPS / p - 1 ops have (an op once per period has it in every period but the
      last), the MAX_UNANCHORED_PERIODS most common."""
    n = len(sig)
    order = np.lexsort((np.arange(n), sig))
    same = sig[order][1:] == sig[order][:-1]
    dist = np.zeros(n, np.int64)
    dist[order[:-1][same]] = (order[1:] - order[:-1])[same]
    found = set(dist[anchors & (dist > 0)].tolist())
    if n >= MIN_UNANCHORED_OPS:
        vals, counts = np.unique(dist[dist > 0], return_counts=True)
        keep = counts >= np.maximum(2, MIN_UNANCHORED_OPS // np.maximum(vals, 1) - 1)
        common = vals[keep][np.argsort(-counts[keep], kind="stable")][:MAX_UNANCHORED_PERIODS]
        found |= set(common.tolist())
    found = {p * -(-MIN_BODY_OPS // p) for p in found if p > 0}  # a body has MIN_BODY_OPS ops at least
    return sorted(p for p in found if p <= n // 2)


def _runs(sig: np.ndarray, anchors: np.ndarray) -> list[_Run]:
    """Maximal periodic runs of at least two periods holding an anchor, most ops covered first
    (then the shorter period)."""
    found: list[_Run] = []
    for p in _periods(sig, anchors):
        eq = np.concatenate(([False], sig[:-p] == sig[p:], [False]))
        edges = np.flatnonzero(np.diff(eq.astype(np.int8)))
        for s, e in zip(edges[::2], edges[1::2], strict=True):
            if e - s >= p:  # ops [s, e + p) repeat: at least two periods
                found.append(_Run(int(s), int(e) + p, p))
    found.sort(key=lambda r: (-((r.end - r.start) // r.period) * r.period, r.period, r.start))
    return found


@dataclass
class _Roll:
    """One valid rolling: layers [a + k * period, a + (k + 1) * period) of the computing ops."""

    a: int
    period: int
    count: int
    carried: list[tuple[int, int]]  # (position in a layer, result index) of each carried value
    inits: list[SSAValue]


def _check(ops: list[Operation], index: dict[Operation, int], a: int, period: int, count: int) -> _Roll | None:
    """The rolling of `count` layers from op `a`, or None when it is not one (see the module doc);
    `index` is each op's position in `ops`."""
    end = a + count * period
    if not any(isinstance(op, ANCHORS) for op in ops[a : a + period]) and count * period < MIN_UNANCHORED_OPS:
        return None
    carried: dict[tuple[int, int], SSAValue] = {}
    # every layer reads its predecessor's values alike (equal signatures): check layer 1, and
    # take the initial values from layer 0's same operands
    for pos in range(period):
        op1, op0 = ops[a + period + pos], ops[a + pos]
        for v1, v0 in zip(op1.operands, op0.operands, strict=True):
            j = index.get(v1.owner) if isinstance(v1.owner, Operation) else None
            if j is None or j >= a + period:
                continue
            if j < a:  # crosses two layer boundaries
                return None
            t = v1.type
            if not isinstance(t, TensorType) or not isinstance(t.element_type, AnyFloat):
                return None
            if carried.setdefault((j - a, _result_index(v1)), v0) is not v0:
                return None
    last = a + (count - 1) * period
    for i in range(a, end):
        for r in ops[i].results:
            for use in r.uses:
                j = index.get(use.operation)
                if j is not None and a <= j < end:
                    continue
                if not (i >= last and (i - last, r.index) in carried):
                    return None
    keys = sorted(carried)
    return _Roll(a, period, count, keys, [carried[k] for k in keys])


def _extend_back(ops: list[Operation], index: dict[Operation, int], roll: _Roll) -> _Roll:
    """Take in the layer before the first when it differs from it only in its initial values:
    the first layer of a model reads the model's input (an argument, an outer value) where later
    layers read their predecessor's output, so its signatures differ exactly there."""
    while roll.a - roll.period >= 0:
        a, p = roll.a, roll.period
        prev, first = ops[a - p : a], ops[a : a + p]
        inits: dict[SSAValue, SSAValue] = {}  # the first layer's initial value -> the new one
        ok = True
        for pos in range(p):
            o0, o1 = prev[pos], first[pos]
            if o0.regions or _op_key(o0) != _op_key(o1):
                ok = False
                break
            for v0, v1 in zip(o0.operands, o1.operands, strict=True):
                if v1 in roll.inits:  # a carried slot: the earlier layer may read anything earlier
                    if inits.setdefault(v1, v0) is not v0:
                        ok = False
                    continue
                j1 = index.get(v1.owner) if isinstance(v1.owner, Operation) else None
                j0 = index.get(v0.owner) if isinstance(v0.owner, Operation) else None
                if j1 is not None:  # computed in the layer: at the same distance
                    same = j0 is not None and a - p <= j0 and j1 - j0 == p
                    ok = ok and same and _result_index(v0) == _result_index(v1)
                elif isinstance(v1.owner, graph.ParameterOp):
                    ok = ok and isinstance(v0.owner, graph.ParameterOp) and v0.type == v1.type
                else:
                    ok = ok and v0 is v1
        if not ok or len(inits) != len(roll.inits):
            return roll
        new = _check(ops, index, a - p, p, roll.count + 1)
        if new is None or [inits[v] for v in roll.inits] != new.inits:
            return roll
        roll = new
    return roll


def _template(names: list[str], wildcard: str) -> str:
    """`h.0.w`, `h.1.w`, … -> `h.<wildcard>.w` when the names differ in one integer; else
    `<first>..<last>`."""
    parts = [re.split(r"(\d+)", n) for n in names]
    if len({len(p) for p in parts}) == 1:
        diff = [k for k in range(len(parts[0])) if len({p[k] for p in parts}) > 1]
        if len(diff) == 1 and all(p[diff[0]].isdigit() for p in parts):
            return "".join(wildcard if k == diff[0] else x for k, x in enumerate(parts[0]))
    return f"{names[0]}..{names[-1]}"


def _unique(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _stack(params: list[graph.ParameterOp], syms: set[str], hints: set[str]) -> graph.ParameterOp:
    """One parameter holding `params` in order along a new leading axis."""
    t = params[0].result.type
    shape = [len(params), *graph.shape_of(t)]
    stored = [graph.stored_values(p) for p in params]
    if len({str(el) for _, el in stored}) == 1:
        el = stored[0][1]
        data = b"".join(np.ascontiguousarray(v) for v, _ in stored)  # the arrays' buffers: one copy, the join's
    else:  # stored at different widths: their values at the result's dtype
        el = t.element_type
        dt = np.dtype(graph.numpy_dtype(t)).newbyteorder("<")
        data = b"".join(np.ascontiguousarray(graph.parameter_values(p), dt) for p in params)
    init = DenseIntOrFPElementsAttr(TensorType(el, shape), BytesAttr(data))
    name = _unique(_template([p.sym_name.data for p in params], "*"), syms)
    op = graph.ParameterOp(name, init, TensorType(t.element_type, shape))
    op.result.name_hint = _unique(_template([p.result.name_hint or "w" for p in params], "all"), hints)
    return op


def _rewrite(block: Block, ops: list[Operation], roll: _Roll, syms: set[str], hints: set[str]) -> graph.RepeatOp:
    a, period, count = roll.a, roll.period, roll.count
    layers = [ops[a + k * period : a + (k + 1) * period] for k in range(count)]
    last, prev = layers[-1], {op: pos for pos, op in enumerate(layers[-2])}
    first = layers[0][0]
    # the parameters each operand slot reads, layer by layer: one for all (tied) or stacked
    slot_params: dict[tuple[int, int], tuple[graph.ParameterOp, ...]] = {}
    for pos in range(period):
        for q, v in enumerate(last[pos].operands):
            if isinstance(v.owner, graph.ParameterOp):
                slot_params[(pos, q)] = tuple(layer[pos].operands[q].owner for layer in layers)  # type: ignore[misc]
    body = Block(arg_types=[v.type for v in roll.inits])
    for arg, (pos, ri) in zip(body.args, roll.carried, strict=True):
        arg.name_hint = _unique(f"{last[pos].results[ri].name_hint or 'carried'}.in", hints)
    slices: dict[tuple[graph.ParameterOp, ...], SSAValue] = {}
    for ps in slot_params.values():
        if len(set(ps)) > 1 and ps not in slices:
            st = _stack(list(ps), syms, hints)
            block.insert_op_before(st, first)
            sl = graph.IterationSliceOp(st.result, ps[-1].result.type)
            sl.result.name_hint = _unique(_template([p.result.name_hint or "w" for p in ps], "i"), hints)
            body.add_op(sl)
            slices[ps] = sl.result
    carried_arg = dict(zip(roll.carried, body.args, strict=True))
    mapping: dict[SSAValue, SSAValue] = {}
    outer: list[SSAValue] = list(roll.inits)
    for pos, op in enumerate(last):
        new = op.clone()
        for q, v in enumerate(op.operands):
            ps = slot_params.get((pos, q))
            if ps is not None and ps in slices:
                nv = slices[ps]
            elif v in mapping:
                nv = mapping[v]
            elif isinstance(v.owner, Operation) and v.owner in prev:
                nv = carried_arg[(prev[v.owner], _result_index(v))]
            else:  # the same value in every layer: a tied parameter or an outer value
                nv = v
                outer.append(v)
            new.operands[q] = nv
        for r, nr in zip(op.results, new.results, strict=True):
            nr.name_hint = r.name_hint
            mapping[r] = nr
        body.add_op(new)
    body.add_op(graph.YieldOp.create(operands=[mapping[last[pos].results[ri]] for pos, ri in roll.carried]))
    rep = graph.RepeatOp(count, roll.inits, Region(body))
    rep.attributes[graph.ROLLED_ATTR] = builtin.UnitAttr()
    block.insert_op_before(rep, first)
    for v in outer:  # parameters the importer declared inside the region go before the repeat
        if isinstance(v.owner, graph.ParameterOp) and v.owner.parent is block and _after(v.owner, rep):
            v.owner.detach()
            block.insert_op_before(v.owner, rep)
    in_last = set(last)
    for (pos, ri), res in zip(roll.carried, rep.results, strict=True):
        old = last[pos].results[ri]
        old.replace_uses_with_if(res, lambda use: use.operation not in in_last)
        # the body's value keeps the last layer's name (its checkpoint's); the repeat's result,
        # the same value after the last trip, is not checkpointed again
        res.name_hint = _unique(f"{old.name_hint or 'carried'}.out", hints)
    for layer in reversed(layers):
        for op in reversed(layer):
            op.detach()
            op.erase()
    for ps in slot_params.values():
        for p in set(ps):
            if p.parent is not None and not p.result.uses:
                p.detach()
                p.erase()
    return rep


def _after(op: Operation, anchor: Operation) -> bool:
    """`op` comes after `anchor` in their block."""
    o = anchor.next_op
    while o is not None:
        if o is op:
            return True
        o = o.next_op
    return False


def roll_block(block: Block, syms: set[str], hints: set[str]) -> list[graph.RepeatOp]:
    """Roll the block's identical layers, the run covering most ops first, until none is left."""
    made = []
    while True:
        ops = _computing(block)
        index = {op: i for i, op in enumerate(ops)}
        anchors = np.fromiter((isinstance(op, ANCHORS) for op in ops), bool, len(ops))
        if not anchors.any() and len(ops) < MIN_UNANCHORED_OPS:
            return made  # nothing worth rolling
        roll = None
        for run in _runs(_signatures(ops, index), anchors):
            for a in range(run.start, min(run.start + run.period, run.end)):
                n = (run.end - a) // run.period
                c = _check(ops, index, a, run.period, n) if n >= 2 else None
                if c is not None and (roll is None or (len(c.carried), -c.count) < (len(roll.carried), -roll.count)):
                    roll = c
            if roll is not None:
                break
        if roll is None:
            return made
        made.append(_rewrite(block, ops, _extend_back(ops, index, roll), syms, hints))


@dataclass(frozen=True)
class RollLayersPass(ModulePass):
    """Roll runs of identical layers into `graph.repeat` with stacked per-layer weights."""

    name = "roll-layers"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        for f in op.body.block.ops:
            if not isinstance(f, func.FuncOp) or not f.body.blocks:
                continue
            syms = {p.sym_name.data for p in f.walk() if isinstance(p, graph.ParameterOp)}
            hints = {v.name_hint for o in f.walk() for v in o.results if v.name_hint}
            for rep in roll_block(f.body.block, syms, hints):
                body = rep.body.block
                log_event(
                    "rolled layers",
                    count=rep.count.value.data,
                    body_operations=sum(1 for o in body.ops if not isinstance(o, graph.YieldOp)),
                    carried=len(rep.inits),
                    stacked=sum(1 for o in body.ops if isinstance(o, graph.IterationSliceOp)),
                )
