"""`partition-stages`: cut a graph function into pipeline stages, one per chip of a system.

Runs after `roll-layers` and before planning. The cut points are between units (a top-level op,
or one layer of a rolled `graph.repeat`: `transforms.system.stages`). Each unit is priced by the
planner's own estimate of it planned alone on the system's chip (identical layers once), a cut
adds the link phase that carries the values crossing it (`target.system.System.link_phase_cycles`),
and a dynamic program picks the cut whose slowest stage is fastest, subject to every stage's
weights fitting its chip. Pins: `layers = "1,7,8,8"` gives each stage its count of rolled layers
(Graphcore's per-IPU split; ops before the first layer go with stage 0, ops after the last one
with the last stage, others with the layer before them), and `ipu.stage = k` on a top-level op
puts it on stage k. The result is a `system.pipeline` over stage functions `@<f>_stage<k>`
(graph level, `ipu.stage = k`) on the module, which records the system (`#ipu.system`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph
from ipu.dialects.system import STAGE_ATTR, OutputOp, PipelineOp, StageOp, TransferOp
from ipu.dialects.value_names import name_values
from ipu.log import log_event
from ipu.target.system import LinkTransfer, System
from ipu.transforms.system.cuts import WEIGHT_SHARE, Cut, best_cut, planned_cycles
from ipu.transforms.system.stages import (
    BOUNDARY,
    Key,
    Unit,
    build_stage,
    input_names,
    key_name,
    key_type,
    stage_io,
    type_bytes,
    units_of,
)
from ipu.transforms.system.system_of import system_pass_input


def unit_weight_bytes(u: Unit) -> int:
    """Bytes of the weights `u` reads (its slice of a stacked weight, for a layer)."""
    total = 0
    seen: set[SSAValue] = set()
    for o in u.op.walk():
        for v in o.operands:
            if v in seen or not isinstance(v.owner, graph.ParameterOp):
                continue
            seen.add(v)
            b = type_bytes(v.type)
            sliced = u.is_trip and any(isinstance(x.operation, graph.IterationSliceOp) for x in v.uses)
            total += b // graph.shape_of(v.type)[0] if sliced else b
    return total


def _signature(u: Unit) -> str:
    """Units with equal signatures cost the same (the layers of one repeat; repeated ops)."""
    if u.is_trip:
        return f"trip:{id(u.op)}"
    o = u.op
    attrs = {k: v for k, v in o.attributes.items() if not k.startswith("onnx.")}
    return f"{o.name}|{[str(v.type) for v in o.operands]}|{[str(r.type) for r in o.results]}|{attrs}"


def price_units(units: list[Unit], names: dict[SSAValue, str], system: System) -> list[int]:
    """Each unit's estimated cycles on the system's chip, planned alone (the planner's estimate
    of its stage function: `plan-ops` then `plan.cost.estimate`), its computed inputs arriving
    as a link writes them (`plan.link_inputs`: laid out once, spread, and rearranged on the chip
    for their readers). Priced in whatever layout its readers want, a unit missed the
    rearrangement every stage pays between a producer's layout and its reader's, and the first
    unit the rearrangement of its link input (tp-wide over sim16x2: 121,575 and 137,999 estimated
    against 155,884 and 160,381 emulated; priced so, 164,352 and 179,192)."""
    t = system.chip
    cache: dict[str, int] = {}
    out = []
    for u in units:
        sig = _signature(u)
        if sig not in cache:
            [(ins, _)] = stage_io([u], [0], [])
            outs = [k for k in u.defines if not isinstance(k, SSAValue) or k.uses]
            f = build_stage("unit", [u], ins, outs or u.defines[:1], names)
            try:
                cache[sig] = planned_cycles(f, t, BOUNDARY)
            except DiagnosticException as e:
                raise DiagnosticException(
                    f"partition-stages: {u.describe()} cannot be planned on one {t.name}: {e}"
                ) from None
        out.append(cache[sig])
    return out


def _crossing(units: list[Unit]) -> list[list[Key]]:
    """Per cut c (between units c-1 and c, c = 1 … n-1), the keys defined before it and read after."""
    n = len(units)
    first_def = {k: i for i, u in enumerate(units) for k in u.defines}
    last_use: dict[Key, int] = {}
    for i, u in enumerate(units):
        for k in u.uses:
            last_use[k] = i
    out: list[list[Key]] = [[] for _ in range(n)]
    for k, d in first_def.items():
        for c in range(d + 1, last_use.get(k, -1) + 1):
            out[c].append(k)
    return out


def _pins(units: list[Unit], stages: int, layers: str | None) -> list[int | None]:
    """Each unit's pinned stage (None: free), from `layers` or the ops' `ipu.stage`."""
    pins: list[int | None] = [None] * len(units)
    if layers:
        try:
            counts = [int(x) for x in layers.replace(" ", ",").split(",") if x]
        except ValueError:
            raise DiagnosticException(f"partition-stages: layers '{layers}' must be a list of integers") from None
        trips = sum(1 for u in units if u.is_trip)
        if len(counts) != stages or sum(counts) != trips or min(counts) < 0:
            raise DiagnosticException(
                f"partition-stages: layers '{layers}' must give each of the {stages} stages its count of the "
                f"model's {trips} rolled layers (non-negative, summing to {trips})"
            )
        bounds = [sum(counts[: s + 1]) for s in range(stages)]
        last_trip = max(i for i, u in enumerate(units) if u.is_trip) if trips else -1
        seen = 0
        stage = 0
        for i, u in enumerate(units):
            if u.is_trip:
                stage = next(s for s in range(stages) if seen < bounds[s])
                seen += 1
            elif i > last_trip >= 0:
                stage = stages - 1  # the ops after the last layer: on the last stage
            pins[i] = stage
        empty = sorted(set(range(stages)) - set(pins))  # type: ignore[arg-type]
        if empty:
            raise DiagnosticException(
                f"partition-stages: layers '{layers}' leaves stage {empty[0]} with nothing to run (ops before the "
                "first layer go to stage 0, ops after the last layer to the last stage, others with the layer before)"
            )
        return pins
    for i, u in enumerate(units):
        a = u.op.attributes.get(STAGE_ATTR)
        if a is None:
            continue
        if not isinstance(a, IntegerAttr) or not 0 <= a.value.data < stages:
            raise DiagnosticException(
                f"partition-stages: {u.describe()}: {STAGE_ATTR} must be a stage index below {stages}"
            )
        pins[i] = a.value.data
    last = (-1, "")
    for i, p in enumerate(pins):
        if p is None:
            continue
        if p < last[0]:
            raise DiagnosticException(
                f"partition-stages: the pin of {units[i].describe()} to stage {p} cannot be honoured: it follows "
                f"{last[1]}, pinned to stage {last[0]}, and stages run in order"
            )
        last = (p, units[i].describe())
    return pins


def _output_names(f: func.FuncOp) -> ArrayAttr:
    """The model's output names: declared (`ipu.outputs`), else output0, output1, …"""
    declared = f.attributes.get("ipu.outputs")
    n = len(f.function_type.outputs.data)
    if isinstance(declared, ArrayAttr) and len(declared.data) == n:
        return declared
    return ArrayAttr([StringAttr(f"output{i}") for i in range(n)])


def partition_function(
    module: builtin.ModuleOp,
    f: func.FuncOp,
    system: System,
    microbatches: int,
    layers: str | None,
    costs: list[int] | None = None,
) -> Cut:
    """Replace `f` in `module` by its stage functions and the `system.pipeline` over them;
    `costs` replaces the planner's price of each unit (a caller that measured the stages)."""
    name_values(f)
    names = input_names(f)
    units = units_of(f)
    stages = system.chips
    if len(units) < stages:
        raise DiagnosticException(
            f"partition-stages: @{f.sym_name.data} has {len(units)} units of work (ops and rolled layers), fewer than "
            f"the {stages} chips of {system.name}: use a smaller system"
        )
    ret = f.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    returned: list[Key] = list(ret.arguments)
    pins = _pins(units, stages, layers)
    if costs is None:
        costs = price_units(units, names, system)
    elif len(costs) != len(units):
        raise DiagnosticException(f"partition-stages: {len(costs)} unit costs for {len(units)} units")
    weights = [unit_weight_bytes(u) for u in units]
    chip = system.chip
    tiles = chip.tiles
    crossed = [(ks, sum(type_bytes(key_type(k)) for k in ks)) for ks in _crossing(units)]
    links = [system.link_phase_cycles([LinkTransfer(0, 1, b, math.ceil(b / tiles))]) if ks else 0 for ks, b in crossed]
    capacity = int(WEIGHT_SHARE * chip.tiles * chip.memory_size)
    cut = best_cut(costs, weights, links, stages, capacity, pins)
    if cut is not None:
        cut.unit_costs, cut.links, cut.unit_weights, cut.pins, cut.capacity = costs, links, weights, pins, capacity
    if cut is None:
        heaviest = max(range(len(units)), key=lambda i: weights[i])
        raise DiagnosticException(
            f"partition-stages: @{f.sym_name.data} does not fit {system.name}: no split into {stages} stages keeps "
            f"every stage's weights within {capacity:,} bytes ({WEIGHT_SHARE:.0%} of a {chip.name}) with the pins "
            f"honoured (weights in all: {sum(weights):,} bytes; the heaviest unit, {units[heaviest].describe()}, "
            f"{weights[heaviest]:,})"
        )
    io = stage_io(units, cut.stage_of, returned)
    chain = system.chain
    pipe_block = Block(arg_types=[a.type for a in f.args])
    for a, pa in zip(f.args, pipe_block.args, strict=True):
        pa.name_hint = names[a]
    where: dict[Key, tuple[int, SSAValue]] = {}  # key -> (chip, pipeline value) of its producer
    moved: dict[tuple[Key, int], SSAValue] = {}
    host = dict(zip(f.args, pipe_block.args, strict=True))
    stage_funcs = []
    for s, (ins, outs) in enumerate(io):
        mine = [u for u, st in zip(units, cut.stage_of, strict=True) if st == s]
        outs = returned if s == stages - 1 else outs
        sf = build_stage(f"{f.sym_name.data}_stage{s}", mine, ins, outs, names)
        sf.attributes[STAGE_ATTR] = IntegerAttr(s, 64)
        if s == stages - 1:  # the model's outputs keep the model's names (else output0, … as on one chip)
            sf.attributes["ipu.outputs"] = _output_names(f)
        sf.attributes["ipu.estimated_cycles"] = IntegerAttr(cut.cycles[s], 64)
        stage_funcs.append(sf)
        c = chain[s]
        operands = []
        for k in ins:
            if k in host:
                operands.append(host[k])
                continue
            src_chip, v = where[k]
            if (k, c) not in moved:
                t = TransferOp(v, src_chip, c)
                t.result.name_hint = key_name(k, names)
                pipe_block.add_op(t)
                moved[(k, c)] = t.result
            operands.append(moved[(k, c)])
        st = StageOp(sf.sym_name.data, c, operands, [key_type(k) for k in outs])
        for k, r in zip(outs, st.outputs, strict=True):
            r.name_hint = key_name(k, names)
            where[k] = (c, r)
        pipe_block.add_op(st)
    last = pipe_block.last_op
    assert isinstance(last, StageOp)
    pipe_block.add_op(OutputOp(list(last.outputs)))
    pipe = PipelineOp(f.sym_name.data, microbatches, Region(pipe_block))
    for k in ("ipu.inputs", "onnx.output_dtypes", "onnx.input_dtypes"):
        if k in f.attributes:
            pipe.attributes[k] = f.attributes[k]
    pipe.attributes["ipu.outputs"] = _output_names(f)
    for k, v in f.attributes.items():
        if k.startswith(("ipu.", "onnx.")) and k not in ("ipu.inputs", "ipu.outputs"):
            for sf in stage_funcs:
                sf.attributes.setdefault(k, v)
    module.body.block.insert_op_before(pipe, f)
    for sf in stage_funcs:
        module.body.block.insert_op_before(sf, f)
    module.body.block.erase_op(f)
    log_event(
        "partitioned stages",
        function=pipe.sym_name.data,
        system=system.name,
        units=len(units),
        stage_cycles=",".join(map(str, cut.cycles)),
        stage_weight_bytes=",".join(map(str, cut.weights)),
    )
    return cut


@dataclass(frozen=True)
class PartitionStagesPass(ModulePass):
    """Cut the graph function into one pipeline stage per chip of a system."""

    name = "partition-stages"
    system: str | None = None  # unset: the module's #ipu.system
    microbatches: int = 4
    layers: str | None = None  # rolled layers per stage, "1,7,8,8" (a pin of the whole split)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        system, f = system_pass_input(op, self.system, self.name, self.microbatches)
        partition_function(op, f, system, self.microbatches, self.layers)


__all__ = ["Cut", "PartitionStagesPass", "best_cut", "partition_function", "price_units"]
