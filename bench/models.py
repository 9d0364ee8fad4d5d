"""Real models at full scale: `python bench/models.py [--target mk2] [--model gpt2_lm:128 ...]`.

Each model is a `torch.onnx.export` of a `transformers` model built from its published config
with random weights (`test/models/export_models.py --scale full`; exporting needs the `[models]`
extra, or `--exporter-python` naming an interpreter that has it; exports are cached in
`--cache`). It is compiled for the target, emulated, and its outputs checked against
onnxruntime (the oracle, all elements) and the graph's golden evaluator (sampled checkpoints).
The float32 export is computed in `--precision` (default f16: fp16 storage and arithmetic, fp32
matmul accumulation, as the IPU runs such models; GPT-2 small's float32 weights alone would take
a third of the machine's SRAM). Printed per model: PASS/FAIL, compile seconds per phase, emulation seconds, emulated and
estimated cycles, and memory per tile by class.

Besides the sampled checks (each value against the golden fp16 evaluation within fp16
tolerances), the outputs' largest error against the float32 export is given as a fraction of
the outputs' scale, and a classifier's top-1 agreement. A deep network with batch norms, at
random initialization, amplifies a perturbation layer by layer (its input-output Jacobian grows
exponentially with depth, Yang et al., "A Mean Field Theory of Batch Normalization", ICLR 2019):
two fp16 evaluations of ResNet-50 that each round every layer correctly drift apart by more than
the per-value tolerance in its deeper stages, so for such a model the checkpoint verdict can
fail while the outputs agree with the export to a small fraction of their scale.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from xdsl.utils.exceptions import DiagnosticException

ROOT = Path(__file__).resolve().parents[1]
EXPORTER = ROOT / "test" / "models" / "export_models.py"
DEFAULT = ("gpt2_lm:128", "gpt2_lm:512", "bert:128")
IMAGE_MODELS = ("resnet50", "mobilenet_v2", "resnet_small", "mobilenet_v2_small")


def export(
    name: str,
    seq: int,
    layers: int | None,
    exporter: str,
    cache: Path,
    python: str,
    width: int | None = None,
    vocab: int | None = None,
    batch: int | None = None,
) -> Path:
    tag = (f"-l{layers}" if layers else "") + (f"-d{width}" if width else "") + (f"-v{vocab}" if vocab else "")
    tag += f"-b{batch}" if batch else ""
    out = cache / f"{name}-s{seq}{tag}"
    path = out / f"{name}.{exporter}.onnx"
    if not path.is_file():
        cmd = [python, str(EXPORTER), "--out", str(out), "--only", name, "--exporter", exporter]
        cmd += ["--scale", "full", "--seq", str(seq)] + (["--layers", str(layers)] if layers else [])
        cmd += (["--width", str(width)] if width else []) + (["--vocab", str(vocab)] if vocab else [])
        cmd += ["--batch", str(batch)] if batch else []
        subprocess.run(cmd, check=True)
    return path


def run(
    path: Path,
    target: str,
    precision: str | None,
    options: dict[str, int],
    checkpoints: bool = True,
    partials: str = "",
) -> dict[str, object]:
    from ipu import api

    t0 = time.perf_counter()
    compiled = api.compile(
        str(path), target, precision=precision, options=options, checkpoints=checkpoints, partials=partials
    )
    compile_s = time.perf_counter() - t0
    inputs = dict(np.load(str(path).removesuffix(".onnx") + ".inputs.npz"))
    t0 = time.perf_counter()
    report = api.run(compiled, inputs)
    run_s = time.perf_counter() - t0
    expected = dict(np.load(str(path).removesuffix(".onnx") + ".expected.npz"))
    worst = max(float(np.max(np.abs(report.result.outputs[k] - v))) for k, v in expected.items())
    scale = max(float(np.max(np.abs(v))) for v in expected.values())
    # a classifier's [batch, classes] logits: does every image get the framework's class?
    logits = [(report.result.outputs[k], v) for k, v in expected.items() if v.ndim == 2]
    top1 = all(np.array_equal(o.argmax(-1), v.argmax(-1)) for o, v in logits) if logits else None
    ok = bool(report.checks) and all(c.result.passed for c in report.checks)
    failed = [c for c in report.checks if not c.result.passed]
    m = compiled.package.metrics
    return {
        "numerics": "PASS" if ok else "FAIL",
        "max_abs_vs_export": worst,
        "vs_export_over_scale": worst / scale if scale else 0.0,
        "top1": top1,
        "checks": f"{len(report.checks) - len(failed)}/{len(report.checks)}"
        + (f" (first failing: {failed[0].name})" if failed else ""),
        "compile_s": compile_s,
        "phases_s": compiled.phase_seconds,
        "emulate_and_check_s": run_s,
        "cycles": report.result.total_cycles,
        "estimated_cycles": m.get("estimated_cycles"),
        "memory": {
            k: m[k]
            for k in ("peak_standard_bytes", "peak_interleaved_bytes", "peak_total_bytes", "code_bytes")
            if k in m
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="mk2")
    ap.add_argument(
        "--model",
        action="append",
        default=[],
        help="NAME:SEQ[:LAYERS] (zoo name); an image model's SEQ is its side and its third field the batch "
        "(resnet50:224:16)",
    )
    ap.add_argument("--exporter", default="dynamo20", choices=("classic17", "dynamo20", "dynamo23"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/ipu-models"))
    ap.add_argument("--exporter-python", default=sys.executable, help="an interpreter with the [models] extra")
    ap.add_argument("--finalists", type=int, default=None, help="plan-ops finalists (1: greedy; default: search)")
    ap.add_argument("--precision", default="f16", choices=("f16", "f32"), help="compute precision (%(default)s)")
    ap.add_argument(
        "--partials", default="f32", choices=("f32", "f16"), help="the AMP's partial sums (%(default)s; f16: 2x rate)"
    )
    ap.add_argument(
        "--no-checkpoints",
        action="store_true",
        help="leave the intermediate values' samples out (drop-checkpoints: less code; outputs still checked)",
    )
    a = ap.parse_args()
    for spec in a.model or DEFAULT:
        name, seq, *depth = spec.split(":")
        images = name in IMAGE_MODELS
        layers = int(depth[0]) if depth and not images else None
        batch = int(depth[0]) if depth and images else (1 if images else None)
        path = export(name, int(seq), layers, a.exporter, a.cache, a.exporter_python, batch=batch)
        try:
            opts = {"finalists": a.finalists} if a.finalists else {}
            r = run(path, a.target, a.precision, opts, not a.no_checkpoints, a.partials)
        except DiagnosticException as e:  # a model that does not fit is a figure, not a crash
            print(f"model={name} seq={seq} layers={layers or 'all'} target={a.target} compiled=no: {e}", flush=True)
            continue
        phases = " ".join(f"{k}={v:.1f}" for k, v in r["phases_s"].items())  # type: ignore[union-attr]
        mem = " ".join(f"{k}={v}" for k, v in r["memory"].items())  # type: ignore[union-attr]
        if images:  # throughput at the target's clock, and the convolutions against the AMP floor
            from ipu.target import load_target

            clock = load_target(a.target).clock_hz
            print(
                f"model={name} side={seq} batch={batch} imagesPerSecond={batch * clock / r['cycles']:.0f} "  # type: ignore[operator]
                f"at {clock / 1e9:.2f} GHz",
                flush=True,
            )
        print(
            f"model={name} seq={seq} layers={layers or 'all'} exporter={a.exporter} target={a.target} "
            f"precision={a.precision} partials={a.partials} checkpoints={'none' if a.no_checkpoints else 'sampled'} "
            f"numericalTest={r['numerics']} "
            f"maxAbsVsExport={r['max_abs_vs_export']:.2e} vsExportOverScale={r['vs_export_over_scale']:.1e} "
            + ("" if r["top1"] is None else f"top1AgreesWithExport={'yes' if r['top1'] else 'no'} ")
            + f"compileSeconds={r['compile_s']:.1f} "
            f"emulateAndCheckSeconds={r['emulate_and_check_s']:.1f} totalCycles={r['cycles']} "
            f"estimatedCycles={r['estimated_cycles']}",
            flush=True,
        )
        print(f"  checks passed: {r['checks']}", flush=True)
        print(f"  phases: {phases}", flush=True)
        print(f"  memory per tile: {mem}", flush=True)


if __name__ == "__main__":
    main()
