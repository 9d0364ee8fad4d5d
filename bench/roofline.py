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
                 fp32 partial reduction a K split needs), in the better of its two orientations
                 (C = A B, or C^T = B^T A^T with the weight's features as the AMP's rows, which
                 PopLibs tries first for fully connected layers): no plan of per-tile products
                 computes below it, whatever its exchange;
plan floor     = the kernel floor with each matmul at its best grid and orientation counting the
                 exchange no such grid avoids (BSP: exchange adds to compute): the K split's
                 fp32 partials received for the reduction, and the block of each operand
                 computed on the device received (weights resident; a tile's blocks beyond its
                 memory received as well, however the op is staged), and the weights a grid
                 keeps resident held to the tile's memory over the whole model: the plans of
                 all matmuls are chosen together, and the weight bytes a tile would keep beyond
                 its memory are received during the run (a weight is written once, at load):
                 a floor for any plan of per-tile blocked products, the rotating
                 (compute-shift) kind included, since rotation moves the same bytes into each
                 tile; an attention in per-tile blocks of one head's query rows by its keys
                 (`attention_plan_cycles`: both products at the AMP model, its fixed costs included,
                 the softmax's work on the block, the row states combined over key blocks (their
                 receive and the combine's per-element work), q, k and v received; causal, only the
                 blocks on or below the diagonal take tiles); attention's softmax is priced on
                 scores of q's element type, as map-tiles keeps them (`plan_floor_unheld` is the
                 floor with each matmul's weights resident in its own best grid whatever the others
                 keep, the floor before that; `plan_floor_unswapped` the unheld floor with every
                 matmul streaming its lhs rows);
modelled       = cycles of the compiled program, counted by the emulator's cycle model
                 (data-independent, so no kernel is executed).
A model with convolutions also gets one line per convolution: its multiply-accumulates, its AMP
floor (2 MACs / (tiles x rate)), the modelled cycles of its plan ops (its patch exchange, kernel
and partials' reduce: the profile's cycles up to its checkpoint) and their ratio; then the
convolutions' totals.
With `--partials f16` the model is compiled with half partials (the AMP at its fp16 -> fp16
rate), each line also gives that rate's AMP floor (`amp_floor_half`) and the ratio to it, and
the compute, kernel and plan floors are taken at that rate (fp16 partials reduced and received;
their `_over_amp_floor` ratios against `amp_floor_half`).
With `--ops`, a line per matmul (siblings fused or apart as one) and attention, a rolled layer's
trips together: the floor the plan floor takes for it and its modelled cycles (`op_lines`).
Usage: python bench/roofline.py [--target mk2] [--precision f16] [--partials f16] [--ops] [examples or model files ...]
(`--precision f16` computes a float32 model, such as a GPT-2 export, in half precision first.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields

import numpy as np
from common import example_parser, example_path, parse_example  # bench/ is the script's directory
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import Float16Type
from xdsl.ir import Block

from ipu.abi.kernels import KERNELS
from ipu.codegen.ipuexe import build_package
from ipu.dialects import graph as g
from ipu.dialects.value_names import name_values
from ipu.golden.evaluator import flops
from ipu.runtime.emulator import Emulator
from ipu.runtime.profile import build_profile
from ipu.target import Target, load_target
from ipu.transforms.graph.convert_precision import ConvertPrecisionPass
from ipu.transforms.graph.expand_windows import folds_width
from ipu.transforms.graph.roll_layers import RollLayersPass
from ipu.transforms.pipeline import compile_passes, run_ladder


def _elements(v) -> int:
    return math.prod(g.shape_of(v.type))


def _distinct_blocks(size: int, most: int):
    """(parts, block) of `size` cut in 1 to `most` parts, skipping a count whose block a smaller
    count already gives (the same block, only more partials or idle tiles)."""
    for parts in range(1, most + 1):
        block = -(-size // parts)
        if parts == 1 or -(-size // (parts - 1)) != block:
            yield parts, block


def _grids(m: int, k: int, n: int, t: Target):
    """Every distinct grid rows x cols x K-split of an [m,k]x[k,n] GEMM on the target's tiles, as
    (split, per-tile m, k, n) (`_distinct_blocks` for the split and the rows)."""
    for s, kt in _distinct_blocks(k, t.tiles):
        for r, mt in _distinct_blocks(m, t.tiles // s):
            yield s, mt, kt, -(-n // (t.tiles // (s * r)))


def _grid_kernel_cycles(t: Target, s: int, mt: int, kt: int, nt: int, pe: int = 4) -> int:
    """One grid's per-tile kernel cycles: the AMP call, and with a K split of `s` the reduction
    of its partials (m_t*n_t/s elements per tile at the reduction rate); `pe` 2: fp16 partials."""
    return t.amp_matmul_cycles(mt, kt, nt, partials_esize=pe) + (
        t.reduce_cycles(s, -(-mt * nt // s), partials_esize=pe) if s > 1 else 0
    )


def best_matmul_kernel_cycles(m: int, k: int, n: int, t: Target, swap: bool = True, pe: int = 4) -> int:
    """Fewest per-tile cycles of an [m,k]x[k,n] GEMM over all grids rows x cols x K-split that
    fit the target, under the target's AMP model plus the K split's partial reduction; with
    `swap`, also of the swapped product C^T = B^T A^T (the weight's features as the AMP's rows)."""
    best = min(_grid_kernel_cycles(t, *grid, pe) for grid in _grids(m, k, n, t))
    return min(best, best_matmul_kernel_cycles(n, k, m, t, swap=False, pe=pe)) if swap else best


def _plan_points(
    m: int, k: int, n: int, t: Target, lhs_computed: bool, esize: int, rhs_computed: bool, pe: int, weight: str
):
    """Per grid of an [m,k]x[k,n] GEMM in this orientation: (the bytes of a weight operand's block
    a tile must hold beyond what its `beyond` receive already counts, the grid's cycles). `weight`
    names the operand that is a weight ("lhs", "rhs" or "" for none); see
    `best_matmul_plan_cycles` for the cycles."""
    rate = t.rates["exchange_bytes_per_cycle"]
    lhs_local = -(-m * k // t.tiles) if lhs_computed else None
    rhs_local = -(-k * n // t.tiles) if rhs_computed else None
    for s, mt, kt, nt in _grids(m, k, n, t):
        partials = (s - 1) * mt * nt * pe // (s * rate)
        lhs = max(mt * kt - lhs_local, 0) * esize // rate if lhs_local is not None else 0
        rhs = max(kt * nt - rhs_local, 0) * esize // rate if rhs_local is not None else 0
        held = (mt * kt + kt * nt) * esize + mt * nt * (pe if s > 1 else esize)
        over = max(held - t.memory_size, 0)
        cycles = _grid_kernel_cycles(t, s, mt, kt, nt, pe) + partials + lhs + rhs + over // rate
        block = {"lhs": mt * kt, "rhs": kt * nt}.get(weight, 0) * esize
        yield max(block - over, 0), cycles


def best_matmul_plan_cycles(
    m: int, k: int, n: int, t: Target, lhs_computed: bool, esize: int = 2, rhs_computed: bool = False, pe: int = 4
) -> int:
    """Fewest per-tile cycles of an [m,k]x[k,n] GEMM in any plan of blocked per-tile products,
    in this orientation, exchange included (BSP: a tile computes or exchanges, never both). Per
    grid: its kernel cycles; with a K split of S, the receive of (S-1)/S of the tile's m_t*n_t
    fp32 partials (a reduce-scatter can receive no less); and, for each operand computed on the
    device (not a host input, a weight or a view of one, which the host writes in any layout),
    the receive of the tile's block of it ([m_t, k_t] of the lhs, [k_t, n_t] of the rhs) less
    the even share of it a tile produces itself. Weights count as resident in the grid's layout
    (no fetch, replicas free; `held_plan_cycles` holds them to the tile's memory over the whole
    model), so this is a floor: receiving at the exchange rate is cheaper than
    recomputing a block's producer. A tile holds no more than its memory: where a grid's blocks
    (both operands' and the partial product) exceed it, the excess reaches the tile during the op
    and is received too (a grid replicating a weight over many row groups cannot keep it all
    resident: mk2 mlp's up-projection swapped on 32 token groups of 16 needs a 731 KB block of
    the weight a tile)."""
    return min(c for _, c in _plan_points(m, k, n, t, lhs_computed, esize, rhs_computed, pe, ""))


def _pareto(points) -> list[tuple[int, int]]:
    """The (bytes, cycles) points no other beats on both: ascending bytes, descending cycles."""
    out: list[tuple[int, int]] = []
    for w, c in sorted(points):
        if not out or c < out[-1][1]:
            out.append((w, c))
    return out


def _matmul_plans(
    m: int, k: int, n: int, t: Target, lhs_computed: bool, rhs_weight: bool, pe: int
) -> tuple[int, int, list[tuple[int, int]]]:
    """`best_matmul_floor`'s two figures (the best plan plain, the best of both orientations) and
    the GEMM's plans in both orientations as a front of (bytes of its weight a tile keeps
    resident, cycles), from one pass over each orientation's grids: a grid replicating the weight
    over more row groups runs faster and keeps more of it a tile. Without a weight rhs, its one
    best point at 0 bytes."""
    normal = list(_plan_points(m, k, n, t, lhs_computed, 2, False, pe, "rhs" if rhs_weight else ""))
    swapped = list(_plan_points(n, k, m, t, False, 2, lhs_computed, pe, "lhs" if rhs_weight else ""))
    low = min(c for _, c in normal)
    return low, min(low, min(c for _, c in swapped)), _pareto([*normal, *swapped])


def _sum_fronts(fronts: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """The front of plans for several matmuls together: every choice of one point each, summed."""
    out = [(0, 0)]
    for f in fronts:
        out = _pareto([(w0 + w, c0 + c) for w0, c0 in out for w, c in f])
    return out


HELD_QUANTUM = 256
"""Bytes the joint floor rounds each matmul's resident weight down to (so the floor stays below
the exact one) to keep its table of totals short."""


def held_plan_choice(fronts: list[list[tuple[int, int]]], t: Target) -> tuple[int, list[int]]:
    """The fewest cycles of one plan per matmul (a point of each front, in the model's order and
    trips) when every tile's resident weights must fit its memory together, and the point taken
    of each front: a tile that keeps W bytes of weight blocks for the whole model beyond its
    memory M receives at least W - M of them during the run (a weight is written once, at load,
    so what is not kept must come over the exchange; the host path is slower). Everything else a
    tile holds (activations, code) is left out, so this is still a floor. The excess is charged
    to no one matmul."""
    rate = t.rates["exchange_bytes_per_cycle"]
    q = HELD_QUANTUM
    w_tot, c_tot = np.zeros(1, np.int64), np.zeros(1, np.int64)
    back: list[tuple[np.ndarray, np.ndarray]] = []  # per front: each kept state's previous state and point
    for front in fronts:
        fw = np.array([w // q for w, _ in front], np.int64)
        fc = np.array([c for _, c in front], np.int64)
        w = (w_tot[:, None] + fw[None, :]).ravel()
        c = (c_tot[:, None] + fc[None, :]).ravel()
        prev, point = np.divmod(np.arange(len(w)), len(front))
        order = np.lexsort((c, w))
        w, c, prev, point = w[order], c[order], prev[order], point[order]
        keep = c < np.concatenate(([np.iinfo(np.int64).max], np.minimum.accumulate(c)[:-1]))
        w_tot, c_tot = w[keep], c[keep]
        back.append((prev[keep], point[keep]))
    total = c_tot + np.maximum(w_tot * q - t.memory_size, 0) // rate
    state = int(total.argmin())
    picks = []
    for prev, point in reversed(back):
        picks.append(int(point[state]))
        state = int(prev[state])
    return int(total.min()), picks[::-1]


def held_plan_cycles(fronts: list[list[tuple[int, int]]], t: Target) -> int:
    """`held_plan_choice`'s cycles."""
    return held_plan_choice(fronts, t)[0]


def attention_plan_cycles(
    hq: int, hkv: int, s: int, sk: int, d: int, esize: int, frac: float, t: Target, computed: bool, pe: int = 4
) -> tuple[float, float] | None:
    """(kernel, plan) floors of an attention in per-tile blocks, as `best_matmul_plan_cycles` is
    for a GEMM: each tile a [qr, kr] block of one head (its query rows by its keys), q k^T and
    p v on the AMP at the target's AMP model (its per-group fixed costs: a block of few rows
    pays them all) plus the softmax's per-element work on the block and, with pk > 1 key blocks,
    that of combining the row states (`_combine_marginal`); a causal attention needs
    only the blocks on or below the diagonal, so a head's pq x pk blocks take pq x pk x `frac`
    tiles. The plan adds, with pk key blocks, the receive of (pk - 1) / pk of the row states
    (fp32, d + 2 a row) for their combination, and the q, k and v blocks received when they are
    computed on the device, less a tile's even share of them. None when a head has no tile of
    its own."""
    per = t.tiles // hq
    if per < 1:
        return None
    rate = t.rates["exchange_bytes_per_cycle"]
    q_share, kv_share = -(-hq * s * d // t.tiles), -(-hkv * sk * d // t.tiles)
    kern_best = plan_best = math.inf
    for pk, kr in _distinct_blocks(sk, sk):
        if math.ceil(pk * frac) > per:
            break
        for pq, qr in _distinct_blocks(s, s):
            if math.ceil(pq * pk * frac) > per:
                break
            soft = _marginal(KERNELS["softmax_rows"], t, {"rows": qr, "cols": kr, "valid": kr}, "rows", esize)
            kern = t.amp_matmul_cycles(qr, d, kr, partials_esize=pe) + t.amp_matmul_cycles(qr, kr, d, partials_esize=pe)
            kern += soft + _combine_marginal(pk, qr, d, frac, esize, t)
            states = (pk - 1) * qr * (d + 2) * 4 / (pk * rate)
            blocks = (max(qr * d - q_share, 0) + 2 * max(kr * d - kv_share, 0)) * esize / rate if computed else 0
            kern_best, plan_best = min(kern_best, kern), min(plan_best, kern + states + blocks)
    return kern_best, plan_best


def _combine_marginal(pk: int, qr: int, d: int, frac: float, esize: int, t: Target) -> float:
    """The per-element work of combining a query block's row states over its key blocks (none
    with one key block): the `attention_combine` kernel's cycles less its fixed cost, its qr
    rows shared by the block's pk tiles, over the ceil(pk x frac) key blocks a causal query block
    sees on average (all pk otherwise)."""
    parts = max(1, math.ceil(pk * frac))
    if parts == 1:
        return 0.0
    p = {"parts": parts, "qr": -(-qr // pk), "d": d}
    return _marginal(KERNELS["attention_combine"], t, p, "qr", esize)


def best_matmul_floor(
    m: int, k: int, n: int, t: Target, lhs_computed: bool, esize: int = 2, pe: int = 4
) -> tuple[int, int]:
    """(the best plan in the given orientation, the best of both orientations): PopLibs tries
    the swapped operands first for fully connected layers (`getSwapOperandCandidates`), where
    the weight's output features are the AMP's rows and the computed activations the operand
    received, so a floor for any plan takes the better of the two."""
    normal = best_matmul_plan_cycles(m, k, n, t, lhs_computed, esize, pe=pe)
    swapped = best_matmul_plan_cycles(n, k, m, t, lhs_computed=False, esize=esize, rhs_computed=lhs_computed, pe=pe)
    return normal, min(normal, swapped)


_VIEWS = (g.ReshapeOp, g.TransposeOp, g.SplitHeadsOp, g.MergeHeadsOp, g.SliceOp, g.PadOp, g.ConcatOp)


def _view_closure(block: Block, seeds: set) -> set:
    """`seeds` with the block's weights (parameters, the iterations' slices of stacked ones) and
    the data-movement views of what is already in the set."""
    out = set(seeds)
    for op in block.ops:
        if isinstance(op, g.ParameterOp | g.IterationSliceOp) or (
            isinstance(op, _VIEWS) and all(v in out for v in op.operands)
        ):
            out.update(op.results)
    return out


def _host_values(block: Block) -> set:
    """The values of a block the host can write in any layout: its arguments (a function's
    inputs), weights, and data-movement views of those (no device compute between)."""
    return _view_closure(block, set(block.args) if isinstance(block.parent_op(), func.FuncOp) else set())


def _weight_values(block: Block) -> set:
    """The values of a block that are weights (written once, at load, and resident): parameters,
    the iterations' slices of stacked ones, and data-movement views of those."""
    return _view_closure(block, set())


def _siblings(block: Block, weights: set) -> dict:
    """Each matmul of a group reading one lhs with weights of their own (two or more), mapped to
    the group: a plan may run them as one product over the weights side by side, as
    `fuse-sibling-matmuls` does, so a floor takes the better of the two."""
    by_lhs: dict = {}
    for op in block.ops:
        if isinstance(op, g.MatmulOp) and op.rhs in weights and op.transpose_lhs is None:
            by_lhs.setdefault(op.lhs, []).append(op)
    return {o: grp for grp in by_lhs.values() if len(grp) > 1 for o in grp}


def _marginal(kernel, t: Target, p: dict, count: str, esize: int = 2) -> float:
    """The kernel's cycles on one tile for parameters `p` less those with `count` set to 0: its
    per-element work without the call's fixed cost."""
    return kernel.cycles(t, p, esize) - kernel.cycles(t, {**p, count: 0}, esize)


@dataclass
class Floors:
    """Per block: vector cycles summed over all tiles, exchange elements per tile, and the cycles
    per tile the matmuls' best grids add above their FLOP floor: kernel model only, plans with
    their exchange in the given orientation, and plans in the better orientation; and each
    matmul's front of plans by resident weight bytes (`held_plan_cycles`), once a trip."""

    vec: float = 0.0
    exch: float = 0.0
    kern: float = 0.0
    plan_normal: float = 0.0
    plan: float = 0.0
    fronts: list[list[tuple[int, int]]] = field(default_factory=list)  # per matmul, trip by trip
    fronts_amp: float = 0.0  # the fronts' matmuls' AMP floors, summed
    front_names: list[str] = field(default_factory=list)  # each front's matmul (or fused siblings)
    attn_plan: float = 0.0  # what the attentions' blocked plans add above their FLOPs and softmax
    attention: list[tuple[str, float]] = field(default_factory=list)  # each attention's floor, trip by trip

    def add(self, other: Floors, times: int) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + times * getattr(other, f.name))


def amp_rate(t: Target, pe: int = 4) -> float:
    """The AMP's flop rate per tile: fp16 -> fp32 partials, or fp16 -> fp16 (`pe` 2)."""
    return t.rates["amp_f16_f16" if pe == 2 else "amp_f16_f32"]


def _block_floors(block: Block, t: Target, pe: int = 4) -> Floors:
    out = Floors()
    free, received, weights = _host_values(block), set(), _weight_values(block)
    siblings, done = _siblings(block, weights), set()
    for op in block.ops:
        if isinstance(op, g.RepeatOp):
            out.add(_block_floors(op.body.block, t, pe), op.count.value.data)
        elif isinstance(op, g.AddOp | g.SubOp | g.MulOp | g.MaxOp):
            kernel, n = KERNELS[op.name.split(".")[-1]], _elements(op.results[0])
            out.vec += _marginal(kernel, t, {"m": 1, "n": n, "b_rows": 1, "b_cols": n}, "n")
        elif isinstance(op, g.ElementwiseUnaryOp):  # the kernel's own model, less its fixed cost
            kernel, n = KERNELS[op.kernel()], _elements(op.results[0])
            out.vec += _marginal(kernel, t, {"elements": n}, "elements")
        elif isinstance(op, g.SoftmaxOp | g.LayerNormOp | g.RmsNormOp):
            kernel = KERNELS["softmax_rows" if isinstance(op, g.SoftmaxOp) else "layer_norm_rows"]
            if isinstance(op, g.RmsNormOp):
                kernel = KERNELS["rms_norm_rows"]
            cols = g.shape_of(op.result.type)[-1]
            p = {"rows": _elements(op.results[0]) // cols, "cols": cols, "valid": cols, "eps_bits": 0}
            out.vec += _marginal(kernel, t, p, "rows")
        elif isinstance(op, g.MatmulOp) and op not in done:
            group = siblings.get(op, [op])
            done.update(group)
            m, n = g.shape_of(op.result.type)
            k = math.prod(g.shape_of(op.lhs.type)) // m
            ns = [g.shape_of(o.result.type)[1] for o in group]
            out.exch += sum((m * c * k / t.tiles) ** (2 / 3) for c in ns)
            amps = [2 * m * c * k / (t.tiles * amp_rate(t, pe)) for c in ns]
            # the first matmul to read a computed lhs receives its block; later readers may reuse it
            computed = op.lhs not in free and op.lhs not in received
            received.add(op.lhs)
            heavy = [o.rhs in weights for o in group]
            kern = sum(best_matmul_kernel_cycles(m, k, c, t, pe=pe) for c in ns)
            apart = [_matmul_plans(m, k, c, t, computed and i == 0, heavy[i], pe) for i, c in enumerate(ns)]
            normal, best = sum(a[0] for a in apart), sum(a[1] for a in apart)
            front = _sum_fronts([a[2] for a in apart])
            if len(group) > 1:
                # siblings fused: one product over their weights side by side (fuse-sibling-matmuls)
                kern = min(kern, best_matmul_kernel_cycles(m, k, sum(ns), t, pe=pe))
                f_normal, f_best, f_front = _matmul_plans(m, k, sum(ns), t, computed, True, pe)
                normal, best = min(normal, f_normal), min(best, f_best)
                front = _pareto([*front, *f_front])
            out.kern += kern - sum(amps)
            out.plan_normal += normal - sum(amps)
            out.plan += best - sum(amps)
            out.fronts.append(front)
            out.fronts_amp += sum(amps)
            out.front_names.append(",".join(o.result.name_hint or "?" for o in group))
        elif isinstance(op, g.AttentionOp):
            hq, s, d = g.shape_of(op.q.type)
            sk = g.shape_of(op.k.type)[1]
            frac = 0.5 if op.causal is not None else 1.0
            p = {"rows": int(hq * s * frac), "cols": sk, "valid": sk}
            esize = 2 if isinstance(op.q.type.element_type, Float16Type) else 4  # map-tiles keeps q's type
            soft = _marginal(KERNELS["softmax_rows"], t, p, "rows", esize)
            out.vec += soft
            out.exch += 2 * (hq * s * sk * d * frac / t.tiles) ** (2 / 3)
            amp = 4 * hq * s * sk * d * frac / (t.tiles * amp_rate(t, pe))
            hkv = g.shape_of(op.k.type)[0]
            computed = not any(v in free for v in (op.q, op.k, op.v))
            blocked = attention_plan_cycles(hq, hkv, s, sk, d, esize, frac, t, computed, pe)
            base = amp + soft / t.tiles  # what the floors below already count for it
            kern, plan = blocked if blocked is not None else (base, base)
            out.kern += kern - base
            out.plan += plan - base
            out.plan_normal += plan - base
            out.attn_plan += plan - base
            out.attention.append((op.result.name_hint or "?", plan))
    return out


def floors(func_op, t: Target) -> tuple[float, float]:
    """(compute floor, exchange floor) in cycles for one tile."""
    cf, xf, _, _ = all_floors(func_op, t)
    return cf, xf


def amp_floor(func_op, t: Target, pe: int = 4) -> float:
    """The products' FLOPs over the tiles at the AMP rate (fp16 -> fp32; `pe` 2: fp16 partials), in cycles."""
    return flops(func_op) / (t.tiles * amp_rate(t, pe))


def _figures(fl: Floors, func_op, t: Target, pe: int) -> tuple[float, float, float, float, float, float]:
    """(compute, exchange, kernel, plan, unheld plan, unswapped plan) floors of one model's `fl`."""
    amp = amp_floor(func_op, t, pe)
    esize = 2  # the examples store fp16
    cf = amp + fl.vec / t.tiles
    held = held_plan_cycles(fl.fronts, t) - fl.fronts_amp + fl.attn_plan
    xf = fl.exch * esize / t.rates["exchange_bytes_per_cycle"]
    return cf, xf, cf + fl.kern, cf + held, cf + fl.plan, cf + fl.plan_normal


def all_floors(func_op, t: Target, pe: int = 4) -> tuple[float, float, float, float]:
    """(compute floor, exchange floor, kernel floor, plan floor) in cycles for one tile; the
    kernel and plan floors take each matmul in its better orientation (`pe` 2: with fp16
    partials), the plan floor with every tile's resident weights held to its memory together
    (`held_plan_cycles`)."""
    return _figures(_block_floors(func_op.body.block, t, pe), func_op, t, pe)[:4]


def unheld_plan_floor(func_op, t: Target, pe: int = 4) -> float:
    """The plan floor with each matmul's weights resident in its best grid whatever the others
    keep (the floor before `held_plan_cycles`), for comparison."""
    return _figures(_block_floors(func_op.body.block, t, pe), func_op, t, pe)[4]


def normal_plan_floor(func_op, t: Target, pe: int = 4) -> float:
    """The plan floor with every matmul streaming its lhs rows through the AMP (the plain
    orientation only), for comparison with `all_floors`' plan floor."""
    return _figures(_block_floors(func_op.body.block, t, pe), func_op, t, pe)[5]


def conv_lines(convs: list[g.ConvOp], profile: dict, t: Target) -> None:
    """Each convolution's modelled cycles (compute and exchange up to its checkpoint) over its
    AMP floor, then the convolutions' totals."""
    per_op = {o["op"]: o for o in profile["ops"]}
    rate = t.tiles * t.rates["amp_f16_f32"]
    total_floor = total = 0.0
    for op in convs:
        geo, name = op.geometry(), op.result.name_hint or ""
        rec = per_op.get(name, {})
        cycles = rec.get("compute_cycles", 0) + rec.get("exchange_cycles", 0)
        floor = 2 * geo.macs / rate
        total_floor, total = total_floor + floor, total + cycles
        kind = "amp" if geo.on_amp else "depthwise" if geo.depthwise else "folded" if folds_width(geo) else "expanded"
        print(
            f"  conv={name} kind={kind} nhwc={geo.n}x{geo.h}x{geo.w}x{geo.c} kernel={geo.kh}x{geo.kw} "
            f"out={geo.o} stride={geo.strides[0]} macs={geo.macs} amp_floor={floor:.0f} modelled={cycles} "
            f"ratio_to_amp_floor={cycles / floor:.1f}"
        )
    print(f"  convs={len(convs)} amp_floor={total_floor:.0f} modelled={total} ratio={total / max(total_floor, 1):.1f}")


def op_lines(ref, t: Target, profile: dict, pe: int = 4) -> None:
    """Per matmul (siblings fused or apart as one) and attention, in the model's order, a rolled
    layer's trips together: the floor the plan floor takes for it (the held plan's point of its
    front) and its modelled cycles (the profile's compute and exchange up to its checkpoints);
    then what the other ops and the syncs take. The held plan's receive beyond the tiles' memory
    is no one op's. The layers are taken rolled, as the compiled program runs them (`roll-layers`:
    a rolled layer's ops carry one layer's names, the profile counts every trip under them)."""
    rolled = builtin.ModuleOp([ref.clone()])
    RollLayersPass().apply(Context(), rolled)
    fl = _block_floors(next(o for o in rolled.ops if isinstance(o, func.FuncOp)).body.block, t, pe)
    held, picks = held_plan_choice(fl.fronts, t)
    per_op = {o["op"]: o for o in profile["ops"]}
    rows: dict[tuple[str, str], list[float]] = {}  # (kind, name) -> [trips, floor]
    for name, front, pick in zip(fl.front_names, fl.fronts, picks, strict=True):
        r = rows.setdefault(("matmul", name), [0, 0.0])
        r[0], r[1] = r[0] + 1, r[1] + front[pick][1]
    for name, floor in fl.attention:
        r = rows.setdefault(("attention", name), [0, 0.0])
        r[0], r[1] = r[0] + 1, r[1] + floor
    listed = 0
    for (kind, name), (trips, floor) in rows.items():
        recs = [per_op[n] for n in name.split(",") if n in per_op]
        cycles = sum(o["compute_cycles"] + o["exchange_cycles"] for o in recs)
        listed += cycles
        print(
            f"  op={name} kind={kind} trips={trips} floor={floor:.0f} modelled={cycles} "
            f"ratio={cycles / max(floor, 1):.2f}"
        )
    excess = held - sum(front[pick][1] for front, pick in zip(fl.fronts, picks, strict=True))
    total = profile["totals"]["total_cycles"]
    print(f"  weights_received_floor={excess} others_and_sync_modelled={total - listed}")


def main() -> None:
    ap = example_parser()
    ap.add_argument("--precision", choices=["f16"], help="compute a float32 model in half precision first")
    ap.add_argument("--partials", choices=["f32", "f16"], default="f32", help="the AMP's partials (%(default)s)")
    ap.add_argument("--ops", action="store_true", help="also a line per matmul and attention: its floor and cycles")
    a = ap.parse_args()
    t = load_target(a.target)
    print(f"target={t.name} tiles={t.tiles} amp_flop_per_cycle={t.rates['amp_f16_f32']}")
    for name in a.examples:
        path = example_path(name)
        ref, ctx, module = parse_example(path)
        if a.precision:
            ConvertPrecisionPass(dtype=a.precision).apply(ctx, module)
        pe = 2 if a.partials == "f16" else 4
        if a.ops:
            name_values(ref)  # the stable names the profile's ops carry
        cf, xf, kf, pf, pu, pn = _figures(_block_floors(ref.body.block, t, pe), ref, t, pe)
        amp = amp_floor(ref, t)
        amp_half = amp_floor(ref, t, 2)
        same = amp_half if pe == 2 else amp  # the AMP floor at the rate the floors are taken
        t0 = time.perf_counter()
        run_ladder(ctx, module, compile_passes(t.name, partials=a.partials))  # as the tools compile
        pkg = build_package(module, t)
        compile_s = time.perf_counter() - t0
        res = Emulator(pkg, t, execute=False).run({})
        exch = sum(r["cycles"] for r in res.profile if r["kind"] == "exchange")
        sync = sum(r["cycles"] for r in res.profile if r["kind"] == "sync")
        floor = max(cf, xf)
        convs = [op for op in ref.walk() if isinstance(op, g.ConvOp)]
        if convs:
            name_values(ref)  # the stable names the compiled plan's checkpoints carry
            conv_lines(convs, build_profile(pkg, t, res), t)
        if a.ops:
            op_lines(ref, t, build_profile(pkg, t, res), pe)
        print(
            f"example={path.name} amp_floor={amp:.0f} ratio_to_amp_floor={res.total_cycles / amp:.2f} "
            f"plan_floor_over_amp_floor={pf / same:.2f} compute_floor={cf:.0f} exchange_floor={xf:.0f} "
            f"kernel_floor={kf:.0f} "
            f"floor_x_1.3={1.3 * max(cf, xf):.0f} modelled={res.total_cycles} "
            f"modelled_exchange={exch} modelled_sync={sync} ratio_to_floor={res.total_cycles / floor:.2f} "
            f"ratio_to_kernel_floor={res.total_cycles / max(kf, xf):.2f} "
            f"plan_floor={pf:.0f} plan_floor_over_floor={pf / floor:.2f} "
            f"ratio_to_plan_floor={res.total_cycles / pf:.2f} plan_floor_unheld={pu:.0f} "
            f"plan_floor_unswapped={pn:.0f} unswapped_over_amp_floor={pn / same:.2f} "
            f"compile_s={compile_s:.1f}"
            + (
                f" partials=f16 amp_floor_half={amp_half:.0f} ratio_to_amp_floor_half={res.total_cycles / amp_half:.2f}"
                if a.partials == "f16"
                else ""
            )
        )


if __name__ == "__main__":
    main()
