"""`split-tensor-parallel`: split a graph function's attention heads and FFN hidden dimension over
the chips of a system, Megatron-style, with an all-reduce after each row-parallel matmul.

Each value gets a sharding: replicated (every chip computes all of it), sharded on an axis (each
chip holds its 1/n), or a partial sum. A matmul of a replicated input by a weight whose columns
divide by n is *column-parallel* (each chip multiplies by its column block: a sharded result); a
matmul of a sharded input by a weight is *row-parallel* (each chip its row block: a partial
sum, all-reduced at once). Between them the sharding flows through bias adds (the bias sliced),
elementwise maps, `split_heads` (columns to heads), `attention` (by heads; KV heads divide too)
and `merge_heads`. A column-parallel matmul whose sharded values would reach anything else (an
op that needs the whole value, an output) stays replicated: such a model is correct, only less
parallel. Every all-reduce ends a segment: each chip runs one stage function per segment
(`@<f>_seg<k>_chip<c>`, its weights sliced), and the `system.pipeline` holds, per segment, a
`system.stage` per chip, then a `system.all_reduce` of the partials. Values a later segment
reads stay on their chip; the last segment (what follows the last all-reduce) runs on the first
chip alone, which holds the model's outputs.

With `group = g` below the system's chips, the split is over groups of g chips (group j: chips
j*g … j*g + g - 1, a rung of a ladder for g = 2) and the groups are pipelined, Megatron's tensor x
pipeline parallelism: the segments are cut into one contiguous run a group, the run's slowest
group fastest (each segment priced by the planner's estimate of it on one chip plus its
all-reduce, `cuts.best_cut`), every group's weights within its chips. A value read by a later
group moves by `system.transfer`, chip to chip (chip j*g + i to its counterpart in the group that
reads it); an all-reduce leaves its sum in place of each member's partial, so its result moves so
too.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph
from ipu.dialects.system import STAGE_ATTR, AllReduceOp, OutputOp, PipelineOp, StageOp, TransferOp
from ipu.dialects.value_names import name_values
from ipu.log import log_event
from ipu.target.system import LinkTransfer, System
from ipu.transforms.system.cuts import WEIGHT_SHARE, Cut, best_cut, planned_cycles
from ipu.transforms.system.stages import BOUNDARY, input_names, is_free, sliced_parameter, type_bytes
from ipu.transforms.system.system_of import system_pass_input

REPLICATED = ("R",)
PARTIAL = ("P",)


@dataclass(frozen=True)
class Sharded:
    """Sharded on `axis`; `origins` are the column-parallel matmuls it flows from."""

    axis: int
    origins: frozenset[Operation]


def _weight(v: SSAValue) -> graph.ParameterOp | None:
    return v.owner if isinstance(v.owner, graph.ParameterOp) else None


class _Conflict(Exception):
    def __init__(self, origins: frozenset[Operation]) -> None:
        self.origins = origins


def _unary_like(op: Operation) -> bool:
    return isinstance(op, (*graph.ELEMENTWISE_UNARY_OPS, graph.CastOp))


def _binary_like(op: Operation) -> bool:
    return op.name in ("graph.add", "graph.sub", "graph.mul", "graph.div", "graph.max", "graph.min")


def shardings(f: func.FuncOp, n: int, column: set[Operation]) -> dict[SSAValue, object]:
    """Every value's sharding when the matmuls in `column` are column-parallel; raises _Conflict
    naming the column-parallel matmuls a sharded value that cannot stay sharded flows from."""
    state: dict[SSAValue, object] = {a: REPLICATED for a in f.args}

    def of(v: SSAValue) -> object:
        if v in state:
            return state[v]
        return REPLICATED  # weights and constants: whole on every chip unless an op slices them

    for op in f.body.block.ops:
        if isinstance(op, func.ReturnOp):
            for v in op.operands:
                s = of(v)
                if isinstance(s, Sharded):
                    raise _Conflict(s.origins)
            continue
        if is_free(op):
            continue
        ins = [of(v) for v in op.operands]
        sharded = [s for s in ins if isinstance(s, Sharded)]
        origins = frozenset().union(*(s.origins for s in sharded)) if sharded else frozenset()
        out: object = REPLICATED
        if isinstance(op, graph.MatmulOp) and _weight(op.rhs) is not None and len(op.rhs.type.get_shape()) == 2:
            k, nn = op.rhs.type.get_shape()
            x = ins[0]
            if isinstance(x, Sharded) and x.axis < len(op.lhs.type.get_shape()) - 1:
                out = x  # each chip multiplies its own rows by the whole weight (rotary's rotate-half)
            elif isinstance(x, Sharded):
                if k % n:
                    raise _Conflict(x.origins)
                out = PARTIAL
            elif op in column:
                out = Sharded(len(op.result.type.get_shape()) - 1, frozenset({op}))
        elif not sharded:
            out = REPLICATED
        elif _unary_like(op):
            out = sharded[0]
        elif _binary_like(op):
            a, b = ins
            if isinstance(a, Sharded) and isinstance(b, Sharded) and a.axis == b.axis:
                out = Sharded(a.axis, origins)
            elif isinstance(a, Sharded) and _sliceable(op.operands[1], a.axis, op.results[0].type, n):
                out = a
            elif isinstance(b, Sharded) and _sliceable(op.operands[0], b.axis, op.results[0].type, n):
                out = b
            else:
                raise _Conflict(origins)
        elif isinstance(op, graph.ReshapeOp) and isinstance(ins[0], Sharded):
            out = _reshaped(op, ins[0], n)
            if out is None:
                raise _Conflict(origins)
        elif isinstance(op, graph.SplitHeadsOp) and isinstance(ins[0], Sharded) and ins[0].axis == 1:
            if op.heads.value.data % n:
                raise _Conflict(origins)
            out = Sharded(0, origins)
        elif isinstance(op, graph.MergeHeadsOp) and isinstance(ins[0], Sharded) and ins[0].axis == 0:
            out = Sharded(1, origins)
        elif isinstance(op, graph.AttentionOp):
            q, k, v = ins[:3]
            heads_ok = op.q.type.get_shape()[0] % n == 0 and op.k.type.get_shape()[0] % n == 0
            if not all(isinstance(s, Sharded) and s.axis == 0 for s in (q, k, v)) or not heads_ok:
                raise _Conflict(origins)
            if op.bias is not None and (isinstance(ins[3], Sharded) or op.bias.type.get_shape()[0] != 1):
                raise _Conflict(origins)
            out = Sharded(0, origins)
        else:
            raise _Conflict(origins)
        for r in op.results:
            state[r] = out
    return state


def _weight_axis(v: SSAValue, axis: int, out_type: TensorType) -> int | None:
    """The axis of weight `v` that lines up with `axis` of the op's result `out_type`: the same
    axis for a weight of the result's shape (a rotary table), axis 0 of a vector along the
    result's last axis (a bias); None when `v` is no such weight."""
    if _weight(v) is None:
        return None
    w, shape = list(v.type.get_shape()), list(out_type.get_shape())
    if w == shape:
        return axis
    if w == [shape[-1]] and axis == len(shape) - 1:
        return 0
    return None


def _sliceable(v: SSAValue, axis: int, out_type: TensorType, n: int) -> bool:
    """`v` is a weight each chip can take its block of, for a result sharded on `axis`."""
    return _weight_axis(v, axis, out_type) is not None and out_type.get_shape()[axis] % n == 0


def _reshaped(op: graph.ReshapeOp, s: Sharded, n: int) -> Sharded | None:
    """A reshape keeps a sharding on the leading axis when chip c's block (rows [c a0/n, (c+1)
    a0/n) of the input's leading axis, contiguous in the flat order) is also a block of whole rows
    of the result's leading axis: heads x rows merged into rows and split back, as rotary does."""
    a, r = list(op.input.type.get_shape()), list(op.result.type.get_shape())
    if s.axis != 0 or not a or not r or a[0] % n or r[0] % n:
        return None
    return Sharded(0, s.origins)


def plan_shardings(f: func.FuncOp, n: int) -> tuple[set[Operation], dict[SSAValue, object]]:
    """The largest set of column-parallel matmuls whose sharded values all reach row-parallel
    ones (a fixed point: conflicting matmuls turn replicated), and the shardings it gives."""
    column = {
        op
        for op in f.body.block.ops
        if isinstance(op, graph.MatmulOp)
        and _weight(op.rhs) is not None
        and len(op.rhs.type.get_shape()) == 2
        and op.rhs.type.get_shape()[1] % n == 0
    }
    while True:
        try:
            state = shardings(f, n, column)
        except _Conflict as c:
            if not c.origins:
                raise DiagnosticException("split-tensor-parallel: a conflict with no column-parallel origin") from None
            column -= c.origins
            continue
        # a column-parallel matmul whose result no row-parallel one reads is no use: replicated
        useful = {o for op in f.body.block.ops for o in _row_origins(op, state)}
        if useful >= column:
            return column, state
        column &= useful


def _row_origins(op: Operation, state: dict[SSAValue, object]) -> frozenset[Operation]:
    if isinstance(op, graph.MatmulOp) and state.get(op.result) == PARTIAL:
        s = state.get(op.lhs)
        return s.origins if isinstance(s, Sharded) else frozenset()
    return frozenset()


def _slice_param(p: graph.ParameterOp, axis: int, part: int, n: int) -> graph.ParameterOp:
    """Weight `p`'s `part`-th of `n` blocks along `axis`, named by the block (`wq[:,16:32]`)."""
    size = graph.shape_of(p.result.type)[axis] // n
    index = [":"] * len(graph.shape_of(p.result.type))
    index[axis] = f"{part * size}:{(part + 1) * size}"
    return sliced_parameter(p, axis, part * size, (part + 1) * size, f"{p.sym_name.data}[{','.join(index)}]")


def _shard_type(t: TensorType, s: object, n: int) -> TensorType:
    if not isinstance(s, Sharded):
        return t
    shape = list(t.get_shape())
    shape[s.axis] //= n
    return TensorType(t.element_type, shape)


def _segments(f: func.FuncOp, state: dict[SSAValue, object]) -> list[list[Operation]]:
    """The computing ops in segments, each but the last ending at a row-parallel matmul."""
    segs: list[list[Operation]] = [[]]
    for op in f.body.block.ops:
        if isinstance(op, func.ReturnOp) or is_free(op):
            continue
        segs[-1].append(op)
        if isinstance(op, graph.MatmulOp) and state.get(op.result) == PARTIAL:
            segs.append([])
    return segs


def split_function(
    module: builtin.ModuleOp,
    f: func.FuncOp,
    system: System,
    microbatches: int,
    group: int | None = None,
    price: bool = False,
) -> Cut | None:
    """Replace `f` by its tensor-parallel segments over groups of `group` chips (all of
    `system`'s by default), the groups pipelined, and the pipeline that runs them; returns the
    cut of the segments into groups with each group's estimated cycles a micro-batch (`price`:
    also for one group, whose segments need no cut; else None there)."""
    if any(isinstance(op, graph.RepeatOp) for op in f.body.block.ops):
        raise DiagnosticException(
            "split-tensor-parallel: the function holds a graph.repeat: split the layers before rolling them "
            "(run split-tensor-parallel before roll-layers)"
        )
    n = group or system.chips
    if n < 2 or system.chips % n:
        raise DiagnosticException(
            f"split-tensor-parallel: group {n} must be 2 or more chips and divide the {system.chips} chips of "
            f"{system.name}"
        )
    name_values(f)
    column, state = plan_shardings(f, n)
    segs = _segments(f, state)
    names = input_names(f)
    seg_of = {op: k for k, ops in enumerate(segs) for op in ops}
    ret = f.body.block.last_op
    assert isinstance(ret, func.ReturnOp)

    def seg_def(v: SSAValue) -> int | None:
        return seg_of.get(v.owner) if isinstance(v.owner, Operation) else None

    # what each segment reads from before it, and hands on
    reads: list[dict[SSAValue, None]] = [{} for _ in segs]
    for k, ops in enumerate(segs):
        for op in ops:
            for v in op.operands:
                d = seg_def(v)
                if (d is None and not (isinstance(v.owner, Operation) and is_free(v.owner))) or (
                    d is not None and d < k
                ):
                    reads[k].setdefault(v, None)
    last = len(segs) - 1
    for v in ret.operands:
        d = seg_def(v)
        if d is None or d < last:
            if not (isinstance(v.owner, Operation) and is_free(v.owner)):
                reads[last].setdefault(v, None)
    hands: list[list[SSAValue]] = []
    for k, ops in enumerate(segs):
        later = {v for j in range(k + 1, len(segs)) for v in reads[j]}
        partial = ops[-1].results[0] if k < last else None  # reaches later segments through the all-reduce
        hands.append([r for op in ops for r in op.results if r in later and r is not partial])
    funcs: list[list[func.FuncOp]] = []
    for k, ops in enumerate(segs):
        row = []
        for part in range(n if k < last else 1):  # the last segment's results are read from the first chip only
            row.append(
                _segment_function(
                    f, k, part, n, ops, list(reads[k]), hands[k], ret if k == last else None, state, column, names
                )
            )
        funcs.append(row)
    cut = _group_cut(f, system, n, segs, seg_of, reads, funcs, state) if system.chips > n or price else None
    group_of = cut.stage_of if cut is not None else [0] * len(segs)
    # the pipeline: per segment one stage per chip of its group, then the all-reduce of the partials
    block = Block(arg_types=[a.type for a in f.args])
    for a, pa in zip(f.args, block.args, strict=True):
        pa.name_hint = names[a]
    env: list[dict[SSAValue, SSAValue]] = [dict(zip(f.args, block.args, strict=True)) for _ in range(n)]
    chip_of: dict[SSAValue, int] = {}  # a pipeline value's chip (model inputs: none, the host writes them)
    moved: dict[tuple[SSAValue, int], SSAValue] = {}

    def on(v: SSAValue, chip: int) -> SSAValue:
        """`v` on `chip`: itself, or its transfer there (one a value and chip)."""
        src = chip_of.get(v)
        if src is None or src == chip:
            return v
        if (v, chip) not in moved:
            t = TransferOp(v, src, chip)
            t.result.name_hint = v.name_hint
            block.add_op(t)
            chip_of[t.result] = chip
            moved[(v, chip)] = t.result
        return moved[(v, chip)]

    reduces = 0
    outs: list[SSAValue] = []
    for k, row in enumerate(funcs):
        partials = []
        chips = [group_of[k] * n + part for part in range(n)]
        for part, sf in enumerate(row):
            ins = [on(env[part][v], chips[part]) for v in reads[k]]
            results = list(hands[k])
            partial = segs[k][-1].results[0] if k < last else None
            types = list(sf.function_type.outputs.data)
            st = StageOp(sf.sym_name.data, chips[part], ins, types)
            block.add_op(st)
            vals = list(st.outputs)
            for r, v in zip(results, vals, strict=False):
                v.name_hint = r.name_hint
                env[part][r] = v
            for v in vals:
                chip_of[v] = chips[part]
            if partial is not None:
                partials.append(vals[len(results)])
            elif part == 0:
                outs = vals[len(results) :]
        if partials:
            ar = AllReduceOp(partials, chips)
            block.add_op(ar)
            reduces += 1
            p = segs[k][-1].results[0]
            for part, r in enumerate(ar.outputs):
                r.name_hint = p.name_hint
                env[part][p] = r
                chip_of[r] = chips[part]
    block.add_op(OutputOp(outs))
    pipe = PipelineOp(f.sym_name.data, microbatches, Region(block))
    for key in ("ipu.inputs", "ipu.outputs", "onnx.output_dtypes", "onnx.input_dtypes"):
        if key in f.attributes:
            pipe.attributes[key] = f.attributes[key]
    pipe.attributes["ipu.parallel"] = StringAttr("tensor")
    module.body.block.insert_op_before(pipe, f)
    for row in funcs:
        for sf in row:
            for key, v in f.attributes.items():
                if key.startswith("onnx."):
                    sf.attributes.setdefault(key, v)
            module.body.block.insert_op_before(sf, f)
    module.body.block.erase_op(f)
    log_event(
        "split tensor parallel",
        function=pipe.sym_name.data,
        system=system.name,
        chips=n,
        groups=system.chips // n,
        column_parallel=len(column),
        all_reduces=reduces,
        segments=len(segs),
        segments_per_group=",".join(str(group_of.count(g)) for g in range(system.chips // n)),
    )
    return cut


def _signature(sf: func.FuncOp) -> tuple:
    """Segment functions with equal signatures cost the same (one layer's segment and the next's):
    their ops and types, not their weights' names or seeds."""
    return tuple(
        (
            op.name,
            tuple(str(v.type) for v in op.operands),
            tuple(str(r.type) for r in op.results),
            ()
            if isinstance(op, graph.ParameterOp)
            else tuple(sorted((k, str(v)) for k, v in op.attributes.items() if not k.startswith("onnx."))),
        )
        for op in sf.body.block.ops
    )


def _group_cut(
    f: func.FuncOp,
    system: System,
    n: int,
    segs: list[list[Operation]],
    seg_of: dict[Operation, int],
    reads: list[dict[SSAValue, None]],
    funcs: list[list[func.FuncOp]],
    state: dict[SSAValue, object],
) -> Cut:
    """The contiguous cut of the segments into the system's chips / n groups whose slowest group
    is fastest (`best_cut`: each segment's group, each group's estimated cycles), a segment
    priced by the planner's estimate of its first chip's function plus its all-reduce over a
    group, a cut by the link phase moving what crosses it (each chip's share, chip to chip), every
    group's weights within a chip's `WEIGHT_SHARE`."""
    groups, chip, last = system.chips // n, system.chip, len(segs) - 1
    if len(segs) < groups:
        raise DiagnosticException(
            f"split-tensor-parallel: @{f.sym_name.data} splits into {len(segs)} segments over groups of {n} chips, "
            f"fewer than the {groups} groups of {system.name}: use a larger group"
        )
    priced: dict[tuple, int] = {}
    costs, weights = [], []
    for k, row in enumerate(funcs):
        sf = row[0]
        sig = _signature(sf)
        if sig not in priced:
            try:
                priced[sig] = planned_cycles(sf.clone(), chip, BOUNDARY)
            except DiagnosticException as e:
                raise DiagnosticException(
                    f"split-tensor-parallel: segment {k} (@{sf.sym_name.data}) cannot be planned on one {chip.name}: "
                    f"{e}"
                ) from None
        reduce = system.all_reduce_cycles(type_bytes(segs[k][-1].results[0].type), list(range(n))) if k < last else 0
        costs.append(priced[sig] + reduce)
        weights.append(
            sum(type_bytes(op.results[0].type) for op in sf.body.block.ops if isinstance(op, graph.ParameterOp))
        )
    links = [0] * len(segs)  # one group: no cut, no link phase
    for c in range(1, len(segs) if groups > 1 else 0):
        crossing = {v for j in range(c, len(segs)) for v in reads[j] if seg_of.get(v.owner, c) < c}  # type: ignore[arg-type]
        per_chip = sum(type_bytes(_shard_type(v.type, state.get(v, REPLICATED), n)) for v in crossing)
        links[c] = system.link_phase_cycles(
            [LinkTransfer(i, n + i, per_chip, -(-per_chip // chip.tiles)) for i in range(n)] if per_chip else []
        )
    capacity = int(WEIGHT_SHARE * chip.tiles * chip.memory_size)
    cut = best_cut(costs, weights, links, groups, capacity, [None] * len(segs))
    if cut is None:
        raise DiagnosticException(
            f"split-tensor-parallel: @{f.sym_name.data} does not fit {system.name} in groups of {n}: no cut of its "
            f"{len(segs)} segments into {groups} groups keeps every group's weights a chip within {capacity:,} "
            f"bytes ({WEIGHT_SHARE:.0%} of a {chip.name}; a chip's weights in all: {sum(weights):,})"
        )
    return cut


def _segment_function(
    f: func.FuncOp,
    k: int,
    part: int,
    n: int,
    ops: list[Operation],
    reads: list[SSAValue],
    hands: list[SSAValue],
    ret: func.ReturnOp | None,
    state: dict[SSAValue, object],
    column: set[Operation],
    names: dict[SSAValue, str],
) -> func.FuncOp:
    """Chip `part`'s function of segment `k`: its ops on its slices of the weights."""
    block = Block(arg_types=[_shard_type(v.type, state.get(v, REPLICATED), n) for v in reads])
    env: dict[SSAValue, SSAValue] = {}
    for v, a in zip(reads, block.args, strict=True):
        a.name_hint = names.get(v) or f"{BOUNDARY}{v.name_hint}"
        env[v] = a
    copies: dict[tuple[SSAValue, int | None], SSAValue] = {}
    frees: list[Operation] = []

    def weight(v: SSAValue, axis: int | None) -> SSAValue:
        if (v, axis) not in copies:
            p = v.owner
            assert isinstance(p, Operation)
            c = _slice_param(p, axis, part, n) if axis is not None else p.clone()  # type: ignore[arg-type]
            frees.append(c)
            copies[(v, axis)] = c.results[0]
        return copies[(v, axis)]

    body: list[Operation] = []
    for op in ops:
        operands = []
        for i, v in enumerate(op.operands):
            if isinstance(v.owner, Operation) and is_free(v.owner):
                axis = None
                res = state.get(op.results[0]) if op.results else None
                if isinstance(op, graph.MatmulOp) and i == 1:
                    axis = 1 if op in column else 0 if res == PARTIAL else None
                elif isinstance(res, Sharded) and _binary_like(op):
                    axis = _weight_axis(v, res.axis, op.results[0].type)
                operands.append(weight(v, axis))
            else:
                operands.append(env[v])
        types = [
            _shard_type(r.type, state.get(r, REPLICATED) if state.get(r) != PARTIAL else REPLICATED, n)
            for r in op.results
        ]
        props = dict(op.properties)
        attrs = dict(op.attributes)
        if isinstance(op, graph.SplitHeadsOp) and isinstance(state.get(op.result), Sharded):
            attrs["heads"] = IntegerAttr(op.heads.value.data // n, 64)
        c = type(op).create(operands=operands, result_types=types, attributes=attrs, properties=props)
        for old, new in zip(op.results, c.results, strict=True):
            new.name_hint = old.name_hint
            env[old] = new
        body.append(c)
    outs = [env[v] for v in hands]
    if ret is not None:
        outs += [env[v] if v in env else weight(v, None) for v in ret.operands]
    else:
        outs.append(env[ops[-1].results[0]])  # the partial sum to all-reduce
    for op in (*frees, *body):
        block.add_op(op)
    block.add_op(func.ReturnOp(*outs))
    sf = func.FuncOp(
        f"{f.sym_name.data}_seg{k}_chip{part}", ([a.type for a in block.args], [v.type for v in outs]), Region(block)
    )
    out_names = [f"{BOUNDARY}{v.name_hint or 'v'}" for v in hands]
    if ret is not None:
        declared = f.attributes.get("ipu.outputs")
        if isinstance(declared, ArrayAttr) and len(declared.data) == len(ret.operands):
            out_names += [s.data for s in declared.data]  # type: ignore[union-attr]
        else:
            out_names += [v.name_hint or f"output{i}" for i, v in enumerate(ret.operands)]
    else:
        out_names.append(f"{ops[-1].results[0].name_hint or 'partial'}.partial")
    sf.attributes["ipu.inputs"] = ArrayAttr([StringAttr(a.name_hint or f"arg{i}") for i, a in enumerate(block.args)])
    sf.attributes["ipu.outputs"] = ArrayAttr([StringAttr(x) for x in out_names])
    sf.attributes[STAGE_ATTR] = IntegerAttr(k, 64)
    return sf


@dataclass(frozen=True)
class SplitTensorParallelPass(ModulePass):
    """Split the graph function's heads and FFN columns over every chip of a system, or over
    groups of `group` chips with the groups pipelined."""

    name = "split-tensor-parallel"
    system: str | None = None  # unset: the module's #ipu.system
    microbatches: int = 4
    group: int | None = None  # chips a tensor-parallel group (unset: all); smaller groups are pipelined

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        system, f = system_pass_input(op, self.system, self.name, self.microbatches)
        split_function(op, f, system, self.microbatches, self.group)


__all__ = ["SplitTensorParallelPass", "plan_shardings", "split_function"]
