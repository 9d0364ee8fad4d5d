"""`ipu-compile{target=…}`: graph (windows expanded, causal streamed attention striped, inputs rearranged
on the host, identical layers rolled)
-> plan (K finalists) -> tilemap (each finalist mapped, its
tile mapping screened, one selected) -> exchange (scheduled, placed) -> tasm."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.log import log_event, phase
from ipu.transforms.exchange.join_phases import JoinPhasesPass
from ipu.transforms.exchange.place_storage import NoFit, PlaceStoragePass
from ipu.transforms.exchange.schedule_exchange import ScheduleExchangePass
from ipu.transforms.graph.expand_windows import ExpandWindowsPass
from ipu.transforms.graph.fold_attention_scale import FoldAttentionScalePass
from ipu.transforms.graph.fuse_sibling_matmuls import FuseSiblingMatmulsPass
from ipu.transforms.graph.host_layout import HostLayoutPass
from ipu.transforms.graph.roll_layers import RollLayersPass
from ipu.transforms.graph.stripe_causal_attention import StripeCausalAttentionPass
from ipu.transforms.levels import expect_level, module_level
from ipu.transforms.plan.plan_decide import graph_functions, set_reserve
from ipu.transforms.plan.plan_ops import PlanOpsPass
from ipu.transforms.plan.state import RESERVE_ATTR, SPREAD_ATTR
from ipu.transforms.tasm.lower_to_tasm import LowerToTasmPass
from ipu.transforms.tilemap.drop_checkpoints import DropCheckpointsPass
from ipu.transforms.tilemap.map_tiles import MapTilesPass
from ipu.transforms.tilemap.screen_tiles import ScreenTilesPass
from ipu.transforms.tilemap.select_finalist import NO_FINALIST, SelectFinalistPass, finalist_groups

PLAN_OPTIONS = ("finalists", "beam", "candidates")
"""The pipeline options a caller may set: `PlanOpsPass`'s search knobs."""


def compile_passes(
    target: str | None,
    options: dict[str, int] | None = None,
    checkpoints: bool = True,
    link_inputs: str = "",
    partials: str = "",
) -> list[tuple[str, ModulePass]]:
    """The ladder's passes, labelled; `options` (names in `PLAN_OPTIONS`, positive ints) go to plan-ops;
    without `checkpoints`, drop-checkpoints removes the intermediate values' samples after map-tiles.
    Inputs whose names start with `link_inputs` are written by another chip (host-layout leaves them,
    plan-ops lays them out once, spread, as a link delivers them).
    `partials` ("f16": half partials for every AMP op with half operands) goes to plan-ops.
    Every finalist is mapped and screened before select-finalist keeps one. `target` (None: the
    module's `#ipu.target`, else mk2) goes to plan-ops, which records it; the later passes read it."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(PLAN_OPTIONS))
    if unknown:
        raise ValueError(f"unknown pipeline option(s) {', '.join(unknown)} (known: {', '.join(PLAN_OPTIONS)})")
    for k, v in options.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"pipeline option {k} must be a positive integer, got {v!r}")
    drop = [] if checkpoints else [("drop_checkpoints", DropCheckpointsPass())]
    return [
        ("expand_windows", ExpandWindowsPass()),
        ("stripe_causal_attention", StripeCausalAttentionPass(target=target)),
        ("host_layout", HostLayoutPass(skip_prefix=link_inputs)),
        ("fuse_sibling_matmuls", FuseSiblingMatmulsPass()),
        ("fold_attention_scale", FoldAttentionScalePass()),
        ("roll_layers", RollLayersPass()),
        ("plan_ops", PlanOpsPass(target=target, partials=partials, link_inputs=link_inputs, **options)),
        ("map_tiles", MapTilesPass()),
        *drop,
        ("screen_tiles", ScreenTilesPass()),
        ("select_finalist", SelectFinalistPass()),
        ("schedule_exchange", ScheduleExchangePass()),
        ("join_phases", JoinPhasesPass()),
        ("place_storage", PlaceStoragePass()),
        ("lower_to_tasm", LowerToTasmPass()),
    ]


NO_FIT = "model does not fit"
"""How every does-not-fit diagnostic begins (plan-ops, place-storage): the ladder's cue to spread."""


def _run(
    ctx: Context, module: builtin.ModuleOp, passes: list[tuple[str, ModulePass]], seconds: dict[str, float]
) -> None:
    for label, p in passes:
        t0 = time.perf_counter()
        try:
            with phase(label):
                p.apply(ctx, module)
        finally:
            seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - t0


def _adopt(module: builtin.ModuleOp, other: builtin.ModuleOp) -> None:
    """`module` becomes `other` (its functions and attributes), in place."""
    for op in list(module.body.block.ops):
        op.detach()
    for op in list(other.body.block.ops):
        op.detach()
        module.body.block.add_op(op)
    module.attributes.clear()
    module.attributes.update(other.attributes)


def _run_ranked(
    ctx: Context,
    module: builtin.ModuleOp,
    passes: list[tuple[str, ModulePass]],
    seconds: dict[str, float],
) -> None:
    """`_run`; when a pass after select-finalist says the model does not fit (place-storage: no
    free range on some tile), select-finalist again from the finalists as they were mapped and
    screened, keeping the next cheapest, until one fits or none is left (then the first one's
    diagnostic). The snapshot is a clone of the mapped finalists' ops (attributes, weights'
    values among them, are shared, not copied), taken only when some entry has several."""
    labels = [label for label, _ in passes]
    if "select_finalist" not in labels:
        _run(ctx, module, passes, seconds)
        return
    at = labels.index("select_finalist")
    _run(ctx, module, passes[:at], seconds)
    several = any(len(fs) > 1 for fs in finalist_groups(module).values())
    mapped = module.clone() if several else None
    rank, first, attempt = 0, None, module
    while True:
        try:
            _run(ctx, attempt, [(labels[at], replace(passes[at][1], rank=rank))], seconds)  # type: ignore[type-var]
        except DiagnosticException as e:
            if first is not None and str(e).startswith(NO_FINALIST):
                raise first from None
            raise
        try:
            _run(ctx, attempt, passes[at + 1 :], seconds)
        except DiagnosticException as e:
            if mapped is None or not str(e).startswith(NO_FIT):
                raise
            first = first or e
            rank += 1
            log_event("trying the next finalist", rank=rank, reason=str(e))
            attempt = mapped.clone()
            continue
        if attempt is not module:
            _adopt(module, attempt)
        return


def run_ladder(
    ctx: Context,
    module: builtin.ModuleOp,
    passes: list[tuple[str, ModulePass]],
    seconds: dict[str, float] | None = None,
) -> None:
    """Run `passes` (`compile_passes`) on a graph-level `module`, adding each phase's seconds to
    `seconds`. When storage placement fails for the selected finalist, the next cheapest is
    placed instead (`_run_ranked`). When none places, the ladder plans again from the graph
    keeping free what placement missed (`plan.reserve`: the failed buffer's shortfall and the
    free bytes fragmentation stranded beside its largest free range; the plan's peaks count
    bytes, placement needs contiguous ranges). When the model still does not fit and no
    function says how to place its weights (`plan.spread`), the ladder runs once more with them
    spread over the machine (`plan-ops{spread=on}`: grids that hold each weight about once,
    placed apart), which trades some cycles for memory; only if that fails too does the user
    hear "does not fit"."""
    seconds = {} if seconds is None else seconds
    funcs = graph_functions(module)
    graph_module = module.clone() if funcs else None
    try:
        _run_ranked(ctx, module, passes, seconds)
        return
    except DiagnosticException as e:
        if graph_module is None or not str(e).startswith(NO_FIT):
            raise
        first = e
    if isinstance(first, NoFit) and not any(RESERVE_ATTR in f.attributes for f in funcs):
        retry = graph_module.clone()
        reserve = first.shortfall + first.stranded
        log_event("planning again with memory kept free for placement", reserve=reserve, reason=str(first))
        for f in graph_functions(retry):
            set_reserve(f, reserve)
        try:
            _run_ranked(ctx, retry, passes, seconds)
            _adopt(module, retry)
            return
        except DiagnosticException as e:
            if not str(e).startswith(NO_FIT):
                raise
    if any(SPREAD_ATTR in f.attributes for f in funcs):
        raise first
    log_event("spreading weights", reason=str(first))
    for f in graph_functions(graph_module):
        f.attributes[SPREAD_ATTR] = builtin.StringAttr("on")
    try:
        _run_ranked(ctx, graph_module, passes, seconds)
    except DiagnosticException as second:
        raise DiagnosticException(f"{second} (with its weights spread; without: {first})") from None
    _adopt(module, graph_module)


@dataclass(frozen=True)
class IpuCompilePass(ModulePass):
    """The whole lowering ladder for one target, logging each phase's elapsed time; a plan-level
    module (a plan written or edited by hand) starts at map-tiles."""

    name = "ipu-compile"
    target: str | None = None  # unset: the module's #ipu.target, else mk2 (plan-ops sets it)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph", "plan"))
        planned = module_level(op) == "plan"  # a plan written or edited by hand: map it as it is
        passes = compile_passes(self.target)
        if planned:  # the graph-level passes and plan-ops are done: from map-tiles on
            passes = passes[[label for label, _ in passes].index("map_tiles") :]
        run_ladder(ctx, op, passes)
