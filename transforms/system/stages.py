"""A graph function's units of work and the stage functions built from contiguous runs of them.

A *unit* is one top-level op, or one trip of a rolled `graph.repeat` (a layer): the places a
pipeline may be cut between. Ops without operands (weights, constants) belong to no unit: every
stage that reads one holds its own copy. A value that crosses units is a *key*: a graph value,
or `Carry(repeat, trips, j)`, the repeat's j-th carried value after `trips` trips (a cut inside
a rolled repeat). `build_stage` makes a stage function of a run of units: the keys it reads from
outside are its arguments, the keys later stages or the model's outputs read are its results,
a repeat cut at trips [a, b) becomes a repeat of b - a trips over its slice of the stacked weights.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, BytesAttr, DenseIntOrFPElementsAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from ipu.dialects import graph


@dataclass(frozen=True)
class Carry:
    """The `j`-th value `repeat` carries after `trips` trips."""

    repeat: graph.RepeatOp
    trips: int
    j: int


Key = Hashable  # an SSAValue or a Carry


@dataclass
class Unit:
    """One top-level op (`op`), or trip `trip` of the repeat `op`."""

    op: Operation
    trip: int | None = None
    uses: list[Key] = field(default_factory=list)
    defines: list[Key] = field(default_factory=list)

    @property
    def is_trip(self) -> bool:
        return self.trip is not None

    def describe(self) -> str:
        res = f" %{self.op.results[0].name_hint}" if self.op.results and self.op.results[0].name_hint else ""
        return f"layer {self.trip} of {self.op.name}{res}" if self.is_trip else f"{self.op.name}{res}"


def is_free(op: Operation) -> bool:
    """A weight or constant: copied into each stage that reads it rather than transferred."""
    return not op.operands and not op.regions


def _outside(op: Operation, v: SSAValue) -> bool:
    """`v` is defined outside `op` (read by an op nested in it)."""
    return not op.is_ancestor(v.owner)


def _reads(op: Operation) -> list[SSAValue]:
    """Values `op` or the ops nested in it read from outside it, in first-read order."""
    seen: dict[SSAValue, None] = {}
    for o in op.walk():
        for v in o.operands:
            if _outside(op, v):
                seen.setdefault(v, None)
    return list(seen)


def units_of(f: func.FuncOp) -> list[Unit]:
    """`f`'s units in order, each with the keys it reads and defines (free ops' values excluded)."""
    units: list[Unit] = []
    for op in f.body.block.ops:
        if isinstance(op, func.ReturnOp) or is_free(op):
            continue
        ext = [v for v in _reads(op) if not (isinstance(v.owner, Operation) and is_free(v.owner))]
        if isinstance(op, graph.RepeatOp):
            n, carried = op.count.value.data, len(op.inits)
            body_ext = [v for v in ext if v not in op.inits]
            for i in range(n):
                uses: list[Key] = list(op.inits) if i == 0 else [Carry(op, i, j) for j in range(carried)]
                defines: list[Key] = list(op.results) if i == n - 1 else [Carry(op, i + 1, j) for j in range(carried)]
                units.append(Unit(op, i, [*uses, *body_ext], defines))
        else:
            units.append(Unit(op, None, ext, list(op.results)))
    return units


BOUNDARY = "boundary."
"""The prefix of a value's name where it crosses stages: a stage's input and output bindings
are host-visible symbols of its program, beside the checkpoints named by the values themselves."""


def key_name(k: Key, inputs: dict[SSAValue, str]) -> str:
    """The name a key crosses a stage boundary by: a model input's declared name, else
    `boundary.` and a value's stable name, or `<result>_trip<n>` for a repeat's carried value
    after n trips."""
    if isinstance(k, Carry):
        return f"{BOUNDARY}{k.repeat.results[k.j].name_hint or 'carried'}_trip{k.trips}"
    assert isinstance(k, SSAValue)
    return inputs.get(k) or f"{BOUNDARY}{k.name_hint or 'v'}"


def boundary_value(name: str) -> str:
    """The graph value a boundary binding carries (its name without the prefix)."""
    return name.removeprefix(BOUNDARY)


def type_bytes(t: TensorType) -> int:
    """Bytes of a value of tensor type `t`."""
    return int(np.prod(graph.shape_of(t))) * t.element_type.bitwidth // 8


def key_type(k: Key) -> TensorType:
    v = k.repeat.results[k.j] if isinstance(k, Carry) else k
    return v.type  # type: ignore[return-value]


def input_names(f: func.FuncOp) -> dict[SSAValue, str]:
    """The model's inputs by their declared names (`ipu.inputs`), else their name hints."""
    declared = f.attributes.get("ipu.inputs")
    names = [s.data for s in declared.data] if isinstance(declared, ArrayAttr) else []  # type: ignore[union-attr]
    if len(names) != len(f.args):
        names = [a.name_hint or f"arg{i}" for i, a in enumerate(f.args)]
    return dict(zip(f.args, names, strict=True))


def sliced_parameter(p: graph.ParameterOp, axis: int, start: int, end: int, name: str) -> graph.ParameterOp:
    """Weight `p`'s block [start, end) along `axis` as a weight of its own, named `name`: a dense
    initializer sliced from its bytes at its own element type (only the block is copied; a wider
    initializer stays wider, as convert-precision leaves it for packaging), a seeded one
    materialized at the weight's type."""
    t = p.result.type
    shape = list(graph.shape_of(t))
    shape[axis] = end - start
    init = p.init
    full = int(np.prod(graph.shape_of(t)))
    dense = graph.dense_values(init) if isinstance(init, DenseIntOrFPElementsAttr) and len(init) == full else None
    if dense is not None and dense.dtype.itemsize * 8 == init.get_element_type().bitwidth:  # its raw bytes
        values, el = dense.reshape(graph.shape_of(t)), init.get_element_type()
    else:
        values, el = graph.parameter_values(p), t.element_type
    block = np.ascontiguousarray(values.take(range(start, end), axis=axis))
    raw = block.astype(block.dtype.newbyteorder("<"), copy=False).tobytes()
    op = graph.ParameterOp(
        name, DenseIntOrFPElementsAttr(TensorType(el, shape), BytesAttr(raw)), TensorType(t.element_type, shape)
    )
    op.result.name_hint = p.result.name_hint
    return op


def build_stage(
    name: str, units: list[Unit], inputs: list[Key], outputs: list[Key], names: dict[SSAValue, str]
) -> func.FuncOp:
    """The stage function running `units` (contiguous, in order), reading `inputs` and returning
    `outputs` (keys, named by `key_name`)."""
    block = Block(arg_types=[key_type(k) for k in inputs])
    env: dict[Key, SSAValue] = {}
    for k, a in zip(inputs, block.args, strict=True):
        a.name_hint = key_name(k, names)
        env[k] = a
    free: dict[tuple[SSAValue, int, int], SSAValue] = {}  # (weight, first, end trip) -> its copy here
    frees: list[Operation] = []
    body: list[Operation] = []

    def copy_free(v: SSAValue, span: tuple[int, int] | None) -> SSAValue:
        op = v.owner
        assert isinstance(op, Operation)
        n = graph.shape_of(v.type)[0] if span is not None and isinstance(op, graph.ParameterOp) else 0
        key = (v, *(span if span and span != (0, n) else (0, 0)))
        if key not in free:
            c = (
                sliced_parameter(op, 0, *span, f"{op.sym_name.data}[{span[0]}:{span[1]}]")
                if span is not None and span != (0, n)
                else op.clone()
            )  # type: ignore[arg-type]
            frees.append(c)
            free[key] = c.results[0]
        return free[key]

    def mapped(v: SSAValue, span: tuple[int, int] | None = None) -> SSAValue:
        if isinstance(v.owner, Operation) and is_free(v.owner):
            return copy_free(v, span)
        return env[v]

    i = 0
    while i < len(units):
        u = units[i]
        if not u.is_trip:
            vmap = {v: mapped(v) for v in _reads(u.op)}
            c = u.op.clone(value_mapper=vmap)
            body.append(c)
            for old, new in zip(u.op.results, c.results, strict=True):
                env[old] = new
            i += 1
            continue
        rep = u.op
        assert isinstance(rep, graph.RepeatOp)
        j = i
        while j < len(units) and units[j].op is rep:
            j += 1
        a, b = u.trip, units[j - 1].trip + 1  # type: ignore[operator]
        n = rep.count.value.data
        sliced = {s.input for s in rep.body.block.ops if isinstance(s, graph.IterationSliceOp)}
        vmap: dict[SSAValue, SSAValue] = {}
        for v in _reads(rep):
            if v in rep.inits:
                continue
            vmap[v] = mapped(v, (a, b) if v in sliced else None)
        inits = [env[k] for k in (list(rep.inits) if a == 0 else [Carry(rep, a, q) for q in range(len(rep.inits))])]
        body_region = Region()
        rep.body.clone_into(body_region, value_mapper=vmap)
        sub = graph.RepeatOp(b - a, inits, body_region)
        for k, v in rep.attributes.items():
            if k != "count":
                sub.attributes[k] = v
        sub.attributes["count"] = IntegerAttr(b - a, 64)
        body.append(sub)
        for q, r in enumerate(sub.results):
            k = rep.results[q] if b == n else Carry(rep, b, q)
            r.name_hint = key_name(k, names)
            env[k] = r
        i = j
    for op in (*frees, *body):
        block.add_op(op)
    block.add_op(func.ReturnOp(*[env[k] if k in env else mapped(k) for k in outputs]))  # type: ignore[arg-type]
    f = func.FuncOp(name, ([a.type for a in block.args], [key_type(k) for k in outputs]), Region(block))
    f.attributes["ipu.inputs"] = ArrayAttr([StringAttr(key_name(k, names)) for k in inputs])
    f.attributes["ipu.outputs"] = ArrayAttr([StringAttr(key_name(k, names)) for k in outputs])
    return f


def stage_io(units: list[Unit], stage_of: list[int], returned: list[Key]) -> list[tuple[list[Key], list[Key]]]:
    """Per stage (the stages `stage_of` gives each unit, in order), the keys it reads from
    outside (model inputs and earlier stages' values, in first-read order) and those it hands on
    (read by a later stage or returned), in definition order."""
    stages = max(stage_of) + 1
    defined_in: dict[Key, int] = {}
    for u, s in zip(units, stage_of, strict=True):
        for k in u.defines:
            defined_in[k] = s
    ins: list[dict[Key, None]] = [{} for _ in range(stages)]
    outs: list[dict[Key, None]] = [{} for _ in range(stages)]
    for u, s in zip(units, stage_of, strict=True):
        for k in u.uses:
            d = defined_in.get(k)
            if d is None or d != s:
                ins[s].setdefault(k, None)
                if d is not None:
                    outs[d].setdefault(k, None)
    for k in returned:
        d = defined_in.get(k)
        if d is not None and d != stages - 1:
            outs[d].setdefault(k, None)
            ins[stages - 1].setdefault(k, None)
        elif d is None and isinstance(k, SSAValue) and not (isinstance(k.owner, Operation) and is_free(k.owner)):
            ins[stages - 1].setdefault(k, None)  # a model input returned as it is
    order = {k: i for i, u in enumerate(units) for k in u.defines}
    return [
        (list(ins[s]), sorted(outs[s], key=lambda k: order.get(k, -1)) if s < stages - 1 else []) for s in range(stages)
    ]


__all__ = [
    "BOUNDARY",
    "Carry",
    "boundary_value",
    "Key",
    "Unit",
    "build_stage",
    "input_names",
    "is_free",
    "key_name",
    "key_type",
    "stage_io",
    "type_bytes",
    "units_of",
]
