"""Layout arithmetic the planner shares between choosing and emitting: which layout each
implementation reads and writes (a plan is priced from these, so they are defined once)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from xdsl.dialects.builtin import TensorType
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import plan
from ipu.dialects.layout import Layout


def device_tensor(t: TensorType) -> TensorType:
    """The tensor the device holds for graph tensor `t`: a scalar (rank 0) is carried as [1]
    (its declared shape is restored at the host boundary, `ipu.host_shapes`)."""
    return TensorType(t.element_type, [1]) if not t.get_shape() else t


def scalar_layout() -> Layout:
    """A scalar carried as [1]: one tile, nothing split (so a reshape adding unit axes is a view)."""
    return Layout((1,), (1,), ((),))


@functools.lru_cache(maxsize=4096)
def plan_type(t: TensorType, lay: Layout, memory: str = "standard") -> plan.PlanTensorType:
    """The plan type of graph tensor `t` laid out as `lay` (memoized: attributes are immutable,
    and the search builds the same few thousand types once per plan it tries)."""
    t = device_tensor(t)
    align = lay.align if any(a != 1 for a in lay.align) else ()
    attr = plan.LayoutAttr(lay.grid, lay.split, lay.partial, lay.first_tile, align, memory)
    return plan.PlanTensorType(t, attr)


def drop_align(lay: Layout) -> Layout:
    return Layout(lay.shape, lay.grid, lay.split, lay.partial, lay.first_tile)


def default_layout(shape: tuple[int, ...], tiles: int) -> Layout:
    """Outer axes first, then inner ones, over as many tiles as the shape has useful blocks (the
    last axis in blocks of at least two elements: whole 32-bit words)."""
    if not shape:
        raise DiagnosticException(
            "plan-ops: a rank-0 tensor is planned only at the function boundary (an input or output, carried as "
            "[1] and reshaped); give the value a shape [1]"
        )
    grid, left = [], tiles
    for a, n in enumerate(shape):
        g = max(1, min(left, n if a < len(shape) - 1 else n // 2))
        grid.append(g)
        left //= g
    return Layout(shape, tuple(grid), tuple((a,) for a in range(len(shape))))


def row_layout(shape: tuple[int, ...], tiles: int) -> Layout:
    """Whole rows per tile: leading axes split, the last axis kept whole."""
    if len(shape) == 1:
        return Layout(shape, (1,), ((),))
    if len(shape) == 2:
        return Layout(shape, (max(1, min(tiles, shape[0])),), ((0,), ()))
    lead = max(1, min(tiles, shape[0]))  # more leading rows than tiles: several per tile
    per = max(1, min(tiles // lead, shape[1]))
    return Layout(shape, (lead, per), ((0,), (1,), *((),) * (len(shape) - 2)))


def leading_layout(shape: tuple[int, ...], tiles: int) -> Layout:
    """Whole rows per tile for any rank: the leading axes split in order while tiles remain (a
    permutation's result, whose rows arrive whole)."""
    grid: list[int] = []
    split: list[tuple[int, ...]] = []
    left = tiles
    for n in shape[:-1]:
        g = max(1, min(left, n))
        if g > 1:
            split.append((len(grid),))
            grid.append(g)
            left //= g
        else:
            split.append(())
    split.append(())
    return Layout(shape, tuple(grid) or (1,), tuple(split))


@dataclass(frozen=True)
class GemmLayouts:
    """The layouts one (pm, pn, pk) choice emits: the plan is priced from these (principle 2)."""

    a: Layout
    b: Layout
    partial: Layout  # gemm result (partial over grid dim 2 when pk > 1)
    result: Layout  # after plan.reduce (== partial when pk == 1)
    home: Layout | None  # distributed home of a fetched weight


def gemm_layouts(
    m: int, k: int, n: int, pm: int, pn: int, pk: int, head: int, fetch: bool, swapped: bool = False
) -> GemmLayouts:
    """The layouts of a (pm, pn, pk) grid (`swapped`: for the AMP on the product's transpose);
    with `fetch`, the weight's distributed home too.

    A K split's partial blocks [bm, bn] are reduced over the pk tiles of a block, each taking a
    share. By columns (each bn / pk wide) the weight's column block must be a multiple of pk
    column shares, which pads it where the grid's column count divides n badly; by rows (each
    bm / pk of the block's rows, whole) it needs nothing of the columns. The swapped AMP takes
    the weight's columns as its rows, one at a time, so there the padding is pure loss (mk2
    GPT-2's FFN down-projection on 4 x 11 x 32 would hold [96 x 128] weight blocks, 5 of its 11
    column groups idle, where rows give [96 x 70]): a swapped grid reduces by rows where pk
    divides bm and the weight's block is smaller for it (not for head-aligned columns, which a
    head split reads whole). Deterministic per grid, so pinning the grid pins it. The plain AMP
    takes columns in 16-wide groups, so rows gain it only bytes; taken there too, mk2
    transformer_stack's cheapest plans no longer placed (fragmentation the estimate misses)."""
    grid = (pm, pn, pk)
    hb = math.ceil(math.ceil(k / pk) / pm)
    hb += hb % 2
    kb_align = hb * pm if fetch else 2
    a = Layout((m, k), grid, ((0,), (2,)), align=(1, kb_align))
    lays = [_gemm_reduce_by_columns(m, k, n, grid, head, fetch, hb, kb_align, a)]
    if swapped and pk > 1 and head == 1 and -(-m // pm) % pk == 0:
        lays.append(_gemm_reduce_by_rows(m, k, n, grid, fetch, hb, kb_align, a))
    return min(lays, key=lambda lay: lay.b.block_elements)  # the column form on a tie


def _gemm_reduce_by_columns(
    m: int, k: int, n: int, grid: tuple[int, int, int], head: int, fetch: bool, hb: int, kb_align: int, a: Layout
) -> GemmLayouts:
    pk = grid[2]
    q = Layout((m, n), grid, ((0,), (1, 2)), align=(1, head))
    align_n = q.block_size(1) * pk if pk > 1 else head
    b = Layout((k, n), grid, ((2,), (1,)), align=(kb_align, align_n))
    part = Layout((m, n), grid, ((0,), (1,)), partial=2 if pk > 1 else -1, align=(1, align_n))
    home = Layout((k, n), grid, ((2, 0), (1,)), align=(hb, align_n)) if fetch else None
    return GemmLayouts(a, b, part, (q if head > 1 else drop_align(q)) if pk > 1 else part, home)


def _gemm_reduce_by_rows(
    m: int, k: int, n: int, grid: tuple[int, int, int], fetch: bool, hb: int, kb_align: int, a: Layout
) -> GemmLayouts:
    """The K split's result in [bm / pk, bn] blocks (rows over (pm, pk)): whole 32-bit words of
    half columns, nothing else asked of the column block."""
    b = Layout((k, n), grid, ((2,), (1,)), align=(kb_align, 2))
    part = Layout((m, n), grid, ((0,), (1,)), partial=2, align=(1, 2))
    home = Layout((k, n), grid, ((2, 0), (1,)), align=(hb, 2)) if fetch else None
    return GemmLayouts(a, b, part, Layout((m, n), grid, ((0, 2), (1,))), home)


def shifted(lays: GemmLayouts, first: int) -> GemmLayouts:
    """`lays` on the tiles from `first` on (a weight spread away from tile 0)."""

    def move(lay: Layout | None) -> Layout | None:
        return None if lay is None else replace(lay, first_tile=first)

    return GemmLayouts(move(lays.a), move(lays.b), move(lays.partial), move(lays.result), move(lays.home))  # type: ignore[arg-type]


def serial_gemm_layouts(m: int, k: int, n: int, pm: int, pn: int, pk: int = 1) -> tuple[Layout, Layout, Layout, Layout]:
    """(lhs, rhs, result, reduced result). Both operands spread once, unreplicated, over the
    output grid: each step's windows then come from a few whole blocks (one exchange per operand
    instead of fragmented windows). With `pk` contraction parts the grid is (pm, pn, pk), the
    operands' contraction axis split part-major (each part's share on its own tiles first), the
    result fp32 partials over grid dimension 2, reduced into column blocks over (pn, pk)."""
    if pk == 1:
        grid = (pm, pn)
        out = Layout((m, n), grid, ((0,), (1,)))
        return Layout((m, k), grid, ((0,), (1,))), Layout((k, n), grid, ((0,), (1,))), out, out
    grid = (pm, pn, pk)
    return (
        Layout((m, k), grid, ((0,), (2, 1))),
        Layout((k, n), grid, ((2, 0), (1,))),
        Layout((m, n), grid, ((0,), (1,)), partial=2),
        Layout((m, n), grid, ((0,), (1, 2))),
    )


def attention_layouts(
    grid: tuple[int, int, int, int], rows: int, hq: int, hkv: int, s: int, sk: int, d: int
) -> dict[str, Layout]:
    al = (1, rows, 1)
    return {
        "q": Layout((hq, s, d), grid, ((0, 1), (2,), ()), align=al),
        "kv": Layout((hkv, sk, d), grid, ((0,), (3,), ()), align=(1, 2, 1)),
        "state": Layout((hq, s, d + 2), grid, ((0, 1), (2,), ()), partial=3, align=al),
        "out": Layout((hq, s, d), grid, ((0, 1), (2, 3), ())),
    }


def attention_bias_layout(
    grid: tuple[int, int, int, int], rows: int, hq: int, hb: int, s: int, sk: int, form: str
) -> Layout:
    """An additive attention bias [hb, S, Sk] laid out like the scores it is added to: heads
    as q's (a shared bias, hb = 1, on every head's tiles), query rows as q's, keys as k's when
    materialized (each tile its key block) and whole when streamed (each window a slice)."""
    keys = (3,) if form == "materialized" else ()
    return Layout((hb, s, sk), grid, ((0, 1) if hb == hq else (), (2,), keys), align=(1, rows, 1))


def attention_window(hkv: int, sk: int, d: int, keys: int) -> Layout:
    """Streamed attention's keys/values: one window of keys per block, so each streaming step
    multicasts whole blocks."""
    return Layout((hkv, sk, d), (hkv, math.ceil(sk / keys)), ((0,), (1,), ()), align=(1, keys, 1))
