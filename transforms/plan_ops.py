"""`plan-ops`: give every graph value a layout and every graph op an implementation.

A single-plan heuristic: each matmul searches its (rows, cols, contraction) tile grid with
the target's cost formulas and a per-op memory budget; elementwise ops follow their first
operand; every other layout demand becomes an explicit `plan.rearrange`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ArrayAttr, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph, plan
from ipu.dialects.layout import Layout
from ipu.dialects.value_names import name_values, named_ops
from ipu.target import Target
from ipu.transforms.log import log_event
from ipu.transforms.target_of import set_module_target

MEMORY_FRACTION = 0.85  # of data memory, per-op working-set budget; place-storage checks what is really live
WEIGHT_FRACTION = 0.12  # tile memory for weights kept resident in their consumer's (replicated) layout


def plan_type(t: TensorType, lay: Layout, memory: str = "standard") -> plan.PlanTensorType:
    align = lay.align if any(a != 1 for a in lay.align) else ()
    attr = plan.LayoutAttr(lay.grid, lay.split, lay.partial, lay.first_tile, align, memory)
    return plan.PlanTensorType(t, attr)


def _divisor_like(n: int, limit: int) -> list[int]:
    out = {1}
    p = 1
    while p * 2 <= min(n, limit):
        p *= 2
        out.add(p)
    out |= {d for d in range(1, min(n, limit) + 1) if n % d == 0 and d <= 64}
    return sorted(out)


@dataclass(frozen=True)
class GemmLayouts:
    """The layouts one (pm, pn, pk) choice emits: the plan is priced from these (principle 2)."""

    a: Layout
    b: Layout
    partial: Layout  # gemm result (partial over grid dim 2 when pk > 1)
    result: Layout  # after plan.reduce (== partial when pk == 1)
    home: Layout | None  # distributed home of a fetched weight


def gemm_layouts(m: int, k: int, n: int, pm: int, pn: int, pk: int, head: int, fetch: bool) -> GemmLayouts:
    grid = (pm, pn, pk)
    q = Layout((m, n), grid, ((0,), (1, 2)), align=(1, head))
    align_n = q.block_size(1) * pk if pk > 1 else head
    hb = math.ceil(math.ceil(k / pk) / pm)
    hb += hb % 2
    kb_align = hb * pm if fetch else 2
    a = Layout((m, k), grid, ((0,), (2,)), align=(1, kb_align))
    b = Layout((k, n), grid, ((2,), (1,)), align=(kb_align, align_n))
    part = Layout((m, n), grid, ((0,), (1,)), partial=2 if pk > 1 else -1, align=(1, align_n))
    home = Layout((k, n), grid, ((2, 0), (1,)), align=(hb, align_n)) if fetch else None
    return GemmLayouts(a, b, part, (q if head > 1 else _drop_align(q)) if pk > 1 else part, home)


@dataclass(frozen=True)
class GemmChoice:
    pm: int
    pn: int
    pk: int
    cycles: int
    exchange_cycles: int
    bytes_per_tile: int
    weight_bytes: int  # the B block per tile
    layouts: GemmLayouts


def gemm_candidates(
    m: int,
    k: int,
    n: int,
    esize: int,
    a_moves: bool,
    target: Target,
    b_moves: bool = False,
    head: int = 1,
    a_current: Layout | None = None,
) -> list[GemmChoice]:
    """Every (pm, pn, pk) grid with its estimated cycles and working set per tile.

    `a_moves` says the lhs exists already (in `a_current` if given: a candidate whose lhs layout
    equals it needs no exchange); `b_moves` says the rhs must be exchanged into place."""
    tiles = target.tiles
    out = []
    n_parts = max(1, -(-n // max(head, 16)))
    for pm in _divisor_like(m, tiles):
        for pk in _divisor_like(max(k // 16, 1), tiles // pm):
            pn = min(tiles // (pm * pk), max(1, n_parts // pk) if head > 1 else n_parts)
            if pn < 1:
                continue
            lays = gemm_layouts(m, k, n, pm, pn, pk, head, b_moves)
            (bm, bk), bn = lays.a.block, lays.b.block[1]
            a_moves_here = a_moves and lays.a != a_current
            a, b = bm * bk * esize, bk * bn * esize
            p = bm * bn * (4 if pk > 1 else esize)
            # peak of the gemm step (a, b, partial) and the reduce step (partial, staging, result)
            work = max(a + b + p, 2 * p + lays.result.block_elements * esize if pk > 1 else 0)
            exch = (a // 4 if a_moves_here else 0) + (b // 4 if b_moves else 0)
            cyc = target.amp_matmul_cycles(bm, bk, bn)
            phases = int(a_moves_here or b_moves)
            if pk > 1:
                exch += (p - p // pk) // 4
                cyc += target.reduce_cycles(pk, lays.result.block_elements)
                phases += 1
            exch += phases * target.phase_overhead_cycles()
            out.append(GemmChoice(pm, pn, pk, cyc + exch, exch, work, b, lays))
    return out


def choose_gemm(
    m: int,
    k: int,
    n: int,
    esize: int,
    a_moves: bool,
    target: Target,
    b_moves: bool = False,
    head: int = 1,
    a_current: Layout | None = None,
    reserved: int = 0,
    rank: int = 0,
    counts: list[int] | None = None,
) -> GemmChoice:
    """The `rank`-th cheapest candidate whose working set fits beside `reserved` bytes live
    elsewhere (rank 0: the cheapest); `counts` receives how many fit."""
    cands = gemm_candidates(m, k, n, esize, a_moves, target, b_moves, head, a_current)
    budget = MEMORY_FRACTION * (target.memory_size - target.code_reserve_bytes) - reserved
    fits = [c for c in cands if c.bytes_per_tile <= budget]
    if not fits:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {target.name}: matmul [{m}x{k}] x [{k}x{n}] needs at least "
            f"{best.bytes_per_tile} bytes per tile (grid {best.pm}x{best.pn}x{best.pk}); "
            f"per-op budget is {int(budget)} of {target.memory_size} bytes ({reserved} held by live values)"
        )
    fits.sort(key=lambda c: (c.cycles, c.bytes_per_tile))
    if counts is not None:
        counts.append(len(fits))
    return fits[min(rank, len(fits) - 1)]


def default_layout(shape: tuple[int, ...], tiles: int) -> Layout:
    """Outer axes first, then inner ones, over as many tiles as the shape has useful blocks (the
    last axis in blocks of at least two elements: whole 32-bit words)."""
    if not shape:
        raise DiagnosticException("plan-ops: rank-0 tensors are not supported (give the value a shape [1])")
    grid, left = [], tiles
    for a, n in enumerate(shape):
        g = max(1, min(left, n if a < len(shape) - 1 else n // 2))
        grid.append(g)
        left //= g
    return Layout(shape, tuple(grid), tuple((a,) for a in range(len(shape))))


@dataclass
class _Planner:
    target: Target
    block: Block
    arg_map: dict[SSAValue, int]
    top: Block = field(default=None)  # type: ignore[assignment]
    arg_types: dict[int, plan.PlanTensorType] = field(default_factory=dict)
    current: dict[SSAValue, SSAValue] = field(default_factory=dict)
    cache: dict[tuple[SSAValue, plan.PlanTensorType], SSAValue] = field(default_factory=dict)
    params: dict[SSAValue, graph.ParameterOp] = field(default_factory=dict)
    new_args: dict[int, SSAValue] = field(default_factory=dict)
    conversions: list[str] = field(default_factory=list)
    desired: dict[SSAValue, plan.PlanTensorType] = field(default_factory=dict)  # consumer-chosen layouts
    attention: dict[Operation, AttentionChoice] = field(default_factory=dict)
    resident: int = 0  # bytes per tile of weights kept in their consumer's layout
    choices: dict[int, int] = field(default_factory=dict)  # op index -> candidate rank (search)
    decisions: dict[int, int] = field(default_factory=dict)  # op index -> number of fitting candidates
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
        self.arg_types[i] = t
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


def plan_function(
    f: func.FuncOp, target: Target, choices: dict[int, int] | None = None, decisions: dict[int, int] | None = None
) -> dict[str, int]:
    """Rewrite `f` in place from graph ops to plan ops; returns summary figures.

    `choices` forces the candidate rank of chosen ops (default: each op's cheapest fitting
    candidate); `decisions` receives, per op with a choice, how many candidates fit."""
    old = f.body.block
    new = Block()
    p = _Planner(target, new, {a: i for i, a in enumerate(old.args)}, new)
    p.choices = dict(choices or {})
    _pre_plan(p, old)
    gemm_grids: list[str] = []
    index, ret = _plan_block(p, old, 0, gemm_grids)
    if not isinstance(ret, func.ReturnOp):
        ret = None
    if ret is None:
        raise DiagnosticException("plan-ops: function has no func.return")
    outs = [p.get(v, None, "output") for v in ret.arguments]
    for v in outs:
        if v.type.layout.partial >= 0:
            raise DiagnosticException("plan-ops: an output is still a partial sum")
    new.add_op(func.ReturnOp(*outs))
    for i, a in enumerate(old.args):  # unused inputs still get a layout
        if i not in p.new_args:
            p.arg(a, plan_type(a.type, default_layout(tuple(a.type.get_shape()), target.tiles)))
    f.body.detach_block(old)
    old.erase(safe_erase=False)
    f.body.add_block(new)
    f.function_type = builtin.FunctionType.from_lists([a.type for a in new.args], [v.type for v in outs])
    names = [StringAttr(a.name_hint or f"arg{i}") for i, a in enumerate(new.args)]
    outputs = [StringAttr(f"output{i}") for i in range(len(outs))]
    # names declared by the graph function (e.g. an imported model's own) are kept
    f.attributes["ipu.inputs"] = _declared_names(f, "ipu.inputs", len(names)) or ArrayAttr(names)
    f.attributes["ipu.outputs"] = _declared_names(f, "ipu.outputs", len(outs)) or ArrayAttr(outputs)
    if decisions is not None:
        decisions.update(p.decisions)
    return {"operations": index, "conversions": len(p.conversions), "gemms": len(gemm_grids)}


def _declared_names(f: func.FuncOp, key: str, n: int) -> ArrayAttr | None:
    a = f.attributes.get(key)
    if isinstance(a, ArrayAttr) and len(a.data) == n and all(isinstance(x, StringAttr) for x in a.data):
        return a
    return None


def _plan_block(p: _Planner, block: Block, index: int, grids: list[str]) -> tuple[int, Operation | None]:
    """Plan the ops of `block` in order (op indices in pre-order, as the golden evaluator
    numbers them); returns the next index and the block's terminator."""
    ret: Operation | None = None
    for op in list(block.ops):
        if isinstance(op, graph.ParameterOp):
            p.params[op.result] = op
            index += 1
            continue
        if isinstance(op, func.ReturnOp | graph.YieldOp):
            ret = op
            continue
        if isinstance(op, graph.RepeatOp):
            index = _plan_repeat(p, op, index, grids)
            continue
        if isinstance(op, graph.MatmulOp):
            _plan_matmul(p, op, index, p.target, grids)
        elif isinstance(op, graph.AddOp | graph.SubOp | graph.MulOp | graph.MaxOp):
            _plan_binary(p, op, index)
        elif isinstance(op, graph.GeluOp | graph.ReluOp | graph.ExpOp | graph.TanhOp):
            x = p.get(op.input, None, op.name)
            kind = "gelu_erf" if isinstance(op, graph.GeluOp) and op.exact else op.name.split(".")[1]
            p.set(op.result, p.emit(plan.UnaryOp(kind, x, index)).results[0])
        elif isinstance(op, graph.TransposeOp):
            _plan_transpose(p, op, index)
        elif isinstance(op, graph.ReshapeOp):
            _plan_reshape(p, op, index, p.target)
        elif isinstance(op, graph.CastOp):
            x = p.get(op.input, None, op.name)
            r = plan.CastOp.create(
                operands=[x],
                result_types=[plan.PlanTensorType(op.result.type, x.type.layout_attr)],
                attributes={"op_index": builtin.IntegerAttr(index, 64)},
            )
            p.set(op.result, p.emit(r).results[0])
        elif isinstance(op, graph.SoftmaxOp | graph.LayerNormOp | graph.RmsNormOp | graph.ReduceOp):
            _plan_rowwise(p, op, index)
        elif isinstance(op, graph.SplitHeadsOp):
            _plan_split_heads(p, op, index)
        elif isinstance(op, graph.MergeHeadsOp):
            _plan_merge_heads(p, op, index)
        elif isinstance(op, graph.AttentionOp):
            _plan_attention(p, op, index)
        else:
            raise DiagnosticException(f"plan-ops: no plan for operation {op.name}")
        p.consumed(op)
        index += 1
    return index, ret


def _plan_repeat(p: _Planner, op: graph.RepeatOp, index: int, grids: list[str]) -> int:
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
    nxt, term = _plan_block(p, op.body.block, index + 1, grids)
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
    log_event("planned repeat", op=index, count=op.count.value.data, body_operations=nxt - index - 1)
    return nxt


def _plan_matmul(p: _Planner, op: graph.MatmulOp, index: int, target: Target, grids: list[str]) -> None:
    if any(op.flags()):
        raise DiagnosticException("plan-ops: transposed matmul operands are not planned yet; use graph.transpose")
    (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
    esize = op.lhs.type.element_type.bitwidth // 8
    # Head-aligned output columns would save the split_heads rearrange but cap the column parts at
    # the head count, which costs far more memory per tile than one cheap exchange: not used here.
    head = 1
    a_cur = p.current[op.lhs].type.layout if p.has(op.lhs) else None
    reserved = p.resident + p.live_bytes(exclude=(op.lhs, op.rhs))
    rank, counts = p.choices.get(index, 0), []
    try:
        c = choose_gemm(m, k, n, esize, p.has(op.lhs), target, p.has(op.rhs), head, a_cur, reserved, rank, counts)
    except DiagnosticException as no_fit:
        _plan_serial_gemm(p, op, index, target, reserved, no_fit)
        return
    fetch = False
    if op.rhs in p.params and not p.has(op.rhs):
        if p.resident + c.weight_bytes > WEIGHT_FRACTION * target.memory_size:
            # too big to keep replicated: store it once, spread over the grid, and fetch it before use;
            # the distributed home stays resident
            fetch = True
            home_bytes = math.ceil(k * n / target.tiles) * esize
            try:
                counts.clear()
                c = choose_gemm(
                    m, k, n, esize, p.has(op.lhs), target, True, head, a_cur, reserved + home_bytes, rank, counts
                )
            except DiagnosticException as no_fit:
                _plan_serial_gemm(p, op, index, target, reserved + home_bytes, no_fit)
                return
            p.resident += home_bytes
        else:
            p.resident += c.weight_bytes
    p.decisions[index] = counts[-1] if counts else 1
    lays = c.layouts
    el = op.result.type.element_type
    if fetch:
        assert lays.home is not None
        p.get(op.rhs, plan_type(op.rhs.type, lays.home), "weight home")
    a = p.get(op.lhs, plan_type(op.lhs.type, lays.a), op.name)
    b = p.get(op.rhs, plan_type(op.rhs.type, lays.b, "interleaved"), "weight fetch" if fetch else op.name)
    r_t = TensorType(builtin.f32 if c.pk > 1 else el, [m, n])
    g = p.emit(plan.GemmOp(a, b, plan_type(r_t, lays.partial, "interleaved"), None if c.pk > 1 else index)).results[0]
    grids.append(f"{c.pm}x{c.pn}x{c.pk}")
    log_event(
        "planned operation",
        op=index,
        name=op.name,
        grid=f"{c.pm}x{c.pn}x{c.pk}",
        weight="fetched" if fetch else "resident",
        estimated_cycles=c.cycles,
        estimated_exchange_cycles=c.exchange_cycles,
        bytes_per_tile=c.bytes_per_tile,
    )
    if c.pk > 1:
        g.name_hint = f"{op.result.name_hint or 'mm'}_partial"
        g = p.emit(plan.ReduceOp(g, plan_type(op.result.type, lays.result), index)).results[0]
    p.set(op.result, g)


@dataclass(frozen=True)
class SerialChoice:
    pm: int
    pn: int
    steps: int
    cycles: int
    bytes_per_tile: int


def choose_serial_gemm(m: int, k: int, n: int, esize: int, target: Target, reserved: int) -> SerialChoice | None:
    """Output-stationary (pm, pn) grid and the fewest contraction steps that fit."""
    budget = MEMORY_FRACTION * (target.memory_size - target.code_reserve_bytes) - reserved
    over = target.phase_overhead_cycles()
    best: SerialChoice | None = None
    for pm in _divisor_like(m, target.tiles):
        pn = min(target.tiles // pm, max(1, n // 16))
        bm, bn = math.ceil(m / pm), math.ceil(n / pn)
        bn += bn % 2
        for steps in (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64):
            kc = math.ceil(k / steps)
            kc += kc % 2
            mem = bm * kc * esize + kc * bn * esize + bm * bn * (4 + esize)
            if mem > budget:
                continue
            step = target.amp_matmul_cycles(bm, kc, bn) + (bm * kc + kc * bn) * esize // 4 + over
            cyc = steps * step + target.costs["local_copy_call"] + bm * bn * esize // 8
            c = SerialChoice(pm, pn, steps, cyc, mem)
            if best is None or (c.cycles, c.bytes_per_tile) < (best.cycles, best.bytes_per_tile):
                best = c
            break
    return best


def _plan_serial_gemm(
    p: _Planner, op: graph.MatmulOp, index: int, target: Target, reserved: int, no_fit: DiagnosticException
) -> None:
    (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
    esize = op.lhs.type.element_type.bitwidth // 8
    c = choose_serial_gemm(m, k, n, esize, target, reserved)
    if c is None:
        raise no_fit
    # both operands spread once, unreplicated, over the output grid: each step's windows then
    # come from a few whole blocks (one exchange per operand instead of fragmented windows)
    grid = (c.pm, c.pn)
    a = p.get(op.lhs, plan_type(op.lhs.type, Layout((m, k), grid, ((0,), (1,)))), op.name)
    b = p.get(op.rhs, plan_type(op.rhs.type, Layout((k, n), grid, ((0,), (1,)))), "weight home")
    out = Layout((m, n), grid, ((0,), (1,)))
    r = plan.SerialGemmOp.create(
        operands=[a, b],
        result_types=[plan_type(op.result.type, out)],
        attributes={"k_steps": builtin.IntegerAttr(c.steps, 64), "op_index": builtin.IntegerAttr(index, 64)},
    )
    p.set(op.result, p.emit(r).results[0])
    log_event(
        "planned operation",
        op=index,
        name=op.name,
        grid=f"{c.pm}x{c.pn}",
        serial_k_steps=c.steps,
        estimated_cycles=c.cycles,
        bytes_per_tile=c.bytes_per_tile,
    )


def _plan_binary(p: _Planner, op: Operation, index: int) -> None:
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


def _plan_transpose(p: _Planner, op: graph.TransposeOp, index: int) -> None:
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


def _plan_reshape(p: _Planner, op: graph.ReshapeOp, index: int, target: Target) -> None:
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


def _drop_align(lay: Layout) -> Layout:
    return Layout(lay.shape, lay.grid, lay.split, lay.partial, lay.first_tile)


def row_layout(shape: tuple[int, ...], tiles: int) -> Layout:
    """Whole rows per tile: leading axes split, the last axis kept whole."""
    if len(shape) == 1:
        return Layout(shape, (1,), ((),))
    if len(shape) == 2:
        return Layout(shape, (max(1, min(tiles, shape[0])),), ((0,), ()))
    per = max(1, min(tiles // shape[0], shape[1]))
    return Layout(shape, (shape[0], per), ((0,), (1,), ()))


def _replicated_vector(n: int, lay: Layout) -> Layout:
    return Layout((n,), lay.grid, ((),), -1, lay.first_tile)


def _plan_rowwise(p: _Planner, op: Operation, index: int) -> None:
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
        vec = _replicated_vector(lay.shape[-1], lay)
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


def _heads_ok(lay: Layout, d: int) -> bool:
    try:
        plan.heads_view(lay, d)
    except DiagnosticException:
        return False
    return lay.partial < 0


def _plan_split_heads(p: _Planner, op: graph.SplitHeadsOp, index: int) -> None:
    h, s, d = op.result.type.get_shape()
    want = p.desired.get(op.result) or plan_type(op.result.type, row_layout((h, s, d), p.target.tiles))
    # the input in the 2-D layout whose head view is the result: the split then moves whole blocks
    x = p.get(op.input, plan_type(op.input.type, plan.heads_2d(want.layout)), op.name)
    r = plan.SplitHeadsOp.create(
        operands=[x], result_types=[want], attributes={"op_index": builtin.IntegerAttr(index, 64)}
    )
    p.set(op.result, p.emit(r).results[0])


def _plan_merge_heads(p: _Planner, op: graph.MergeHeadsOp, index: int) -> None:
    x = p.get(op.input, None, op.name)
    if x.type.layout.partial >= 0:
        raise DiagnosticException("plan-ops: merge_heads of a partial sum")
    r = plan.MergeHeadsOp.create(
        operands=[x],
        result_types=[plan_type(op.result.type, plan.heads_2d(x.type.layout))],
        attributes={"op_index": builtin.IntegerAttr(index, 64)},
    )
    p.set(op.result, p.emit(r).results[0])


@dataclass(frozen=True)
class AttentionChoice:
    form: str
    grid: tuple[int, int, int, int]
    rows: int  # query rows per tile (state block)
    out_rows: int  # rows per tile after the combine
    keys: int  # keys per update call (materialized: the tile's key block; streamed: the window)
    cycles: int
    bytes_per_tile: int


def choose_attention(
    hq: int,
    hkv: int,
    s: int,
    sk: int,
    d: int,
    esize: int,
    form: str,
    target: Target,
    rank: int = 0,
    counts: list[int] | None = None,
) -> AttentionChoice:
    """Grid (kv heads, group, query blocks, key blocks) and block sizes by estimated cycles."""
    g = hq // hkv
    per = target.tiles // hq
    if per < 1:
        raise DiagnosticException(
            f"plan-ops: {hq} query heads need at least {hq} tiles; {target.name} has {target.tiles}"
        )
    budget = MEMORY_FRACTION * (target.memory_size - target.code_reserve_bytes)
    over = target.phase_overhead_cycles()
    cands: list[AttentionChoice] = []
    if form == "materialized":
        for pk in range(1, per + 1):
            pq = min(per // pk, s)
            ob = math.ceil(s / (pq * pk))
            qr, kr = ob * pk, math.ceil(sk / pk)
            kr += kr % 2
            mem = (
                qr * d * esize
                + 2 * kr * d * esize
                + qr * kr * 4
                + qr * (d + 2) * 4
                + pk * ob * (d + 2) * 4
                + ob * d * esize
                + 16
            )
            exch = (qr * d * esize + 2 * kr * d * esize + (pk - 1) * ob * (d + 2) * 4) // 4 + 2 * over
            cyc = (
                target.attention_update_cycles(qr, kr, d)
                + target.attention_combine_cycles(pk, ob, d)
                + target.fill_cycles(qr * (d + 2))
                + exch
            )
            cands.append(AttentionChoice(form, (hkv, g, pq, pk), qr, ob, kr, cyc, mem))
    else:
        pq = min(per, s)
        qr = math.ceil(s / pq)
        for kb in (32, 64, 128, 256, 512, 1024):
            if kb > max(sk, 32):
                break
            steps = math.ceil(sk / kb)
            mem = qr * d * esize + 2 * kb * d * esize + qr * kb * 4 + 2 * qr * (d + 2) * 4 + qr * d * esize + 16
            step = target.attention_update_cycles(qr, kb, d) + 2 * kb * d * esize // 4 + over
            cyc = steps * step + target.attention_combine_cycles(1, qr, d) + target.fill_cycles(qr * (d + 2))
            cands.append(AttentionChoice(form, (hkv, g, pq, 1), qr, qr, kb, cyc, mem))
    fits = [c for c in cands if c.bytes_per_tile <= budget]
    if not fits:
        best = min(cands, key=lambda c: c.bytes_per_tile)
        raise DiagnosticException(
            f"model does not fit target {target.name}: {form} attention [{hq}x{s}x{d}] over {sk} keys needs at "
            f"least {best.bytes_per_tile} bytes per tile (grid {'x'.join(map(str, best.grid))}); per-op budget is "
            f"{int(budget)} of {target.memory_size} bytes"
            + ('; try form = "streamed"' if form == "materialized" else "")
        )
    fits.sort(key=lambda c: (c.cycles, c.bytes_per_tile))
    if counts is not None:
        counts.append(len(fits))
    return fits[min(rank, len(fits) - 1)]


def attention_layouts(c: AttentionChoice, hq: int, hkv: int, s: int, sk: int, d: int) -> dict[str, Layout]:
    grid = c.grid
    al = (1, c.rows, 1)
    return {
        "q": Layout((hq, s, d), grid, ((0, 1), (2,), ()), align=al),
        "kv": Layout((hkv, sk, d), grid, ((0,), (3,), ()), align=(1, 2, 1)),
        "state": Layout((hq, s, d + 2), grid, ((0, 1), (2,), ()), partial=3, align=al),
        "out": Layout((hq, s, d), grid, ((0, 1), (2, 3), ())),
    }


def _pre_plan(p: _Planner, block: Block) -> None:
    """Look ahead: op indices, use counts (for liveness-aware budgets), attention layouts."""
    ops = [o for o in block.walk() if not isinstance(o, func.ReturnOp | graph.YieldOp)]
    p.index_of = {o: i for i, o in enumerate(ops)}
    for op in block.walk():
        for v in op.operands:
            p.uses_left[v] = p.uses_left.get(v, 0) + 1
        if isinstance(op, graph.AttentionOp):
            (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
            es = op.q.type.element_type.bitwidth // 8
            idx = p.index_of[op]
            counts: list[int] = []
            c = choose_attention(hq, hkv, s, sk, d, es, op.form.data, p.target, p.choices.get(idx, 0), counts)
            p.decisions[idx] = counts[0]
            p.attention[op] = c
            lays = attention_layouts(c, hq, hkv, s, sk, d)
            p.desired.setdefault(op.q, plan_type(op.q.type, lays["q"], "interleaved"))
            if c.form == "materialized":
                for v in (op.k, op.v):
                    p.desired.setdefault(v, plan_type(v.type, lays["kv"], "interleaved"))
            else:  # one window of keys per block: each streaming step multicasts whole blocks
                win = Layout((hkv, sk, d), (hkv, math.ceil(sk / c.keys)), ((0,), (1,), ()), align=(1, c.keys, 1))
                for v in (op.k, op.v):
                    p.desired.setdefault(v, plan_type(v.type, win))


def _plan_attention(p: _Planner, op: graph.AttentionOp, index: int) -> None:
    c = p.attention[op]
    (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
    lays = attention_layouts(c, hq, hkv, s, sk, d)
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
    log_event(
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


@dataclass(frozen=True)
class PlanOpsPass(ModulePass):
    """Lower `graph` to `plan` for one target."""

    name = "plan-ops"
    target: str | None = None  # unset: the module's #ipu.target, else mk2
    finalists: int = 4  # whole-graph plans kept for select-finalist (1: plan greedily, no search)
    beam: int = 4
    candidates: int = 3  # candidate ranks tried per decision point

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from ipu.transforms.plan_search import emit_finalists, search

        if any(o.dialect_name() == "tasm" for o in op.body.block.ops):
            raise DiagnosticException("plan-ops: the module is at the tasm level; plan-ops takes graph-level functions")
        t = set_module_target(op, self.target, self.name)
        for f in [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]:
            if not any(o.dialect_name() == "graph" for o in f.body.walk()):
                continue
            name_values(f)  # checkpoints carry the graph values' stable names
            names = [o.results[0].name_hint or "" for o in named_ops(f)]
            if self.finalists <= 1:
                figures = plan_function(f, t)
                plan.label_graph_values(f, names)
                log_event("planned function", function=f.sym_name.data, target=t.name, **figures)
                continue
            kept = search(f, t, self.finalists, max(self.beam, self.finalists), self.candidates)
            for c in kept:
                plan.label_graph_values(c.function, names)
            emit_finalists(op, f, kept)


__all__ = ["PlanOpsPass", "plan_function", "plan_type"]
