"""Emulator speed and cycle-model agreement per example on a target (default mk2): prints, never asserts.

Each example is compiled once (not timed), then emulated --repeat times, each on a fresh
emulator (loading the package and running it: what `ipu-run` pays after compiling). Prints the
median wall time and its spread, the first run's (what `ipu-run` pays: its tile memory is the
process's first), the process CPU time, the emulated device cycles, the
compiler's final estimate and their ratio, and whether the run matched the reference. Goals
(issue 7): the mk2 transformer block emulates in under 10 s on this machine; estimate and
emulation within 5% of each other. Kernels and copies run on IPU_EMULATOR_THREADS threads (default: the CPUs;
runtime/workers.py).
Usage: python bench/emulator.py [--target mk2] [--repeat 3] [examples ...]
"""

from __future__ import annotations

import statistics
import time

from common import example_parser, example_path  # bench/ is the script's directory

import ipu
from ipu.api import default_inputs
from ipu.runtime.emulator import Emulator
from ipu.runtime.workers import emulator_threads


def main() -> None:
    ap = example_parser(__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"target={args.target} repeat={args.repeat} threads={emulator_threads()}")
    for name in args.examples:
        path = example_path(name)
        t0 = time.perf_counter()
        c = ipu.compile(path, target=args.target)
        compile_s = time.perf_counter() - t0
        x = default_inputs(c.package, c.reference, 0)
        walls, cpus, result = [], [], None
        for _ in range(args.repeat):
            w0, c0 = time.perf_counter(), time.process_time()
            result = Emulator(c.package, c.target).run(x)
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
        assert result is not None
        checks = ipu.check(c.package, result, c.reference, x) if c.reference is not None else []
        passed = all(k.result.passed for k in checks) if checks else None
        est = c.estimated_cycles or 0
        print(
            f"example={path.name} emulate_s={statistics.median(walls):.2f} "
            f"(min {min(walls):.2f} max {max(walls):.2f}) first_s={walls[0]:.2f} cpu_s={statistics.median(cpus):.2f} "
            f"emulated_cycles={result.total_cycles} estimated_cycles={est} "
            f"estimated/emulated={est / max(result.total_cycles, 1):.4f} numerics={'PASS' if passed else passed} "
            f"compile_s={compile_s:.1f}"
        )


if __name__ == "__main__":
    main()
