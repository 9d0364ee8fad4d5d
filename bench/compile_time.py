"""Compile time per pipeline phase for each example on a target (default mk2): prints, never asserts.

Each pass of `ipu-compile` and the package build, as `ipu.compile` records them (median of
--repeat runs, each on a fresh parse; `parse` is the rest: parsing, verification, the reference's
copy). The goal (issue 17) is the whole mk2 compile of the transformer block in under 10 s here.
Usage: python bench/compile_time.py [--target mk2] [--repeat 1] [examples ...]
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from common import example_parser, example_path  # bench/ is the script's directory

import ipu
from ipu.dialects.layout import conversion_transfers
from ipu.target import load_target


def time_once(path: Path, target: str) -> dict[str, float]:
    """Seconds per phase of one compile of `path` (`ipu.compile`'s own record, parsing being the
    rest), with the in-process conversion memo cleared (the numba cache on disk stays warm)."""
    conversion_transfers.cache_clear()
    t0 = time.perf_counter()
    c = ipu.compile(path, target)
    total = time.perf_counter() - t0
    return {"parse": total - sum(c.phase_seconds.values()), **c.phase_seconds}


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
