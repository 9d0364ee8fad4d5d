"""`ipu-run MODEL`: compile when needed, run on the emulator, check against the reference.

Prints one line per checkpoint, then `numericalTest=PASS|FAIL`, `hostCycles=N` (the host
calls' host-exchange phases: initialize and run), `totalCycles=N` (the device's compute,
exchange and sync) and `estimatedCycles=N` (the compiler's final estimate of the same) with
their ratio; exits non-zero on FAIL. The emulator only sees the package; the reference only sees
the graph IR. `--profile` writes where the cycles and memory went (JSON), `--report` draws it
(HTML, or PNG by extension); `--bisect` names the first operation whose value diverges.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import click
import numpy as np

from ipu import api
from ipu.abi.package import Package
from ipu.abi.package_check import validate_package
from ipu.abi.package_io import read_package, write_package
from ipu.atomic import atomic_path, check_outputs, write_text
from ipu.golden.compare import HALF_PARTIALS_SCALE_ULPS, ToleranceError, check_tolerances
from ipu.golden.evaluator import check_inputs, main_function
from ipu.log import log_event, phase
from ipu.runtime.emulator import DEFAULT_MAX_CYCLES
from ipu.runtime.profile import build_profile
from ipu.target import DEFAULT_TARGET, load_target
from ipu.tools.common import (
    ToolError,
    check_npz,
    flush_output,
    make_context,
    parse_file,
    progress,
    setup_logging,
    user_errors,
)


def _load_inputs(path: str | None, pkg: Package, func_op, seed: int) -> dict[str, np.ndarray]:
    if not path:
        return api.default_inputs(pkg, func_op, seed)
    if not Path(path).is_file():
        raise ToolError(f"no such inputs file: {path}")
    check_npz(path, {b.name: tuple(b.shape) for b in pkg.inputs})
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, RuntimeError, NotImplementedError, zipfile.BadZipFile) as e:
        raise ToolError(f"cannot read inputs {path}: {e}") from None


def _print_checks(checks: list[api.Check]) -> bool:
    ok = True
    for c in checks:
        r = c.result
        ok &= r.passed
        tail = "" if r.passed else f" FAIL {r.reason}"
        if c.kind == "checkpoint":
            print(
                f"checkpoint={c.index} name={c.name} value={c.value} aspect={c.aspect} samples={r.samples} "
                f"maximumAbsoluteError={r.max_abs_error:.6f}" + tail
            )
        else:  # an output against the reference, or against an ONNX model's own oracle
            head = f"output={c.name}" if c.kind == "output" else f"oracleOutput={c.name} oracle={c.source}"
            print(f"{head} samples={r.samples} maximumAbsoluteError={r.max_abs_error:.6f}" + tail)
    return ok


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model", type=click.Path(dir_okay=False))
@click.option(
    "--target", default=None, help=f"machine model (default: the model's or package's own, else {DEFAULT_TARGET})"
)
@click.option("--inputs", "inputs_path", type=click.Path(dir_okay=False), help=".npz keyed by input names")
@click.option("--outputs", "outputs_path", type=click.Path(dir_okay=False), help="write outputs to .npz")
@click.option(
    "--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True, help="seed for Gaussian inputs"
)
@click.option(
    "--reference",
    "reference_path",
    type=click.Path(dir_okay=False),
    help="graph .mlir to check a prebuilt .ipuexe against",
)
@click.option(
    "--precision",
    type=click.Choice(["f16", "f32"]),
    default=None,
    help="compute in this float precision (f16: convert-precision; inputs and outputs stay as they are)",
)
@click.option(
    "--partials",
    type=click.Choice(["f32", "f16"]),
    default=None,
    help="the AMP's partial sums for half-precision matmuls and convolutions (f16: twice the rate, looser check)",
)
@click.option("--package", "package_path", type=click.Path(dir_okay=False), help="also write the package here")
@click.option(
    "--check",
    "check_mode",
    type=click.Choice(["none", "outputs", "sampled", "all"]),
    default="sampled",
    show_default=True,
    help="what to compare: nothing, the outputs, also --samples elements of every op's value, or all of them",
)
@click.option(
    "--no-checkpoints",
    is_flag=True,
    help="compile without the intermediate values' samples (drop-checkpoints: less code); only outputs are checked",
)
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    default=256,
    show_default=True,
    help="checkpoint samples per tensor (--check sampled)",
)
@click.option("--atol", type=float, default=None, help="absolute tolerance (default by dtype: f16 0.03, f32 0.001)")
@click.option("--rtol", type=float, default=None, help="relative tolerance (default by dtype: f16 0.03, f32 0.001)")
@click.option("--checked", is_flag=True, help="stop at the first read of memory never written (slower)")
@click.option(
    "--poison",
    is_flag=True,
    help="start tile memory as 0xFF bytes (NaN) instead of zeros: a result leaning on memory never written shows",
)
@click.option(
    "--max-cycles",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CYCLES,
    show_default=True,
    help="the run's budget of device cycles: a package that would run longer is refused before it starts",
)
@click.option("--bisect", is_flag=True, help="check every element of every op and name the first that diverges")
@click.option(
    "--profile", "profile_path", type=click.Path(dir_okay=False), help="write the cycle/memory profile (JSON)"
)
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="draw the profile: .html or .png")
@click.option(
    "--system",
    default=None,
    help="pipeline the model over the chips of this system (target/systems: sim64x2, pod4, …); see --microbatches",
)
@click.option(
    "--microbatches", type=click.IntRange(min=1), default=None, help="micro-batches a system run pushes through [4]"
)
@click.option(
    "--layers", default=None, help="rolled layers per stage on a system, e.g. 1,7,8,8 (default: the planner's cut)"
)
@click.option(
    "--parallel",
    type=click.Choice(["pipeline", "tensor", "auto"]),
    default="pipeline",
    show_default=True,
    help="system runs: one stage a chip (partition-stages), heads and FFN columns over every chip "
    "(split-tensor-parallel; --tensor-group), or the way the planner estimates fastest for --microbatches",
)
@click.option(
    "--tensor-group",
    type=click.IntRange(min=2),
    default=None,
    help="--parallel tensor: chips a tensor-parallel group (default: every chip); smaller groups are pipelined",
)
@click.option(
    "--backend",
    type=click.Choice(["process", "ray"]),
    default="process",
    show_default=True,
    help="system runs: every chip in this process, or one Ray actor per chip",
)
@click.option("--log-level", default="warning", show_default=True)
@user_errors
def cli(log_level: str, **opts: Any) -> None:
    """Compile (if needed) and emulate MODEL (.mlir: graph IR or JAX's StableHLO; .onnx, .ipuexe or a system's
    .ipupod), checking numerics. StableHLO inputs and outputs (--inputs/--outputs) are keyed arg0, arg1, … / out0,
    out1, …. With --system (or a partitioned module, or a .ipupod) the model runs pipelined over several chips."""
    setup_logging(log_level)
    with progress(f"ipu-run {Path(opts['model']).name}"):
        system_opts = {
            k: opts.pop(k) for k in ("system", "microbatches", "layers", "backend", "parallel", "tensor_group")
        }
        from ipu.tools.system_run import wants_system

        if wants_system(opts["model"], system_opts["system"]):
            from ipu.tools.system_run import run_system_tool

            run_system_tool(**opts, **system_opts)
            return
        if (
            system_opts["microbatches"]
            or system_opts["layers"]
            or system_opts["backend"] != "process"
            or system_opts["parallel"] != "pipeline"
            or system_opts["tensor_group"]
        ):
            raise ToolError(
                "--microbatches, --layers, --parallel, --tensor-group and --backend apply to a system run "
                "(--system NAME)"
            )
        _run(**opts)


def _run(
    model: str,
    target: str | None,
    inputs_path: str | None,
    outputs_path: str | None,
    seed: int,
    reference_path: str | None,
    precision: str | None,
    partials: str | None,
    package_path: str | None,
    check_mode: str,
    no_checkpoints: bool,
    samples: int,
    atol: float | None,
    rtol: float | None,
    checked: bool,
    poison: bool,
    max_cycles: int,
    bisect: bool,
    profile_path: str | None,
    report_path: str | None,
) -> None:
    """The tool's body, options as `cli` parsed them."""
    if report_path and not report_path.endswith((".html", ".png")):
        raise ToolError(f"--report {report_path}: the name must end in .html or .png")
    if not Path(model).is_file():
        raise ToolError(f"no such file: {model}")
    try:
        check_tolerances(atol, rtol)
    except ToleranceError as e:
        raise ToolError(str(e)) from None
    check_outputs(
        {"--outputs": outputs_path, "--package": package_path, "--profile": profile_path, "--report": report_path},
        [p for p in (model, inputs_path, reference_path) if p],
    )
    if no_checkpoints and (bisect or model.endswith(".ipuexe")):
        raise ToolError("--no-checkpoints applies when compiling, and --bisect needs the checkpoints")
    source: str | None = model
    compiled: api.Compiled | None = None
    if model.endswith(".ipuexe"):
        if precision or partials:
            raise ToolError("--precision and --partials apply when compiling; a .ipuexe package is already compiled")
        with phase("read_package"):
            pkg = read_package(model)
        tg = load_target(target or pkg.target)
        validate_package(pkg, tg)
        reference, source = None, reference_path
        if reference_path:
            reference = main_function(parse_file(make_context(), reference_path))
    else:
        try:
            compiled = api.compile(
                model, target, precision=precision, checkpoints=not no_checkpoints, partials=partials or ""
            )
        except api.ApiError as e:
            raise ToolError(str(e)) from None
        pkg, reference, tg = compiled.package, compiled.reference, compiled.target
        if reference_path:
            reference, source = main_function(parse_file(make_context(), reference_path)), reference_path
    inputs = _load_inputs(inputs_path, pkg, reference, seed)
    if reference is not None:  # index inputs checked against their tables' rows, whatever --check says
        inputs = check_inputs(reference, inputs)
    if bisect:
        check_mode = "all"
    try:
        report = api.run(
            compiled if compiled is not None and check_mode != "none" and not reference_path else pkg,
            inputs,
            reference=reference if check_mode != "none" else None,
            target=tg,
            samples=None if check_mode == "all" else samples,
            atol=atol,
            rtol=rtol,
            checkpoints=check_mode in ("sampled", "all"),
            checked=checked,
            poison=poison,
            max_cycles=max_cycles,
        )
    except api.ApiError as e:
        raise ToolError(str(e)) from None
    if package_path:  # only once the run got through: a failed run leaves no package behind
        write_package(pkg, package_path)
        log_event("application package written", path=package_path, tiles=pkg.tiles)
    result = report.result
    for rec in result.profile:
        if rec.get("kind") == "exchange":
            log_event("emulated exchange phase", **{k: v for k, v in rec.items() if k != "kind"})
        elif rec.get("kind") in ("host_write", "host_read"):
            log_event("emulated host step", **rec)
    if outputs_path:
        with atomic_path(outputs_path, "--outputs") as tmp, open(tmp, "wb") as f:
            np.savez(f, **api.host_outputs(reference, result.outputs))  # at an ONNX model's declared dtypes
    ok = True
    if report.checks:
        ok = _print_checks(report.checks)
        print(
            f"diagnosticCheckpoints={len(pkg.checkpoints)} check={check_mode} "
            f"sampleLimit={'all' if check_mode == 'all' else samples} "
            f"numericalTest={'PASS' if ok else 'FAIL'}"
            + (
                f" partials=f16 scaleUlps={HALF_PARTIALS_SCALE_ULPS:g} (the AMP summed in half: a looser check)"
                if api.half_partials(pkg) and atol is None
                else ""
            )
        )
    elif check_mode == "none":
        print("numericalTest=SKIPPED (--check none)")
    else:
        print("numericalTest=SKIPPED (no reference: pass --reference model.mlir)")
    locations = api.op_locations(reference, source) if reference is not None else {}
    if bisect and reference is not None:
        bad = api.first_divergence(report.checks)
        if bad is None:
            print("firstDivergence=none")
        else:
            where = locations.get(bad.value, "")
            print(
                f"firstDivergence {bad.kind}={bad.name} value={bad.value} aspect={bad.aspect}"
                + (f" location={where}" if where else "")
                + f" reason={bad.result.reason}"
            )
            if where:
                print(f"  {_source_line(where)}")
    if profile_path or report_path:
        prof = build_profile(pkg, tg, result, locations)
        if profile_path:
            write_text(profile_path, json.dumps(prof, indent=1), "--profile")
        if report_path:
            from ipu.runtime import report as rep

            draw = rep.render_png if report_path.endswith(".png") else rep.render_html
            draw(prof, report_path)  # atomic
    exch = sum(r["cycles"] for r in result.profile if r.get("kind") == "exchange")
    print(f"package={model} target={tg.name} tiles={pkg.tiles} exchangeCycles={exch}")
    print(f"hostCycles={result.host_cycles}")
    print(f"totalCycles={result.total_cycles}")
    est = pkg.metrics.get("estimated_cycles")
    if est:
        print(f"estimatedCycles={est} estimatedOverEmulated={est / max(result.total_cycles, 1):.4f}")
    if not ok:
        sys.exit(1)


def _source_line(location: str) -> str:
    path, _, line = location.rpartition(":")
    try:
        return Path(path).read_text().splitlines()[int(line) - 1].strip()
    except (OSError, ValueError, IndexError):
        return location


def main() -> None:
    try:
        cli()
    finally:  # what is still buffered goes out now, where a closed pipe can end the run quietly
        flush_output()


if __name__ == "__main__":
    main()
