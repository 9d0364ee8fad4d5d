"""Plan quality per example on a target (default mk2): prints, never asserts.

planner time (search, then each finalist mapped and screened, and one selected), finalists
kept, the selected finalist's estimated cycles, the emulated cycles of the compiled package (the
emulator's cycle model: timing is data-independent, so kernels are not executed), and the ratio to the roofline floor of
bench/roofline.py and to its kernel floor (the best grid per matmul under the target's own AMP and
reduction costs). The issue-4 goal is 1.3x of the floor for the MLP and the attention examples;
where the kernel floor alone exceeds 1.3x of the floor, no plan under this cost model meets it.
Usage: python bench/plan_quality.py [--target mk2] [--finalists 4] [examples ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from xdsl.dialects import func

from ipu.codegen.ipuexe import build_package
from ipu.runtime.emulator import Emulator
from ipu.target import load_target
from ipu.transforms.pipeline import compile_passes

sys.path.insert(0, str(Path(__file__).parent))
from common import example_parser, example_path, parse_example  # noqa: E402
from roofline import all_floors  # noqa: E402


def main() -> None:
    ap = example_parser()
    ap.add_argument("--finalists", type=int, default=4)
    a = ap.parse_args()
    t = load_target(a.target)
    print(f"target={t.name} tiles={t.tiles} finalists={a.finalists}")
    for name in a.examples:
        path = example_path(name)
        ref, ctx, module = parse_example(path)
        cf, xf, kf, _ = all_floors(ref, t)
        passes = compile_passes(t.name, {"finalists": a.finalists})
        labels = [label for label, _ in passes]
        selected = labels.index("select_finalist") + 1
        t0 = time.perf_counter()
        kept = 0
        for label, p in passes[:selected]:
            p.apply(ctx, module)
            if label == "plan_ops":
                kept = sum(1 for o in module.body.block.ops if isinstance(o, func.FuncOp))
        planner_s = time.perf_counter() - t0
        f = next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))
        metrics = f.attributes.get("plan.metrics")
        est = metrics.data["estimated_cycles"].value.data if metrics else -1  # type: ignore[union-attr]
        for _, p in passes[selected:]:
            p.apply(ctx, module)
        pkg = build_package(module, t)
        cycles = Emulator(pkg, t, execute=False).run({}).total_cycles
        floor = max(cf, xf)
        print(
            f"example={path.name} planner_s={planner_s:.2f} finalists={kept} estimated_cycles={est} "
            f"emulated_cycles={cycles} floor={floor:.0f} ratio_to_floor={cycles / floor:.2f} "
            f"kernel_floor={max(kf, xf):.0f} ratio_to_kernel_floor={cycles / max(kf, xf):.2f} "
            f"estimate_error={(est - cycles) / cycles:+.1%}"
        )


if __name__ == "__main__":
    main()
