"""Compile time per pipeline phase for each example on a target (default mk2): prints, never asserts.

Each pass of `ipu-compile` is timed on its own (median of --repeat runs, each on a fresh parse),
then the package build. The issue-5 goal is the whole mk2 compile of the transformer block in
under 30 s on this machine.
Usage: python bench/compile_time.py [--target mk2] [--repeat 1] [examples ...]
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from common import example_parser, example_path  # bench/ is the script's directory

from ipu.codegen.ipuexe import build_package
from ipu.dialects.layout import conversion_transfers
from ipu.target import load_target
from ipu.tools.common import make_context, parse_file
from ipu.transforms.pipeline import compile_passes


def time_once(path: Path, target: str) -> dict[str, float]:
    """Seconds per phase of one compile of `path`, with the in-process conversion memo cleared
    (the numba cache on disk stays warm)."""
    conversion_transfers.cache_clear()
    out: dict[str, float] = {}
    ctx = make_context()
    t0 = time.perf_counter()
    module = parse_file(ctx, path)
    out["parse"] = time.perf_counter() - t0
    for name, p in compile_passes(target):
        t0 = time.perf_counter()
        p.apply(ctx, module)
        out[name] = time.perf_counter() - t0
    t0 = time.perf_counter()
    build_package(module, load_target(target))
    out["package"] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = example_parser()
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    t = load_target(a.target)
    print(f"target={t.name} tiles={t.tiles} repeat={a.repeat} (median seconds per phase)")
    for name in a.examples:
        path = example_path(name)
        runs = [time_once(path, t.name) for _ in range(a.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        phases = " ".join(f"{k}={v:.2f}" for k, v in med.items())
        print(f"example={path.name} {phases} total={sum(med.values()):.2f}")


if __name__ == "__main__":
    main()
