"""Figures for the foundation pipeline on a target (default mk2): prints, never asserts.

compile time per phase, IR size per level, exchange horizon vs endpoint lower bound per phase,
modelled cycles vs the compute roofline floor, package size, emulator time, numerical check.
Usage: python bench/foundation.py [examples/mlp.mlir] [--target mk2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.package_io import read_package, write_package
from ipu.api import parse
from ipu.codegen.ipuexe import build_package
from ipu.context import make_context
from ipu.dialects import graph
from ipu.golden.compare import compare
from ipu.golden.evaluator import evaluate, main_function, make_inputs
from ipu.runtime.emulator import Emulator
from ipu.target import load_target
from ipu.transforms.pipeline import compile_passes, run_ladder


def flops_of(func_op) -> int:
    total = 0
    for op in func_op.body.walk():
        if isinstance(op, graph.MatmulOp):
            (m, k), (_, n) = op.lhs.type.get_shape(), op.rhs.type.get_shape()
            total += 2 * m * k * n
    return total


def ir_sizes(path: Path, target: str) -> dict[str, int]:
    """Printed IR bytes after each pass of one compile of `path`, pass by pass (the ladder's
    retries aside: a model that needs one has sizes up to the pass that refused it)."""
    ctx = make_context()
    module = parse(path)
    sizes = {"graph": len(str(module))}
    for label, p in compile_passes(target):
        try:
            p.apply(ctx, module)
        except DiagnosticException:
            break
        sizes[label] = len(str(module))
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default=str(Path(__file__).parents[1] / "examples" / "mlp.mlir"))
    ap.add_argument("--target", default="mk2")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    tg = load_target(a.target)
    times: dict[str, list[float]] = {}
    sizes = ir_sizes(Path(a.model), tg.name)
    for _ in range(a.repeat):
        ctx = make_context()
        module = parse(Path(a.model))
        seconds: dict[str, float] = {}
        try:
            run_ladder(ctx, module, compile_passes(tg.name), seconds)  # as the tools compile
        except DiagnosticException as e:
            raise SystemExit(f"{a.model}: {e}") from None
        for label, sec in seconds.items():
            times.setdefault(label, []).append(sec)
        t0 = time.perf_counter()
        pkg = build_package(module, tg)
        times.setdefault("build_package", []).append(time.perf_counter() - t0)
    print(f"model={a.model} target={tg.name} tiles={tg.tiles} repeats={a.repeat}")
    for k, v in times.items():
        print(f"compile phase={k} median_ms={statistics.median(v) * 1000:.1f}")
    for k, v in sizes.items():
        print(f"ir level={k} bytes={v}")
    for ph in pkg.phases:
        print(
            f"exchange phase={ph.index} families={len(ph.transfers)} lower_bound={ph.lower_bound} "
            f"horizon={ph.horizon} ratio={ph.horizon / max(ph.lower_bound, 1):.3f}"
        )
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.ipuexe"
        write_package(pkg, path)
        print(f"package bytes={path.stat().st_size}")
        pkg = read_package(path)
    ref = main_function(parse(Path(a.model)))
    inputs = make_inputs(ref, 0)
    emu_t = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        res = Emulator(pkg, tg).run(inputs)
        emu_t.append(time.perf_counter() - t0)
    gold = evaluate(ref, inputs)
    ok = all(compare(res.outputs[b.name], gold.outputs[i]).passed for i, b in enumerate(pkg.outputs))
    floor = flops_of(ref) / (tg.tiles * tg.rates["amp_f16_f32"])
    exch = sum(r["cycles"] for r in res.profile if r["kind"] == "exchange")
    print(f"emulator median_s={statistics.median(emu_t):.2f} numerical={'PASS' if ok else 'FAIL'}")
    print(
        f"cycles modelled={res.total_cycles} exchange={exch} amp_floor={floor:.0f} "
        f"ratio_to_amp_floor={res.total_cycles / max(floor, 1):.2f}"
    )


if __name__ == "__main__":
    main()
