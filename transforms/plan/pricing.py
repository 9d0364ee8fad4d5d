"""What the families price plan ops with: an element's size, a layout conversion's exchange
(the busiest tile's words, and the fragments a destination block gathers), and the serial GEMM's
step costs, all from layouts and the target's formulas."""

from __future__ import annotations

import functools
import math

import numpy as np

from ipu.abi.kernels import KERNELS
from ipu.dialects import plan
from ipu.dialects.layout import Layout, _lift, conversion_load, overlap_pairs
from ipu.target import Target


def esize_of(t: plan.PlanTensorType) -> int:
    return t.tensor.element_type.bitwidth // 8  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=4096)
def fragments(src: Layout, dst: Layout, perm: tuple[int, ...] | None = None) -> int:
    """Source blocks overlapping one destination block (the worst one): incoming fragments."""
    s_shape, _, s_ranges, _ = _lift(src)
    d_shape, _, d_ranges, _ = _lift(dst)
    r = len(d_shape)
    perm = perm or tuple(range(r))
    if len(src.shape) == 1 and len(perm) == 1:
        perm = (0, 1)
    worst = 1
    for i in range(r):
        dst_parts = d_ranges[i]
        if len(dst_parts):
            per_part = np.bincount(overlap_pairs(s_ranges[perm[i]], dst_parts, 0)[0], minlength=len(dst_parts))
            worst *= int(per_part.max())
    return worst * src.partials


def conversion_cost(
    src: plan.PlanTensorType,
    dst: plan.PlanTensorType,
    t: Target,
    perm=None,
    s_l: Layout | None = None,
    d_l: Layout | None = None,
) -> tuple[int, int]:
    """(exchange cycles, incoming fragments per tile) of one layout conversion."""
    s_l, d_l = s_l or src.layout, d_l or dst.layout
    frag = fragments(s_l, d_l, perm)
    cycles = conversion_bound(s_l, d_l, esize_of(dst), perm, t.tiles) + t.phase_overhead_cycles()
    return cycles, frag


@functools.lru_cache(maxsize=4096)
def conversion_bound(src: Layout, dst: Layout, esize: int, perm: tuple[int, ...] | None, tiles: int) -> int:
    """Words the busiest tile sends or receives in the move that converts `src` to `dst` (a
    multicast sent once): the endpoint bound the scheduler reaches, so the cycles the phase's
    transfers take."""
    seen = src.shape if perm is None else tuple(src.shape[a] for a in perm)
    if seen != dst.shape:  # a window or a broadcast, moved with an offset or replicated by
        # map-tiles: the destination block's words (this pricing knows no offset)
        return math.ceil(dst.block_elements * esize * src.partials / 4)
    sent, recv = conversion_load(src, dst, esize, perm, tiles)
    return int(max(sent.max(), recv.max()))


def serial_gemm_cost(t: Target, bm: int, bn: int, k: int, steps: int, esize: int, cast: bool = True) -> tuple[int, int]:
    """(compute, exchange) cycles of the output-stationary serial GEMM with [bm, bn] output
    blocks (as map-tiles builds it) over `k` contraction columns: per step receive the two
    windows and multiply into the f32 accumulator (the first step's AMP writes it, later ones
    accumulate), then copy out in the result's dtype (`cast`; a K-split's accumulator is its
    fp32 partial, not copied)."""
    kc = math.ceil(k / steps)
    kw = kc + kc % 2
    words = (bm * kc + kc * bn) * esize // 4
    comp = (
        t.amp_matmul_cycles(bm, kw, bn)
        + (steps - 1) * t.amp_matmul_cycles(bm, kw, bn, accumulate=True)
        + (t.cast_cycles(bm * bn) if cast else 0)
    )
    return comp, steps * (words + t.phase_overhead_cycles())


def stage_fill_cycles(partial: Layout, result: Layout, pe: int, target: Target) -> int:
    """The zero fill of a split contraction's staging buffer (`pe`-byte partials): its partials
    move as whole padded blocks when their padded extent is the result's (map-tiles'
    `whole_blocks`), else the buffer is zeroed first, since some slots (the blocks past the
    shape) are never written."""
    if partial.padded_shape == result.padded_shape:
        return 0
    return KERNELS["zero"].cycles(target, {"elements": partial.partials * result.block_elements}, pe)


__all__ = ["conversion_bound", "conversion_cost", "esize_of", "fragments", "serial_gemm_cost", "stage_fill_cycles"]
