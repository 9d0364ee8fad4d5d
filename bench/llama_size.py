"""The largest Llama-style model one target holds: `python bench/llama_size.py [--target mk2]`.

Each size is a `transformers` `LlamaForCausalLM` built from a config with random weights (grouped
KV heads, SwiGLU, rotary positions, an untied LM head), exported with `torch.onnx.export`
(`test/models/export_models.py --scale full --width D --layers L`: D // 64 heads of 64, a third
of them KV heads, an FFN of 4 D), compiled in f16 without checkpoints, emulated and checked
against onnxruntime, as `bench/models.py` does. Sizes are tried in the order given (smallest
first, by parameters); the search stops at the first size that does not compile and prints the
diagnostic that says why, with each size's parameters, figures and memory per tile.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from models import export, run  # bench/ is the script's directory
from xdsl.utils.exceptions import DiagnosticException

# from 768x24 on with their weights spread (the ladder retries a model that does not fit that
# way); 960x18 (304.8M) and 1152x12 (307.3M) fit, 768x30 (308.7M) runs out of interleaved memory
DEFAULT_SIZES = ("768x20", "768x24", "768x28", "960x18", "1152x12", "1152x13")


def parameters(width: int, layers: int, vocab: int) -> int:
    """Weights of the Llama config `export_models` builds: per layer q, o (D x D), k, v (D x D/3),
    gate, up, down (D x 4D) and two RMSNorm vectors; the embedding and the untied head; the last norm."""
    kv = (width // 64 // 3) * 64
    per_layer = 2 * width * width + 2 * width * kv + 3 * width * 4 * width + 2 * width
    return layers * per_layer + 2 * vocab * width + width


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="mk2")
    ap.add_argument("--size", action="append", default=[], help="WIDTHxLAYERS, smallest first (default: %(default)s)")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=32000, help="vocabulary (Llama's 32000)")
    ap.add_argument("--exporter", default="dynamo20", choices=("classic17", "dynamo20", "dynamo23"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/ipu-models"))
    ap.add_argument("--exporter-python", default=sys.executable, help="an interpreter with the [models] extra")
    ap.add_argument("--finalists", type=int, default=1, help="plan-ops finalists (default 1: greedy)")
    a = ap.parse_args()
    largest = None
    for spec in a.size or DEFAULT_SIZES:
        try:
            width, layers = (int(x) for x in spec.lower().split("x"))
        except ValueError:
            ap.error(f"--size {spec!r}: WIDTHxLAYERS, e.g. 768x12")
        if width <= 0 or width % 192 or layers <= 0:
            ap.error(f"--size {spec!r}: the width is a positive multiple of 192 and the layers positive")
        params = parameters(width, layers, a.vocab)
        head = f"size={width}x{layers} parameters={params / 1e6:.1f}M seq={a.seq} target={a.target}"
        try:
            path = export("llama", a.seq, layers, a.exporter, a.cache, a.exporter_python, width, a.vocab)
        except subprocess.CalledProcessError as e:
            sys.exit(f"{head}: the export failed (exit {e.returncode}); --exporter-python needs the [models] extra")
        try:
            r = run(path, a.target, "f16", {"finalists": a.finalists}, False)
        except DiagnosticException as e:
            print(f"{head} compiled=no: {e}", flush=True)
            break
        mem = " ".join(f"{k}={v}" for k, v in r["memory"].items())  # type: ignore[union-attr]
        print(
            f"{head} numericalTest={r['numerics']} maxAbsVsExport={r['max_abs_vs_export']:.2e} "
            f"compileSeconds={r['compile_s']:.1f} emulateAndCheckSeconds={r['emulate_and_check_s']:.1f} "
            f"totalCycles={r['cycles']} {mem}",
            flush=True,
        )
        if r["numerics"] == "PASS":
            largest = spec
    print(f"largest size that runs and passes: {largest or 'none'}", flush=True)


if __name__ == "__main__":
    main()
