"""`ipu-run MODEL`: compile when needed, run on the emulator, check against the reference.

Prints one line per checkpoint, then `numericalTest=PASS|FAIL`, `hostCycles=N` (the host
calls' host-exchange phases: initialize and run) and `totalCycles=N` (the device's compute,
exchange and sync); exits non-zero on FAIL. The emulator only sees the package; the reference only sees the graph IR.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import numpy as np
from xdsl.dialects import builtin

from ipu.codegen.ipuexe import build_package
from ipu.golden.compare import compare
from ipu.golden.evaluator import evaluate, main_function, make_inputs
from ipu.runtime.emulator import Emulator
from ipu.runtime.package import Package, read_package, validate_package, write_package
from ipu.target import DEFAULT_TARGET, Target, load_target
from ipu.tools.common import ToolError, make_context, parse_file, setup_logging, user_errors
from ipu.transforms.log import log_event, phase
from ipu.transforms.pipeline import IpuCompilePass


def _graph_function(module: builtin.ModuleOp):
    if "tasm.target" in module.attributes:
        return None
    return main_function(module)


def _compile(path: str, target: Target) -> tuple[Package, object]:
    ctx = make_context()
    module = parse_file(ctx, path)
    reference = _graph_function(parse_file(make_context(), path))
    if "tasm.target" not in module.attributes:
        IpuCompilePass(target=target.name).apply(ctx, module)
    with phase("build_package"):
        pkg = build_package(module, target)
    return pkg, reference


def _load_inputs(path: str | None, pkg: Package, func_op, seed: int) -> dict[str, np.ndarray]:
    if path:
        if not Path(path).is_file():
            raise ToolError(f"no such inputs file: {path}")
        try:
            with np.load(path, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        except (OSError, ValueError) as e:
            raise ToolError(f"cannot read inputs {path}: {e}") from None
    if func_op is not None:
        return make_inputs(func_op, seed)
    rng = np.random.default_rng(seed)
    from ipu.runtime.isa import NUMPY_DTYPE

    return {b.name: rng.standard_normal(b.shape, dtype=np.float32).astype(NUMPY_DTYPE[b.dtype]) for b in pkg.inputs}


def _reference(gold, operation: int, aspect: str):
    """The golden value a checkpoint compares with: an op's value, an auxiliary view, or a key
    window `scores@<first key>` of an attention's scores."""
    if aspect == "value":
        return gold.values.get(operation)
    if aspect.startswith("scores@"):
        full = gold.aux.get((operation, "scores"))
        return None if full is None else (int(aspect.split("@")[1]), full)
    return gold.aux.get((operation, aspect))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--target", default=None, help=f"machine model (default {DEFAULT_TARGET}, or the package's)")
@click.option("--inputs", "inputs_path", type=click.Path(dir_okay=False), help=".npz keyed by input names")
@click.option("--outputs", "outputs_path", type=click.Path(dir_okay=False), help="write outputs to .npz")
@click.option("--seed", default=0, show_default=True, help="seed for Gaussian inputs")
@click.option(
    "--reference",
    "reference_path",
    type=click.Path(dir_okay=False),
    help="graph .mlir to check a prebuilt .ipuexe against",
)
@click.option("--package", "package_path", type=click.Path(dir_okay=False), help="also write the package here")
@click.option("--samples", default=256, show_default=True, help="checkpoint samples per tensor")
@click.option("--atol", default=0.03, show_default=True)
@click.option("--rtol", default=0.03, show_default=True)
@click.option("--log-level", default="warning", show_default=True)
@user_errors
def cli(
    model: str,
    target: str | None,
    inputs_path: str | None,
    outputs_path: str | None,
    seed: int,
    reference_path: str | None,
    package_path: str | None,
    samples: int,
    atol: float,
    rtol: float,
    log_level: str,
) -> None:
    """Compile (if needed) and emulate MODEL (.mlir or .ipuexe), checking numerics."""
    setup_logging(log_level)
    if not Path(model).is_file():
        raise ToolError(f"no such file: {model}")
    if model.endswith(".ipuexe"):
        with phase("read_package"):
            pkg = read_package(model)
        tg = load_target(target or pkg.target)
        reference = main_function(parse_file(make_context(), reference_path)) if reference_path else None
    else:
        tg = load_target(target or DEFAULT_TARGET)
        pkg, reference = _compile(model, tg)
        if reference_path:
            reference = main_function(parse_file(make_context(), reference_path))
    validate_package(pkg, tg)
    if package_path:
        write_package(pkg, package_path)
        log_event("application package written", path=package_path, tiles=pkg.tiles)
    inputs = _load_inputs(inputs_path, pkg, reference, seed)
    with phase("emulate"):
        emu = Emulator(pkg, tg)
        result = emu.run(inputs)
    for rec in result.profile:
        if rec.get("kind") == "exchange":
            log_event("emulated exchange phase", **{k: v for k, v in rec.items() if k != "kind"})
        elif rec.get("kind") in ("host_write", "host_read"):
            log_event("emulated host step", **rec)
    if outputs_path:
        tmp = Path(outputs_path).with_name(Path(outputs_path).name + ".partial.npz")
        np.savez(tmp, **result.outputs)
        tmp.replace(outputs_path)
    ok = True
    if reference is not None:
        with phase("reference"):
            gold = evaluate(reference, {k: v for k, v in inputs.items()})
        for c in pkg.checkpoints:
            ref = _reference(gold, c.operation, c.aspect)
            if ref is None:
                raise ToolError(
                    f"checkpoint {c.index} names operation {c.operation} ({c.aspect}), absent from the reference"
                )
            obs = result.checkpoints[c.index]
            if isinstance(ref, tuple):  # a key window of the scores
                k0, full = ref
                ref = full[:, :, k0 : k0 + obs.shape[2]]
            r = compare(obs, ref, samples, atol, rtol)
            ok &= r.passed
            print(
                f"checkpoint={c.index} operation={c.operation} name={c.name} aspect={c.aspect} samples={r.samples} "
                f"maximumAbsoluteError={r.max_abs_error:.6f}" + ("" if r.passed else f" FAIL {r.reason}")
            )
        for i, b in enumerate(pkg.outputs):
            r = compare(result.outputs[b.name], gold.outputs[i], gold.outputs[i].size, atol, rtol)
            ok &= r.passed
            print(
                f"output={b.name} samples={r.samples} maximumAbsoluteError={r.max_abs_error:.6f}"
                + ("" if r.passed else f" FAIL {r.reason}")
            )
        print(
            f"diagnosticCheckpoints={len(pkg.checkpoints)} sampleLimit={samples} "
            f"numericalTest={'PASS' if ok else 'FAIL'}"
        )
    else:
        print("numericalTest=SKIPPED (no reference: pass --reference model.mlir)")
    exch = sum(r["cycles"] for r in result.profile if r.get("kind") == "exchange")
    print(f"package={model} target={tg.name} tiles={pkg.tiles} exchangeCycles={exch}")
    print(f"hostCycles={result.host_cycles}")
    print(f"totalCycles={result.total_cycles}")
    if not ok:
        sys.exit(1)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
