"""Roofline figures per example on a target (default mk2): prints, never asserts.

compute floor  = AMP FLOPs / (tiles x fp16->fp32 AMP rate) + vector work / tiles at the
                 target's per-element costs (GeLU/exp/tanh scalar, add-class 16 per cycle,
                 softmax = exp + 3 passes, norms = 4 passes + one rsqrt per row);
exchange floor = per matmul (and per attention product) the 3-D algorithm's lower bound on
                 words a tile must receive, (m n k / tiles)^(2/3) elements, at 4 bytes/cycle;
modelled       = cycles of the compiled program, counted by the emulator's cycle model
                 (data-independent, so no kernel is executed).
Usage: python bench/roofline.py [--target mk2] [examples ...]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from xdsl.ir import Block

from ipu.codegen.ipuexe import build_package
from ipu.dialects import graph as g
from ipu.golden.evaluator import flops, main_function
from ipu.runtime.emulator import Emulator
from ipu.target import Target, load_target
from ipu.tools.common import make_context, parse_file
from ipu.transforms.pipeline import compile_passes

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEFAULT = ["mlp.mlir", "attention_gqa.mlir", "attention_long.mlir", "transformer_block.mlir", "transformer_stack.mlir"]


def _elements(v) -> int:
    return math.prod(g.shape_of(v.type))


def _block_floors(block: Block, t: Target) -> tuple[float, float]:
    """(vector cycles summed over all tiles, exchange elements per tile) of a block."""
    c = t.costs
    per_elem_scalar = c["gelu_per_element"]
    add = 1 / c["add_elements_per_cycle"]
    vec, exch = 0.0, 0.0
    for op in block.ops:
        if isinstance(op, g.RepeatOp):
            v, e = _block_floors(op.body.block, t)
            vec += op.count.value.data * v
            exch += op.count.value.data * e
        elif isinstance(op, g.AddOp | g.SubOp | g.MulOp | g.MaxOp | g.ReluOp):
            vec += _elements(op.results[0]) * add
        elif isinstance(op, g.GeluOp | g.ExpOp | g.TanhOp):
            vec += _elements(op.results[0]) * per_elem_scalar
        elif isinstance(op, g.SoftmaxOp):
            vec += _elements(op.results[0]) * (per_elem_scalar + 3 * add)
        elif isinstance(op, g.LayerNormOp | g.RmsNormOp):
            n = _elements(op.results[0])
            vec += n * 4 * add + n / g.shape_of(op.result.type)[-1] * per_elem_scalar
        elif isinstance(op, g.MatmulOp):
            (m, k), n = g.shape_of(op.lhs.type), g.shape_of(op.result.type)[1]
            exch += (m * n * k / t.tiles) ** (2 / 3)
        elif isinstance(op, g.AttentionOp):
            hq, s, d = g.shape_of(op.q.type)
            sk = g.shape_of(op.k.type)[1]
            frac = 0.5 if op.causal is not None else 1.0
            vec += hq * s * sk * frac * (per_elem_scalar + 3 * add)
            exch += 2 * (hq * s * sk * d * frac / t.tiles) ** (2 / 3)
    return vec, exch


def floors(func_op, t: Target) -> tuple[float, float]:
    """(compute floor, exchange floor) in cycles for one tile."""
    vec, exch_elems = _block_floors(func_op.body.block, t)
    amp = flops(func_op) / (t.tiles * t.rates["amp_f16_f32"])
    esize = 2  # the examples store fp16
    return amp + vec / t.tiles, exch_elems * esize / t.rates["exchange_bytes_per_cycle"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("examples", nargs="*", default=DEFAULT)
    ap.add_argument("--target", default="mk2")
    a = ap.parse_args()
    t = load_target(a.target)
    print(f"target={t.name} tiles={t.tiles} amp_flop_per_cycle={t.rates['amp_f16_f32']}")
    for name in a.examples:
        path = Path(name) if Path(name).exists() else EXAMPLES / name
        ref = main_function(parse_file(make_context(), path))
        cf, xf = floors(ref, t)
        ctx = make_context()
        module = parse_file(ctx, path)
        t0 = time.perf_counter()
        for _, p in compile_passes(t.name):
            p.apply(ctx, module)
        pkg = build_package(module, t)
        compile_s = time.perf_counter() - t0
        res = Emulator(pkg, t, execute=False).run({})
        exch = sum(r["cycles"] for r in res.profile if r["kind"] == "exchange")
        sync = sum(r["cycles"] for r in res.profile if r["kind"] == "sync")
        floor = max(cf, xf)
        print(
            f"example={path.name} compute_floor={cf:.0f} exchange_floor={xf:.0f} modelled={res.total_cycles} "
            f"modelled_exchange={exch} modelled_sync={sync} ratio_to_floor={res.total_cycles / floor:.2f} "
            f"compile_s={compile_s:.1f}"
        )


if __name__ == "__main__":
    main()
