"""The Python API for systems of chips: a model pipelined over several chips.

    import ipu.systems as systems
    compiled = systems.compile_system("model.onnx", "sim64x4", microbatches=8)
    report = systems.run_system(compiled, backend="process")   # or "ray": one actor per chip
    report.passed, report.result.total_cycles, report.result.bubble

`compile_system` reads the model as `ipu.compile` does, fuses sibling projections
(`fuse-sibling-matmuls`, as the single-chip ladder does before rolling) and rolls its layers, cuts it into one stage
per chip (`partition-stages`), compiles every stage with the unchanged single-chip ladder for the
system's chip and joins the packages in a `Pod`. `run_system` pushes micro-batches through the
pipeline on the system emulator and checks it three ways: each stage's checkpoints and outputs
against that stage's graph function evaluated on the inputs the stage received; each value
crossing chips that is a value of the unpartitioned model against that model's reference, by
name; and the model's outputs against the unpartitioned reference and the oracle (onnxruntime
or jax).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import builtin, func
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.link_rows import link_rows
from ipu.abi.package_check import validate_package
from ipu.abi.pod import Pod, PodStage, PodTransfer, validate_pod
from ipu.api import ApiError, Check, check, check_oracle, context, least_precise_dtype, load_model
from ipu.codegen.ipuexe import build_package
from ipu.dialects.ipu import system_attr_of
from ipu.dialects.system import StageOp, pipeline_of
from ipu.golden.compare import compare_at
from ipu.golden.evaluator import check_inputs, evaluate, make_inputs
from ipu.log import log_event, phase
from ipu.runtime.emulator import RunResult
from ipu.runtime.system import SystemResult, run_pod
from ipu.system_ir import read_routes
from ipu.target import TargetError
from ipu.target.system import System, available_systems, load_system
from ipu.transforms.graph.expand_windows import ExpandWindowsPass
from ipu.transforms.graph.fold_attention_scale import FoldAttentionScalePass
from ipu.transforms.graph.fuse_sibling_matmuls import FuseSiblingMatmulsPass
from ipu.transforms.graph.roll_layers import RollLayersPass
from ipu.transforms.pipeline import compile_passes
from ipu.transforms.system.stages import BOUNDARY, boundary_value
from ipu.transforms.system.tensor_parallel import SplitTensorParallelPass
from ipu.version import __version__

PARALLEL = ("pipeline", "tensor", "auto")
"""How `compile_system` spreads a model over a system's chips (`auto`: the way whose estimate is
fastest for the run's micro-batches, `choose_parallel`)."""


@dataclass(frozen=True)
class ParallelCandidate:
    """One way to spread a model over a system, as `choose_parallel` priced it: `parallel` and
    `tensor_group` as `compile_system` takes them, the planner's estimated cycles of the run's
    micro-batches (None: it cannot be, `why`)."""

    parallel: str
    tensor_group: int | None
    estimated_cycles: int | None
    why: str = ""

    @property
    def label(self) -> str:
        return self.parallel if self.tensor_group is None else f"{self.parallel}{self.tensor_group}"


@dataclass
class CompiledSystem:
    """A model compiled for a system: the pod, the partitioned graph module (the stages before
    lowering), each stage's graph function, the unpartitioned reference and the oracle."""

    pod: Pod
    system: System
    partitioned: builtin.ModuleOp
    stage_references: list[func.FuncOp]
    reference: func.FuncOp | None  # None: compiled from a partitioned module (no unpartitioned model)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    oracle: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None
    candidates: list[ParallelCandidate] = field(default_factory=list)  # `parallel="auto"`: what it weighed

    def stage_function(self, index: int) -> func.FuncOp:
        """Stage `index`'s graph function in the partitioned module."""
        name = self.pod.stages[index].function
        return next(
            f for f in self.partitioned.body.block.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name
        )

    def partition_estimate(self, index: int) -> int | None:
        """The partitioner's estimate of stage `index`'s cycles (None for a module partitioned by hand)."""
        a = self.stage_function(index).attributes.get("ipu.estimated_cycles")
        return a.value.data if isinstance(a, builtin.IntegerAttr) else None


def _stage_module(f: func.FuncOp) -> builtin.ModuleOp:
    g = f.clone()
    g.sym_name = builtin.StringAttr("main")
    return builtin.ModuleOp([g])


def compile_system(
    source: Any,
    system: str | System | None = None,
    *,
    microbatches: int | None = None,
    layers: str | None = None,
    precision: str | None = None,
    options: dict[str, int] | None = None,
    checkpoints: bool = True,
    parallel: str = "pipeline",
    refine: bool = True,
    tensor_group: int | None = None,
) -> CompiledSystem:
    """Compile `source` for `system` (a name of `target/systems/`): with `parallel="pipeline"`
    partitioned into one pipeline stage per chip (`layers`, e.g. "1,7,8,8", pins each stage's
    rolled layers), with `parallel="tensor"` its heads and FFN columns split over every chip
    (`split-tensor-parallel`, segments between all-reduces), or with `tensor_group` over groups
    of that many chips, the groups pipelined; `microbatches` per run, 4 unless
    given; each stage compiled for the system's chip. With `refine` (and no `layers` pin) a
    pipeline's cut is placed once more on the planner's unit prices scaled by how far each stage's
    emulated cycles came from its estimate, and the faster partition kept. A module already
    partitioned (`system.pipeline`, e.g. edited by hand) is compiled as it is, for its
    `#ipu.system`. Raises ApiError / DiagnosticException as `ipu.compile` does; a stage that does
    not fit names its stage."""
    t0 = time.perf_counter()
    loaded = load_model(source, precision=precision)
    load_seconds = time.perf_counter() - t0
    module, ctx = loaded.module, context()
    pipe = pipeline_of(module)
    have = system_attr_of(module)
    name = system.name if isinstance(system, System) else system
    if have is not None and name is not None and have.system_name.data != name:
        raise ApiError(f"the module is partitioned for system {have.system_name.data}, not {name}")
    name = name or (have.system_name.data if have is not None else None)
    if name is None:
        raise ApiError("name the system to compile for (--system NAME; known: " + ", ".join(available_systems()) + ")")
    if not isinstance(system, System):
        try:
            system = load_system(name)
        except TargetError as e:
            raise ApiError(str(e)) from None
    try:
        passes = compile_passes(system.chip.name, options, checkpoints, link_inputs=BOUNDARY)
    except ValueError as e:
        raise ApiError(str(e)) from None
    if loaded.reference is None:
        raise ApiError("compile_system takes a graph-level model, not a lowered module")
    seconds: dict[str, float] = {"load": load_seconds}
    reference = loaded.reference if pipe is None else None
    if parallel not in PARALLEL:
        raise ApiError(f"parallel '{parallel}': one of {', '.join(PARALLEL)}")
    if tensor_group is not None and parallel != "tensor":
        raise ApiError("--tensor-group sizes a tensor-parallel split: give --parallel tensor")
    if layers is not None and parallel != "pipeline":
        raise ApiError(
            "--layers pins a pipeline's cut: give --parallel pipeline (a tensor-parallel split is cut by segments)"
        )
    candidates: list[ParallelCandidate] = []
    if pipe is None:
        t0 = time.perf_counter()
        with phase("partition_stages"):
            ExpandWindowsPass().apply(ctx, module)
            if parallel == "auto":  # the fastest way's copy, split as its candidate was priced
                candidates, split = _priced_ways(module, system, microbatches or 4)
                best = fastest(candidates)
                parallel, tensor_group, module = best.parallel, best.tensor_group, split.module
                cut, rolled = split.cut, split.rolled if refine else None
            elif parallel == "tensor":
                SplitTensorParallelPass(system=system.name, microbatches=microbatches or 4, group=tensor_group).apply(
                    ctx, module
                )
            else:
                _roll(module)
                rolled = module.clone() if refine and layers is None else None
                cut = _partition(module, system, microbatches or 4, layers, None)
        seconds["partition_stages"] = time.perf_counter() - t0
    elif layers is not None or tensor_group is not None or parallel == "auto":
        raise ApiError(
            "--layers, --tensor-group and --parallel auto apply when partitioning; this module is partitioned already"
        )
    elif microbatches is not None:
        pipe.microbatches = builtin.IntegerAttr(microbatches, 64)
    module.verify()
    pod, refs = build_pod(module, system, passes, seconds)
    if pipe is None and parallel == "pipeline" and refine and layers is None:
        module, pod, refs = _refined(module, pod, refs, rolled, cut, system, microbatches or 4, passes, seconds)
    return CompiledSystem(pod, system, module, refs, reference, seconds, _LazyOracle(loaded), candidates)


def _roll(module: builtin.ModuleOp) -> None:
    """Fuse `module`'s sibling projections, fold its attention scales and roll its layers, in
    place, as the single-chip ladder does before the pipeline's partitioner takes it."""
    ctx = context()
    FuseSiblingMatmulsPass().apply(ctx, module)
    FoldAttentionScalePass().apply(ctx, module)
    RollLayersPass().apply(ctx, module)


def fastest(candidates: list[ParallelCandidate]) -> ParallelCandidate:
    """The candidate with the fewest estimated cycles (the first of equals)."""
    return min((c for c in candidates if c.estimated_cycles is not None), key=lambda c: c.estimated_cycles)


def choose_parallel(module: builtin.ModuleOp, system: System, microbatches: int) -> list[ParallelCandidate]:
    """Every way to spread the graph `module` over `system` (a pipeline, and tensor-parallel
    groups of each size dividing the chips, pipelined), each priced as its pass cuts it on a copy
    of the module: its stages' (or groups') planner estimates a micro-batch, run through the
    pipeline's timeline for `microbatches` (a pipeline favours many micro-batches, a tensor split
    few). A way that cannot be (does not fit, too few segments) carries its reason. Raises
    ApiError when none can. `fastest` picks one."""
    return _priced_ways(module, system, microbatches)[0]


@dataclass
class _Split:
    """A way's partitioned copy of the model: the module, its cut and, for a pipeline, the
    module rolled before the cut (what `_refined` cuts again)."""

    module: builtin.ModuleOp
    cut: Any
    rolled: builtin.ModuleOp | None


def _priced_ways(module: builtin.ModuleOp, system: System, microbatches: int) -> tuple[list[ParallelCandidate], _Split]:
    """`choose_parallel`'s candidates and the fastest one's partitioned copy (`compile_system`
    goes on from it rather than cutting the model again)."""
    from ipu.dialects.ipu import SYSTEM_ATTR, SystemAttr
    from ipu.runtime.system import pipeline_timeline
    from ipu.transforms.system.tensor_parallel import split_function

    ways: list[tuple[str, int | None]] = [("pipeline", None)]
    ways += [("tensor", g) for g in range(system.chips, 1, -1) if system.chips % g == 0]
    out: list[ParallelCandidate] = []
    splits: dict[int, _Split] = {}  # by candidate index: each priced way's partitioned copy
    for parallel, group in ways:
        trial, rolled = module.clone(), None
        try:
            if parallel == "pipeline":
                _roll(trial)
                rolled = trial.clone()
                cut = _partition(trial, system, microbatches, None, None)
            else:
                trial.attributes[SYSTEM_ATTR] = SystemAttr(system.name)
                fs = [f for f in trial.body.block.ops if isinstance(f, func.FuncOp)]
                cut = split_function(trial, fs[0], system, microbatches, group, price=True)
        except DiagnosticException as e:
            out.append(ParallelCandidate(parallel, group, None, str(e)))
            continue
        assert cut is not None
        splits[len(out)] = _Split(trial, cut, rolled)
        out.append(ParallelCandidate(parallel, group, pipeline_timeline(cut.cycles, {}, system, microbatches)[0]))
    log_event(
        "parallel candidates",
        system=system.name,
        microbatches=microbatches,
        **{c.label: c.estimated_cycles if c.estimated_cycles is not None else "no" for c in out},
    )
    if not splits:
        raise ApiError(f"no way to spread the model over {system.name}: " + "; ".join(c.why for c in out))
    best = fastest(out)
    return out, splits[next(i for i, c in enumerate(out) if c is best)]


def _partition(module: builtin.ModuleOp, system: System, microbatches: int, layers: str | None, costs):
    """`partition-stages` on the module's one function, returning the cut (unit costs given or priced)."""
    from ipu.dialects.ipu import SYSTEM_ATTR, SystemAttr
    from ipu.transforms.system.partition_stages import partition_function

    fs = [f for f in module.body.block.ops if isinstance(f, func.FuncOp)]
    if len(fs) != 1:
        raise ApiError(f"compile_system: expects one graph function, the module has {len(fs)}")
    module.attributes[SYSTEM_ATTR] = SystemAttr(system.name)
    return partition_function(module, fs[0], system, microbatches, layers, costs)


def stage_cycles(pod: Pod, system: System) -> list[int]:
    """Each stage's device cycles a micro-batch, counted by the emulator from its package."""
    from ipu.runtime.emulator import Emulator

    return [
        Emulator(st.package, system.chip, execute=False, max_cycles=None).count_device_cycles() for st in pod.stages
    ]


def _refined(module, pod, refs, rolled, cut, system, microbatches, passes, seconds):
    """One round of calibration: each unit's price scaled by how far its stage's emulated cycles
    are from the planner's estimate of it, the cut placed again on those prices, and the new
    partition kept if its slowest stage (emulated) is faster."""
    t0 = time.perf_counter()
    actual = stage_cycles(pod, system)
    scale = [a / max(1, e) for a, e in zip(actual, cut.cycles, strict=True)]
    costs = [round(c * scale[s]) for c, s in zip(cut.unit_costs, cut.stage_of, strict=True)]
    from ipu.transforms.system.cuts import best_cut

    again = best_cut(costs, cut.unit_weights, cut.links, len(actual), cut.capacity, cut.pins)
    if again is None or again.stage_of == cut.stage_of:
        seconds["refine"] = time.perf_counter() - t0
        return module, pod, refs
    module2 = rolled
    _partition(module2, system, microbatches, None, costs)
    module2.verify()
    pod2, refs2 = build_pod(module2, system, passes, seconds)
    actual2 = stage_cycles(pod2, system)
    seconds["refine"] = time.perf_counter() - t0
    log_event("refined stage cut", before=",".join(map(str, actual)), after=",".join(map(str, actual2)))
    if max(actual2) < max(actual):
        return module2, pod2, refs2
    return module, pod, refs


class _LazyOracle:
    """The model's oracle, built when first run (an onnxruntime session of a large model holds its
    weights again: not while the stages compile)."""

    def __init__(self, loaded: Any) -> None:
        self.loaded, self.made = loaded, None
        self.backend = "oracle"

    def __call__(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self.made is None:
            self.made = self.loaded.oracle()
            self.backend = getattr(self.made, "backend", "oracle")
        if self.made is None:
            raise ApiError("the model has no oracle (neither an ONNX file nor a Python function)")
        return self.made(inputs)

    def exists(self) -> bool:
        return self.loaded.onnx_model is not None or self.loaded.jax_oracle is not None


def build_pod(
    module: builtin.ModuleOp, system: System, passes, seconds: dict[str, float]
) -> tuple[Pod, list[func.FuncOp]]:
    """Compile every stage of the partitioned `module` for the system's chip and join the
    packages as its `system.pipeline` says."""
    pipe = pipeline_of(module)
    if pipe is None:
        raise ApiError("the module has no system.pipeline: partition it first (partition-stages)")
    ctx = context()
    stages: list[PodStage] = []
    refs: list[func.FuncOp] = []
    index: dict[StageOp, int] = {}
    for i, st in enumerate(pipe.stages):
        f = st.function()
        assert f is not None  # the verifier checked it
        index[st] = i
        m = _stage_module(f)
        refs.append(m.body.block.first_op.clone())  # type: ignore[union-attr]
        for label, p in passes:
            t0 = time.perf_counter()
            with phase(f"stage{i}.{label}"):
                try:
                    p.apply(ctx, m)
                except DiagnosticException as e:
                    raise DiagnosticException(
                        f"stage {i} (@{f.sym_name.data}, chip {st.chip.value.data}): {e}"
                    ) from None
            seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - t0
        t0 = time.perf_counter()
        pkg = build_package(m, system.chip)
        validate_package(pkg, system.chip)
        seconds["package"] = seconds.get("package", 0.0) + time.perf_counter() - t0
        stages.append(PodStage(i, st.chip.value.data, f.sym_name.data, pkg))
    pod = Pod(system.name, pipe.microbatches.value.data, stages, compiler_version=__version__)
    try:
        read_routes(pipe, index, lambda i: _names(refs[i], "ipu.inputs"), lambda i: _names(refs[i], "ipu.outputs"), pod)
    except DiagnosticException as e:
        raise ApiError(str(e)) from None
    pod.transfers = [_with_rows(pod, t, system) for t in pod.transfers]
    validate_pod(pod)
    return pod, refs


def _with_rows(pod: Pod, t: PodTransfer, system: System) -> PodTransfer:
    """`t` with its link rows, when it crosses chips: which bytes of which tile go where."""
    if t.src_chip == t.dst_chip:
        return t
    src = next(b for b in pod.stages[t.src.stage].package.outputs if b.name == t.src.binding)
    dst = next(b for b in pod.stages[t.dst.stage].package.inputs if b.name == t.dst.binding)
    rows = link_rows(src, dst, system.chip.memory_base)
    return PodTransfer(t.src, t.dst, t.src_chip, t.dst_chip, t.nbytes, rows)


def _names(f: func.FuncOp, key: str) -> list[str]:
    a = f.attributes.get(key)
    return [s.data for s in a.data] if isinstance(a, builtin.ArrayAttr) else []  # type: ignore[union-attr]


@dataclass
class SystemReport:
    """A system run and its checks (see the module docstring)."""

    result: SystemResult
    inputs: list[dict[str, np.ndarray]]
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool | None:
        return all(c.result.passed for c in self.checks) if self.checks else None


def run_system(
    compiled: CompiledSystem,
    inputs: list[dict[str, np.ndarray]] | None = None,
    *,
    backend: str = "process",
    seed: int = 0,
    system: System | None = None,
    samples: int | None = 256,
    atol: float | None = None,
    rtol: float | None = None,
    checkpoints: bool = True,
    checks: bool = True,
) -> SystemReport:
    """Run `compiled` (one input dict per micro-batch; default: the pod's micro-batch count of
    seeded inputs, micro-batch i with seed `seed + i`) on `backend`, then check it (unless not
    `checks`); `system` overrides the link figures (a sensitivity sweep)."""
    ref = compiled.reference
    batches = inputs or [_draw_inputs(compiled, seed + i) for i in range(compiled.pod.microbatches)]
    if ref is not None:
        batches = [check_inputs(ref, x) for x in batches]
    with phase("emulate_system"):
        result = run_pod(compiled.pod, batches, backend=backend, system=system)
    if not checks:
        return SystemReport(result, batches)
    found: list[Check] = []
    floor = least_precise_dtype(ref if ref is not None else compiled.stage_references[0])
    for b, x in enumerate(batches):
        for s, stage in enumerate(compiled.pod.stages):
            got = check(
                stage.package,
                result.stage_results[b][s],
                compiled.stage_references[s],
                result.stage_inputs[b][s],
                samples,
                atol,
                rtol,
                checkpoints,
            )
            found += [_tagged(c, f"mb{b}.stage{s}") for c in got]
        if ref is None:
            continue
        with phase("reference"):
            gold = evaluate(ref, x)
        for t in compiled.pod.transfers:
            want = gold.values.get(boundary_value(t.src.binding))
            obs = result.stage_results[b][t.src.stage].outputs[t.src.binding]
            if want is None or want.shape != obs.shape:  # a layer's carried value mid-repeat, or a shard
                continue
            cmp = compare_at(obs, want, want.size, atol, rtol, floor)
            found.append(Check("boundary", f"mb{b}.{t.src.binding}", t.src.stage, t.src.binding, "value", cmp))
        for i, (name, obs) in enumerate(result.outputs[b].items()):
            want = gold.outputs[i]
            found.append(
                Check("output", f"mb{b}.{name}", i, "", "value", compare_at(obs, want, want.size, atol, rtol, floor))
            )
        if compiled.oracle is not None and (not isinstance(compiled.oracle, _LazyOracle) or compiled.oracle.exists()):
            got = check_oracle(compiled.oracle, RunResult(result.outputs[b], {}, 0), x, atol, rtol, floor)
            found += [_tagged(c, f"mb{b}") for c in got]
    return SystemReport(result, batches, found)


def _draw_inputs(compiled: CompiledSystem, seed: int) -> dict[str, np.ndarray]:
    """Seeded inputs from the model's signature (or, for a module partitioned by hand, from the
    signatures of the stages reading each input)."""
    if compiled.reference is not None:
        return make_inputs(compiled.reference, seed)
    x = {}
    for name, routes in compiled.pod.inputs.items():
        r = routes[0]
        x[name] = make_inputs(compiled.stage_references[r.stage], seed)[r.binding]
    return x


def _tagged(c: Check, where: str) -> Check:
    c.name = f"{where}.{c.name}"
    return c


def load_system_source(path: str | Path) -> builtin.ModuleOp:
    """A partitioned module (`system.pipeline` and its stage functions) read from text."""
    from ipu.ir_text import parse_path

    return parse_path(context(), Path(path))


__all__ = [
    "CompiledSystem",
    "ParallelCandidate",
    "SystemReport",
    "build_pod",
    "choose_parallel",
    "compile_system",
    "fastest",
    "run_system",
]
