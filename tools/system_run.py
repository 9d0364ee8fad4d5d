"""`ipu-run --system NAME MODEL` (or a partitioned module, or a `.ipupod`): a model pipelined
over the chips of a system, emulated, checked, and its pipeline figures printed.

Prints one line per failing check (all of them with --log-level info), then per stage its chip,
busy cycles per micro-batch, busy and idle cycles over the run and the planner's estimate; then
the pipeline's total cycles, link cycles, the bubble against (p - 1) / (m + p - 1), samples per
second at the chip's clock, and `numericalTest=PASS|FAIL`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.utils.exceptions import DiagnosticException

from ipu import api, systems
from ipu.abi.package import PackageError
from ipu.abi.pod import is_pod_file, read_pod, write_pod
from ipu.atomic import atomic_path, check_outputs
from ipu.golden.compare import ToleranceError, check_tolerances
from ipu.log import log_event
from ipu.runtime.emulator import EmulatorError
from ipu.runtime.system import run_pod
from ipu.tools.common import ToolError, check_npz


def wants_system(model: str, system: str | None) -> bool:
    """A system run: --system given, a .ipupod, or a partitioned module (one with system.pipeline)."""
    if system or model.endswith(".ipupod") or is_pod_file(model):
        return True
    if not model.endswith(".mlir") or not Path(model).is_file():
        return False
    try:
        with open(model, encoding="utf-8", errors="replace") as f:
            return any("system.pipeline" in line for line in f)
    except OSError:
        return False


def _load_inputs(path: str | None, pod) -> dict[str, np.ndarray] | None:
    """The model's inputs from an .npz (checked from its headers against the stages that read
    them), or None."""
    if not path:
        return None
    if not Path(path).is_file():
        raise ToolError(f"no such inputs file: {path}")
    want = {}
    for name, routes in pod.inputs.items():
        r = routes[0]
        b = next(b for b in pod.stages[r.stage].package.inputs if b.name == r.binding)
        want[name] = tuple(b.shape)
    check_npz(path, want)
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError) as e:
        raise ToolError(f"cannot read inputs {path}: {e}") from None


def run_system_tool(**opts: Any) -> None:
    """The system run's body (`ipu-run`'s options by name; those a system run does not take are refused)."""
    model, system, layers, backend = opts["model"], opts["system"], opts["layers"], opts["backend"]
    inputs_path, outputs_path, package_path = opts["inputs_path"], opts["outputs_path"], opts["package_path"]
    atol, rtol, check_mode, precision = opts["atol"], opts["rtol"], opts["check_mode"], opts["precision"]
    microbatches, poison, max_cycles = opts["microbatches"], opts["poison"], opts["max_cycles"]
    if not Path(model).is_file():
        raise ToolError(f"no such file: {model}")
    unsupported = {
        "--target": opts["target"],
        "--reference": opts["reference_path"],
        "--bisect": opts["bisect"],
        "--profile": opts["profile_path"],
        "--report": opts["report_path"],
        "--checked": opts["checked"],
        "--partials": opts["partials"],
    }
    given = [k for k, v in unsupported.items() if v]
    if given:
        raise ToolError(f"{', '.join(given)}: not available for a system run yet (the chip is the system's)")
    try:
        check_tolerances(atol, rtol)
    except ToleranceError as e:
        raise ToolError(str(e)) from None
    check_outputs({"--outputs": outputs_path, "--package": package_path}, [p for p in (model, inputs_path) if p])
    pod_file = model.endswith(".ipupod") or is_pod_file(model)
    lowered = None if pod_file else _lowered_pod(model)
    if pod_file or lowered is not None:
        if system or layers or precision or opts["tensor_group"]:
            raise ToolError(
                "--system, --layers, --tensor-group and --precision apply when compiling; this system is compiled"
            )
        try:
            pod = lowered or read_pod(model)
        except PackageError as e:
            raise ToolError(str(e)) from None
        m = microbatches or pod.microbatches
        x = _load_inputs(inputs_path, pod)
        if x is None:
            raise ToolError("a .ipupod carries no reference to draw inputs from: give --inputs x.npz")
        try:
            result = run_pod(pod, [x] * m, backend=backend, poison=poison, max_cycles=max_cycles)
        except EmulatorError as e:
            raise ToolError(str(e)) from None
        _write_outputs(outputs_path, result.outputs[0], None)
        print("numericalTest=SKIPPED (a .ipupod has no reference: run the model itself to check it)")
        _print_timing(pod, result, None)
        return
    try:
        compiled = systems.compile_system(
            model,
            system,
            microbatches=microbatches,
            layers=layers,
            precision=precision,
            checkpoints=not opts["no_checkpoints"],
            parallel=opts["parallel"],
            tensor_group=opts["tensor_group"],
        )
    except api.ApiError as e:
        raise ToolError(str(e)) from None
    _print_candidates(compiled)
    m = compiled.pod.microbatches
    x = _load_inputs(inputs_path, compiled.pod)
    try:
        report = systems.run_system(
            compiled,
            [x] * m if x is not None else None,
            backend=backend,
            seed=opts["seed"],
            samples=None if check_mode == "all" else opts["samples"],
            atol=atol,
            rtol=rtol,
            checkpoints=check_mode in ("sampled", "all"),
            checks=check_mode != "none",
        )
    except (api.ApiError, EmulatorError) as e:
        raise ToolError(str(e)) from None
    if package_path:
        write_pod(compiled.pod, package_path)
        log_event("system package written", path=package_path, stages=len(compiled.pod.stages))
    _write_outputs(outputs_path, report.result.outputs[0], compiled.reference)
    ok = True
    if report.checks:
        for c in report.checks:
            ok &= c.result.passed
            if not c.result.passed:
                print(f"{c.kind}={c.name} FAIL {c.result.reason}")
            else:
                log_event("checked", kind=c.kind, name=c.name, max_abs_error=c.result.max_abs_error)
        print(f"checks={len(report.checks)} microbatches={m} numericalTest={'PASS' if ok else 'FAIL'}")
    else:
        print("numericalTest=SKIPPED (--check none)")
    _print_timing(compiled.pod, report.result, compiled)
    if not ok:
        sys.exit(1)


def _lowered_pod(model: str):
    """The system package of a lowered system module (a pipeline over nested tasm modules, as
    `ipu-translate m.ipupod --from-ipuexe` writes it), or None for any other .mlir."""
    if not model.endswith(".mlir"):
        return None
    from xdsl.dialects import builtin

    from ipu.dialects.system import pipeline_of
    from ipu.system_ir import module_pod
    from ipu.tools.common import make_context, parse_file

    module = parse_file(make_context(), model)
    pipe = pipeline_of(module)
    if pipe is None or not pipe.stages or not isinstance(pipe.stages[0].function(), builtin.ModuleOp):
        return None
    try:
        return module_pod(module)
    except DiagnosticException as e:
        raise ToolError(str(e)) from None


def _write_outputs(path: str | None, outputs: dict[str, np.ndarray], reference) -> None:
    if path:
        with atomic_path(path, "--outputs") as tmp, open(tmp, "wb") as f:
            np.savez(f, **api.host_outputs(reference, outputs))  # micro-batch 0's


def _print_candidates(compiled) -> None:
    """`--parallel auto`: each way it weighed, its estimate for the run's micro-batches, and the one taken."""
    if not compiled.candidates:
        return
    best = systems.fastest(compiled.candidates)
    for c in compiled.candidates:
        est = f"estimatedCycles={c.estimated_cycles}" if c.estimated_cycles is not None else f'refused="{c.why}"'
        print(f"parallelCandidate={c.label} {est}{' chosen' if c is best else ''}")


def _print_timing(pod, result, compiled) -> None:
    for st, t in zip(pod.stages, result.stages, strict=True):
        e = compiled.partition_estimate(st.index) if compiled is not None else None
        est = f" partitionEstimate={e}" if e is not None else ""
        print(
            f"stage={st.index} chip={st.chip} function={st.function} busyPerMicrobatch={t.busy_per_microbatch} "
            f"busy={t.busy} idle={t.idle} hostCycles={t.host_cycles}{est}"
        )
    for j, (cycles, bound, schedule) in enumerate(result.collectives):
        c = pod.collectives[j]
        print(
            f"collective={j} kind={c.kind} chips={','.join(map(str, c.chips))} bytes={c.nbytes} cycles={cycles} "
            f"lowerBound={bound} overBound={cycles / max(bound, 1):.3f} schedule={schedule}"
        )
    if not result.pipelined:
        for chip, busy in sorted(result.chip_busy.items()):
            print(f"chip={chip} busy={busy} idle={result.total_cycles - busy}")
    ideal = "" if result.ideal_bubble is None else f" idealBubble={result.ideal_bubble:.4f}"
    groups = f" pipelinedGroups={result.groups}" if result.groups > 1 else ""
    print(
        f"system={pod.system} {'stages' if result.pipelined else 'segmentStages'}={len(pod.stages)}{groups} "
        f"microbatches={result.microbatches} linkCycles={sum(result.link_cycles)} totalCycles={result.total_cycles} "
        f"bubble={result.bubble:.4f}{ideal} samplesPerSecond={result.samples_per_second:.1f}"
    )


__all__ = ["run_system_tool", "wants_system"]
