"""Roofline figures per example on a target (default mk2): prints, never asserts.

AMP floor      = the products' FLOPs (matmuls, and attention's two products, halved when causal)
                 / (tiles x fp16->fp32 AMP rate): issue 17's yardstick, printed with the modelled
                 cycles over it and the plan floor over it;
compute floor  = AMP FLOPs / (tiles x fp16->fp32 AMP rate) + vector work / tiles at the
                 target's per-element costs (every elementwise, softmax and norm op at its kernel's own cycle
                 model, less the model's fixed cost: the PopLibs-derived per-element rates);
exchange floor = per matmul (and per attention product) the 3-D algorithm's lower bound on
                 words a tile must receive, (m n k / tiles)^(2/3) elements, at 4 bytes/cycle;
kernel floor   = the compute floor with every matmul priced at its best tile grid under the
                 target's own kernel model (AMP call, 16-column groups, 16-deep slices, and the
                 fp32 partial reduction a K split needs): no plan this compiler can build
                 computes below it, whatever its exchange;
plan floor     = the kernel floor with each matmul at its best grid counting the exchange no such
                 grid avoids (BSP: exchange adds to compute): the K split's fp32 partials
                 received for the reduction, and the lhs block received when the lhs is computed
                 on the device (weights resident, memory unbounded): a floor for any plan of
                 per-tile blocked products, the rotating (compute-shift) kind included, since
                 rotation moves the same bytes into each tile;
modelled       = cycles of the compiled program, counted by the emulator's cycle model
                 (data-independent, so no kernel is executed).
Usage: python bench/roofline.py [--target mk2] [--precision f16] [examples or model files ...]
(`--precision f16` computes a float32 model, such as a GPT-2 export, in half precision first.)
"""

from __future__ import annotations

import math
import time

from common import example_parser, example_path, parse_example  # bench/ is the script's directory
from xdsl.dialects import func
from xdsl.ir import Block

from ipu.abi.kernels import KERNELS
from ipu.codegen.ipuexe import build_package
from ipu.dialects import graph as g
from ipu.golden.evaluator import flops
from ipu.runtime.emulator import Emulator
from ipu.target import Target, load_target
from ipu.transforms.graph.convert_precision import ConvertPrecisionPass
from ipu.transforms.pipeline import compile_passes


def _elements(v) -> int:
    return math.prod(g.shape_of(v.type))


def _grids(m: int, k: int, n: int, t: Target):
    """Every distinct grid rows x cols x K-split of an [m,k]x[k,n] GEMM on the target's tiles, as
    (split, per-tile m, k, n): a split or row count that leaves the block as a smaller one does
    is skipped (the same block, only more partials or idle tiles)."""
    for s in range(1, t.tiles + 1):
        kt = -(-k // s)
        if s > 1 and -(-k // (s - 1)) == kt:
            continue
        for r in range(1, t.tiles // s + 1):
            mt = -(-m // r)
            if r > 1 and -(-m // (r - 1)) == mt:
                continue
            yield s, mt, kt, -(-n // (t.tiles // (s * r)))


def _grid_kernel_cycles(t: Target, s: int, mt: int, kt: int, nt: int) -> int:
    """One grid's per-tile kernel cycles: the AMP call, and with a K split of `s` the reduction
    of its fp32 partials (m_t*n_t/s elements per tile at the reduction rate)."""
    return t.amp_matmul_cycles(mt, kt, nt) + (t.reduce_cycles(s, -(-mt * nt // s)) if s > 1 else 0)


def best_matmul_kernel_cycles(m: int, k: int, n: int, t: Target) -> int:
    """Fewest per-tile cycles of an [m,k]x[k,n] GEMM over all grids rows x cols x K-split that
    fit the target, under the target's AMP model plus the K split's partial reduction."""
    return min(_grid_kernel_cycles(t, *grid) for grid in _grids(m, k, n, t))


def best_matmul_plan_cycles(m: int, k: int, n: int, t: Target, lhs_computed: bool, esize: int = 2) -> int:
    """Fewest per-tile cycles of an [m,k]x[k,n] GEMM in any plan of blocked per-tile products,
    exchange included (BSP: a tile computes or exchanges, never both). Per grid: its kernel
    cycles; with a K split of S, the receive of (S-1)/S of the tile's m_t*n_t fp32 partials (a
    reduce-scatter can receive no less); and, when the lhs is computed on the device (not a host
    input or a view of one, which the host writes in any layout), the receive of the tile's
    [m_t, k_t] block less the even share of the lhs a tile produces itself. Weights count as
    resident in the grid's layout (no fetch) and memory as unbounded, so this is a floor:
    receiving at the exchange rate is cheaper than recomputing a block's producer."""
    rate = t.rates["exchange_bytes_per_cycle"]
    local = -(-m * k // t.tiles) if lhs_computed else None

    def cycles(s: int, mt: int, kt: int, nt: int) -> int:
        partials = (s - 1) * mt * nt * 4 // (s * rate)
        lhs = max(mt * kt - local, 0) * esize // rate if local is not None else 0
        return _grid_kernel_cycles(t, s, mt, kt, nt) + partials + lhs

    return min(cycles(*grid) for grid in _grids(m, k, n, t))


_VIEWS = (g.ReshapeOp, g.TransposeOp, g.SplitHeadsOp, g.MergeHeadsOp, g.SliceOp, g.PadOp, g.ConcatOp)


def _host_values(block: Block) -> set:
    """The values of a block the host can write in any layout: its arguments (a function's
    inputs), weights, and data-movement views of those (no device compute between)."""
    free = set(block.args) if isinstance(block.parent_op(), func.FuncOp) else set()
    for op in block.ops:
        if isinstance(op, g.ParameterOp | g.IterationSliceOp) or (
            isinstance(op, _VIEWS) and all(v in free for v in op.operands)
        ):
            free.update(op.results)
    return free


def _marginal(kernel, t: Target, p: dict, count: str, esize: int = 2) -> float:
    """The kernel's cycles on one tile for parameters `p` less those with `count` set to 0: its
    per-element work without the call's fixed cost."""
    return kernel.cycles(t, p, esize) - kernel.cycles(t, {**p, count: 0}, esize)


def _block_floors(block: Block, t: Target) -> tuple[float, float, float, float]:
    """(vector cycles summed over all tiles, exchange elements per tile, extra cycles per tile
    of the matmuls' best kernel-model grids above their FLOP floor, and of their best plans,
    exchange included) of a block."""
    vec, exch, kern, plan = 0.0, 0.0, 0.0, 0.0
    free, received = _host_values(block), set()
    for op in block.ops:
        if isinstance(op, g.RepeatOp):
            v, e, kx, px = _block_floors(op.body.block, t)
            vec += op.count.value.data * v
            exch += op.count.value.data * e
            kern += op.count.value.data * kx
            plan += op.count.value.data * px
        elif isinstance(op, g.AddOp | g.SubOp | g.MulOp | g.MaxOp):
            kernel, n = KERNELS[op.name.split(".")[-1]], _elements(op.results[0])
            vec += _marginal(kernel, t, {"m": 1, "n": n, "b_rows": 1, "b_cols": n}, "n")
        elif isinstance(op, g.ElementwiseUnaryOp):  # the kernel's own model, less its fixed cost
            kernel, n = KERNELS[op.kernel()], _elements(op.results[0])
            vec += _marginal(kernel, t, {"elements": n}, "elements")
        elif isinstance(op, g.SoftmaxOp | g.LayerNormOp | g.RmsNormOp):
            kernel = KERNELS["softmax_rows" if isinstance(op, g.SoftmaxOp) else "layer_norm_rows"]
            if isinstance(op, g.RmsNormOp):
                kernel = KERNELS["rms_norm_rows"]
            cols = g.shape_of(op.result.type)[-1]
            p = {"rows": _elements(op.results[0]) // cols, "cols": cols, "valid": cols, "eps_bits": 0}
            vec += _marginal(kernel, t, p, "rows")
        elif isinstance(op, g.MatmulOp):
            (m, k), n = g.shape_of(op.lhs.type), g.shape_of(op.result.type)[1]
            exch += (m * n * k / t.tiles) ** (2 / 3)
            amp = 2 * m * n * k / (t.tiles * t.rates["amp_f16_f32"])
            kern += best_matmul_kernel_cycles(m, k, n, t) - amp
            # the first matmul to read a computed lhs receives its block; later readers may reuse it
            computed = op.lhs not in free and op.lhs not in received
            received.add(op.lhs)
            plan += best_matmul_plan_cycles(m, k, n, t, computed) - amp
        elif isinstance(op, g.AttentionOp):
            hq, s, d = g.shape_of(op.q.type)
            sk = g.shape_of(op.k.type)[1]
            frac = 0.5 if op.causal is not None else 1.0
            p = {"rows": int(hq * s * frac), "cols": sk, "valid": sk}
            vec += _marginal(KERNELS["softmax_rows"], t, p, "rows", 4)  # the fp32 scores' softmax
            exch += 2 * (hq * s * sk * d * frac / t.tiles) ** (2 / 3)
    return vec, exch, kern, plan


def floors(func_op, t: Target) -> tuple[float, float]:
    """(compute floor, exchange floor) in cycles for one tile."""
    cf, xf, _, _ = all_floors(func_op, t)
    return cf, xf


def amp_floor(func_op, t: Target) -> float:
    """The products' FLOPs over the tiles at the fp16 -> fp32 AMP rate, in cycles."""
    return flops(func_op) / (t.tiles * t.rates["amp_f16_f32"])


def all_floors(func_op, t: Target) -> tuple[float, float, float, float]:
    """(compute floor, exchange floor, kernel floor, plan floor) in cycles for one tile."""
    vec, exch_elems, kern, plan = _block_floors(func_op.body.block, t)
    amp = amp_floor(func_op, t)
    esize = 2  # the examples store fp16
    cf = amp + vec / t.tiles
    return cf, exch_elems * esize / t.rates["exchange_bytes_per_cycle"], cf + kern, cf + plan


def main() -> None:
    ap = example_parser()
    ap.add_argument("--precision", choices=["f16"], help="compute a float32 model in half precision first")
    a = ap.parse_args()
    t = load_target(a.target)
    print(f"target={t.name} tiles={t.tiles} amp_flop_per_cycle={t.rates['amp_f16_f32']}")
    for name in a.examples:
        path = example_path(name)
        ref, ctx, module = parse_example(path)
        if a.precision:
            ConvertPrecisionPass(dtype=a.precision).apply(ctx, module)
        cf, xf, kf, pf = all_floors(ref, t)
        amp = amp_floor(ref, t)
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
            f"example={path.name} amp_floor={amp:.0f} ratio_to_amp_floor={res.total_cycles / amp:.2f} "
            f"plan_floor_over_amp_floor={pf / amp:.2f} compute_floor={cf:.0f} exchange_floor={xf:.0f} "
            f"kernel_floor={kf:.0f} "
            f"floor_x_1.3={1.3 * max(cf, xf):.0f} modelled={res.total_cycles} "
            f"modelled_exchange={exch} modelled_sync={sync} ratio_to_floor={res.total_cycles / floor:.2f} "
            f"ratio_to_kernel_floor={res.total_cycles / max(kf, xf):.2f} "
            f"plan_floor={pf:.0f} plan_floor_over_floor={pf / floor:.2f} "
            f"ratio_to_plan_floor={res.total_cycles / pf:.2f} "
            f"compile_s={compile_s:.1f}"
        )


if __name__ == "__main__":
    main()
