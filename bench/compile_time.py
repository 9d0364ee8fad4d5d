"""Compile time per pipeline phase for each example on a target (default mk2): prints, never asserts.

Each pass of `ipu-compile` and the package build, as `ipu.compile` records them (median of
--repeat runs, each in a fresh process; `parse` is the rest: importing the compiler, parsing or
importing the model, verification, the reference's copy). An example is a name under examples/
or a model's path (an .mlir or .onnx file). The goals (issue 36): the mk2 compile of the
transformer block under 4 s, of GPT-2 small under 8 s.

`--chain 1000,10000,100000` instead sweeps the op count (issue 33: compile time linear in it):
chains of N elementwise ops on an 8 x 16 f32 tensor, compiled for --target (sim16 is the
issue's), printing seconds and microseconds per op. Two kinds: `periodic` (relu, neg, tanh
repeating: roll-layers rolls it into one loop once it is 1,024 ops or more) and `aperiodic`
(seeded random picks of five ops: nothing to roll; past about 1,600 ops its code cannot fit a
tile, which is refused, and the sweep times the refusal).
Usage: python bench/compile_time.py [--target mk2] [--repeat 1] [--precision f16] [examples ...]
       python bench/compile_time.py --target sim16 --chain 1000,10000,100000
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import example_parser, example_path  # bench/ is the script's directory
from xdsl.utils.exceptions import DiagnosticException

import ipu
from ipu.target import load_target

_ONE_COMPILE = """
import json, sys, time
t0 = time.perf_counter()
import ipu
c = ipu.compile(sys.argv[1], target=sys.argv[2], precision=sys.argv[3] or None)
total = time.perf_counter() - t0
print(json.dumps({"parse": total - sum(c.phase_seconds.values()), **c.phase_seconds}))
"""


_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The compiles' environment: bytecode cached as an installed package's is. Where the variable
is set (this project's sandboxes set it), every process would compile the compiler's 100 modules
from source again, 0.3 s a compile that no user with a cache pays."""


def warm_bytecode() -> None:
    """Write the compiler's bytecode cache once (a process importing all of it)."""
    subprocess.run([sys.executable, "-c", "import ipu.api, ipu.tools.ipu_run"], check=True, env=_ENV)


def time_once(path: Path, target: str, precision: str = "") -> dict[str, float]:
    """Seconds per phase of one compile of `path` in a fresh Python process, as a user's
    `ipu-opt` or `ipu-run` pays them (`ipu.compile`'s own record; `parse` is the rest: importing
    the compiler, parsing or importing the model, verification, the reference's copy). A fresh
    process each time: in one process the plan families' memos are warm after the first compile
    (GPT-2 small's plan-ops took 1.9 s warm against 4.3 s cold). The numba cache on disk stays warm,
    and so does Python's bytecode cache (`_ENV`)."""
    out = subprocess.run(
        [sys.executable, "-c", _ONE_COMPILE, str(path), target, precision],
        capture_output=True,
        text=True,
        check=False,
        env=_ENV,
    )
    if out.returncode != 0:
        raise SystemExit(f"compile of {path} failed:\n{out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def chain_text(n: int, kind: str) -> str:
    """A graph function of `n` elementwise ops in a chain (see the module doc)."""
    rnd = random.Random(1)
    ops = ["graph.relu", "graph.neg", "graph.tanh", "graph.abs", "graph.sigmoid"]
    lines, prev = ["func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {"], "%x"
    for i in range(n):
        op = ops[i % 3] if kind == "periodic" else rnd.choice(ops)
        lines.append(f"  %v{i} = {op} {prev} : tensor<8x16xf32> -> tensor<8x16xf32>")
        prev = f"%v{i}"
    return "\n".join([*lines, f"  func.return {prev} : tensor<8x16xf32>", "}"]) + "\n"


def sweep_chains(counts: list[int], target: str, repeat: int) -> None:
    print(f"target={target} repeat={repeat} (median seconds of ipu.compile from the text, parse included)")
    for kind in ("periodic", "aperiodic"):
        for n in counts:
            text = chain_text(n, kind)
            runs, outcome = [], "compiled"
            for _ in range(repeat):
                t0 = time.perf_counter()
                try:
                    ipu.compile(text, target)
                except DiagnosticException as e:
                    outcome = "refused: " + str(e).split(":", 1)[0]
                runs.append(time.perf_counter() - t0)
            sec = statistics.median(runs)
            print(f"chain={kind} ops={n} seconds={sec:.2f} us_per_op={1e6 * sec / n:.0f} outcome={outcome}")


def main() -> None:
    ap = example_parser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--chain", help="sweep chains of these op counts (comma-separated) instead of the examples")
    ap.add_argument("--precision", choices=("f16", "f32"), help="convert the model first (as ipu-run --precision)")
    a = ap.parse_args()
    if a.chain:
        sweep_chains([int(x) for x in a.chain.split(",")], a.target, a.repeat)
        return
    t = load_target(a.target)
    precision = a.precision or "as given"
    print(f"target={t.name} tiles={t.tiles} repeat={a.repeat} precision={precision} (median seconds per phase)")
    warm_bytecode()
    for name in a.examples:
        path = example_path(name)
        runs = [time_once(path, t.name, a.precision or "") for _ in range(a.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        phases = " ".join(f"{k}={v:.2f}" for k, v in med.items())
        print(f"example={path.name} {phases} total={sum(med.values()):.2f}")


if __name__ == "__main__":
    main()
