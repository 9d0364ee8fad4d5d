"""`plan-decide`: choose each graph op's implementation by cost and record it on the op.

Every matmul and attention op gets `plan.choice = #plan.choice<…>` (its grid, and for a matmul
whose rhs is a weight whether the weight stays resident or is fetched); the graph is otherwise
unchanged, so a researcher can stop here, read or edit the choices, and run `plan-materialize`.
A choice already on an op is a pin: it is honoured (every other op is chosen around it) or
refused with a diagnostic naming the op. `plan.layout` pins an op's result layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph
from ipu.target import Target
from ipu.transforms.levels import expect_level
from ipu.transforms.plan.candidates import (
    WEIGHT_FRACTION,
    AttentionChoice,
    GatherChoice,
    choose_attention,
    choose_gather,
    choose_gemm,
    choose_serial_gemm,
)
from ipu.transforms.plan.choices import recorded_choice, resolve_attention, resolve_gather, resolve_matmul
from ipu.transforms.plan.state import CHOICE_ATTR, MatmulContext, MatmulPlan, attention_attr, describe, gather_attr
from ipu.transforms.plan.walk import install, plan_body
from ipu.transforms.target_of import set_module_target


@dataclass
class CostChooser:
    """The cheapest fitting candidate at each decision point, or the `ranks`-th cheapest one
    (op index -> rank, for the search); pinned choices are honoured. Matmuls in `lean` take the
    serial gemm with the smallest working set that fits instead (`plan.search.lean_for_fit`
    picks them, each with a cap on its working set, when the cheapest plan does not fit the tile)."""

    ranks: dict[int, int] = field(default_factory=dict)
    lean: dict[int, int] = field(default_factory=dict)  # matmul index -> working-set cap, bytes per tile
    counts: dict[int, int] = field(default_factory=dict)  # op index -> fitting candidates
    chosen: dict[Operation, object] = field(default_factory=dict)
    pressure: dict[int, int] = field(default_factory=dict)  # matmul index -> live and working bytes per tile
    working: dict[int, int] = field(default_factory=dict)  # matmul index -> its own working set
    weight_share: float = WEIGHT_FRACTION  # tile memory for weights kept resident (the rest are fetched)

    def matmul(self, ctx: MatmulContext, t: Target) -> MatmulPlan:
        if CHOICE_ATTR in ctx.op.attributes:
            return resolve_matmul(ctx, recorded_choice(ctx.op, ctx.index, ("gemm", "gemm_serial")), t)
        cap = self.lean.get(ctx.index)
        lean = None if cap is None else choose_serial_gemm(ctx.m, ctx.k, ctx.n, ctx.esize, t, ctx.reserved, cap)
        mp = MatmulPlan(serial=lean) if lean is not None else self._cheapest(ctx, t, self.ranks.get(ctx.index, 0))
        working = mp.gemm.bytes_per_tile if mp.gemm is not None else mp.serial.bytes_per_tile  # type: ignore[union-attr]
        self.pressure[ctx.index] = ctx.reserved - ctx.resident + working  # every weight is live throughout
        self.working[ctx.index] = working
        self.chosen[ctx.op] = mp.attr()
        return mp

    def _cheapest(self, ctx: MatmulContext, t: Target, rank: int) -> MatmulPlan:
        m, k, n, es = ctx.m, ctx.k, ctx.n, ctx.esize
        counts: list[int] = []
        try:
            c = choose_gemm(
                m, k, n, es, ctx.a_moves, t, ctx.b_moves, 1, ctx.a_current, ctx.reserved, rank, counts, ctx.r_want
            )
        except DiagnosticException as no_fit:
            return _serial(ctx, t, ctx.reserved, no_fit)
        fetch = False
        if ctx.weight and ctx.resident + c.weight_bytes > self.weight_share * t.memory_size:
            # too big to keep replicated: store it once, spread over the grid, and fetch it before
            # use; the distributed home stays resident
            fetch = True
            reserved = ctx.reserved + ctx.home_bytes
            counts.clear()
            try:
                c = choose_gemm(m, k, n, es, ctx.a_moves, t, True, 1, ctx.a_current, reserved, rank, counts, ctx.r_want)
            except DiagnosticException as no_fit:
                return _serial(ctx, t, reserved, no_fit)
        self.counts[ctx.index] = counts[-1] if counts else 1
        return MatmulPlan(gemm=c, fetch=fetch, weight=ctx.weight)

    def attention(self, op: graph.AttentionOp, index: int, t: Target) -> AttentionChoice:
        if CHOICE_ATTR in op.attributes:
            return resolve_attention(op, index, recorded_choice(op, index, ("attention",)), t)
        (hq, s, d), (hkv, sk, _) = op.q.type.get_shape(), op.k.type.get_shape()
        es = op.q.type.element_type.bitwidth // 8
        counts: list[int] = []
        c = choose_attention(
            hq, hkv, s, sk, d, es, op.form.data, t, self.ranks.get(index, 0), counts, op.bias is not None
        )
        self.counts[index] = counts[0]
        self.chosen[op] = attention_attr(c)
        return c

    def gather(
        self, op: graph.GatherOp, index: int, reserved: int, t: Target, current: tuple[int, int] | None = None
    ) -> GatherChoice:
        if CHOICE_ATTR in op.attributes:
            return resolve_gather(op, index, recorded_choice(op, index, ("gather",)), reserved, t)
        (v, d), s = op.table.type.get_shape(), op.result.type.get_shape()[0]
        es = op.table.type.element_type.bitwidth // 8
        counts: list[int] = []
        rank = self.ranks.get(index, 0)
        c = choose_gather(v, d, s, es, t, reserved, None, describe(op, index), rank, counts, current)
        self.counts[index] = counts[0]
        self.chosen[op] = gather_attr(c)
        return c


def _serial(ctx: MatmulContext, t: Target, reserved: int, no_fit: DiagnosticException) -> MatmulPlan:
    c = choose_serial_gemm(ctx.m, ctx.k, ctx.n, ctx.esize, t, reserved)
    if c is None:
        raise no_fit
    return MatmulPlan(serial=c)


def decide_function(
    f: func.FuncOp,
    t: Target,
    ranks: dict[int, int] | None = None,
    materialize: bool = False,
    lean: dict[int, int] | None = None,
    weight_share: float = WEIGHT_FRACTION,
) -> dict[int, int]:
    """Record a `plan.choice` on each of `f`'s decision points (graph ops, in place); returns,
    per op index whose choice was free, how many candidates fit (the search's branching).

    With `materialize`, `f` also becomes the plan those choices give, built in the same walk
    (what `plan-materialize` builds from the recorded choices; the search evaluates many)."""
    chooser = CostChooser(dict(ranks or {}), dict(lean or {}), weight_share=weight_share)
    return run_chooser(f, t, chooser, materialize).counts


def run_chooser(f: func.FuncOp, t: Target, chooser: CostChooser, materialize: bool = False) -> CostChooser:
    """`decide_function` with the caller's chooser, returned for its records."""
    planned = plan_body(f, t, chooser, log=materialize)
    if materialize:
        install(f, planned)
        return chooser
    planned.block.erase(safe_erase=False)
    for op, attr in chooser.chosen.items():
        op.attributes[CHOICE_ATTR] = attr  # type: ignore[assignment]
    return chooser


def graph_functions(module: builtin.ModuleOp) -> list[func.FuncOp]:
    """The module's functions still at the graph level."""
    return [
        f
        for f in module.body.block.ops
        if isinstance(f, func.FuncOp)
        and (
            any(o.dialect_name() == "graph" for o in f.body.walk())
            or any(isinstance(a.type, builtin.TensorType) for a in f.args)  # no ops: its inputs are unread
        )
    ]


@dataclass(frozen=True)
class PlanDecidePass(ModulePass):
    """Choose and record each graph op's implementation (the first half of plan-ops)."""

    name = "plan-decide"
    target: str | None = None  # unset: the module's #ipu.target, else mk2 (recorded on the module)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        t = set_module_target(op, self.target, self.name)
        for f in graph_functions(op):
            decide_function(f, t)


__all__ = ["PlanDecidePass", "decide_function", "graph_functions"]
