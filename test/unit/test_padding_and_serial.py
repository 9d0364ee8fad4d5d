"""The zeroed tail of a padded move destination (`Layout.data_prefix`) and the serial GEMM's
output grids (`block_parts`, `serial_grids`, `choose_serial_gemm`), held against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu.dialects.layout import Layout
from ipu.target import load_target
from ipu.transforms.plan.budget import op_budget
from ipu.transforms.plan.families.gemm import (
    SERIAL_STEPS,
    block_parts,
    choose_serial_gemm,
    serial_candidate,
    serial_grids,
)


def _data_mask(lay: Layout) -> np.ndarray:
    """[tiles, block elements]: whether each block element holds data on each tile."""
    masks = []
    for blk in lay.tile_blocks():
        m = np.ones(lay.block, bool)
        for a, p in enumerate(blk):
            lo, hi = lay.extent(a, int(p))
            idx = [slice(None)] * len(lay.shape)
            idx[a] = slice(hi - lo, None)
            m[tuple(idx)] = False
        masks.append(m.reshape(-1))
    return np.array(masks)


def _random_layout(rng: np.random.Generator) -> Layout:
    rank = int(rng.integers(1, 4))
    shape = tuple(int(rng.integers(1, 13)) for _ in range(rank))
    grid = tuple(int(rng.integers(1, 5)) for _ in range(rank))
    split = tuple((a,) for a in range(rank))
    align = tuple(int(rng.choice([1, 1, 2, 3, 4])) for _ in range(rank))
    return Layout(shape, grid, split, align=align)


def test_data_prefix_is_the_longest_prefix_of_data_on_every_tile() -> None:
    rng = np.random.default_rng(5)
    for _ in range(400):
        lay = _random_layout(rng)
        data = _data_mask(lay).all(axis=0)  # element holds data on every tile
        tight = int(np.argmin(data)) if not data.all() else data.size
        assert lay.data_prefix == tight, lay


def test_data_prefix_of_row_padding_is_the_last_block() -> None:
    # the serial GEMM's lhs window: 4096 rows over 23 tiles are blocks of 179, the last 158
    assert Layout((4096, 684), (23,), ((0,), ())).data_prefix == 158 * 684
    # column padding leaves only the first row's real columns
    assert Layout((1024, 8192), (4, 92), ((0,), (1,))).data_prefix == 2


@pytest.mark.parametrize(("n", "limit"), [(4096, 1472), (50257, 736), (10, 64), (1, 5), (97, 7)])
def test_block_parts_are_every_distinct_block_once(n: int, limit: int) -> None:
    parts = block_parts(n, limit)
    sizes = [math.ceil(n / p) for p in parts]
    assert sizes == sorted(set(sizes), reverse=True)
    assert set(sizes) == {math.ceil(n / p) for p in range(1, min(limit, n) + 1)}
    for p, b in zip(parts, sizes, strict=True):  # the fewest parts giving that block
        assert p == 1 or math.ceil(n / (p - 1)) > b


@pytest.mark.parametrize("mkn", [(512, 1024, 512), (96, 2048, 1000), (1000, 512, 64)])
def test_serial_choice_is_the_cheapest_grid(mkn: tuple[int, int, int]) -> None:
    t = load_target("sim64")
    m, k, n = mkn
    budget = op_budget(t, 0)
    best = None
    grids = set(serial_grids(m, n, t.tiles))
    for pm in range(1, min(m, t.tiles) + 1):  # every grid, not only the distinct block sizes
        most = min(t.tiles // pm, max(1, n // 16))
        for pn in range(1, most + 1):
            if 4 * pm * pn < 3 * t.tiles and pn != most:
                continue
            for s in SERIAL_STEPS:
                c = serial_candidate(m, k, n, 2, t, pm, pn, s)
                if c.bytes_per_tile <= budget:
                    best = (
                        c if best is None or (c.cycles, c.bytes_per_tile) < (best.cycles, best.bytes_per_tile) else best
                    )
                    break
    got = choose_serial_gemm(m, k, n, 2, t, 0)  # unsplit unless asked (`split`)
    assert got is not None and best is not None and got.cycles == best.cycles and got.pk == 1
    # the grids use at least 3/4 of the tiles, or the most column parts their row split allows
    for pm, pn, pk in grids:
        assert pk == 1 and (4 * pm * pn >= 3 * t.tiles or pn == min(t.tiles // pm, max(1, n // 16)))
