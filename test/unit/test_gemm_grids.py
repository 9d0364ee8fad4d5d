"""The matmul grids the planner weighs: uneven row splits for short matmuls."""

from ipu.target import load_target
from ipu.transforms.plan.budget import divisor_like
from ipu.transforms.plan.families.gemm import UNEVEN_ROWS, choose_gemm, gemm_candidates, gemm_grids


def _even(m: int, k: int, pm: int, pk: int, tiles: int) -> bool:
    return pm in divisor_like(m, tiles) and pk in divisor_like(max(k // 16, 1), tiles // pm)


def test_short_matmuls_get_uneven_row_splits():
    grids = gemm_grids(128, 768, 768, 1472)
    assert (3, 48, 8) in grids  # 128 rows as 3 blocks of 43
    assert all(pm * pn * pk <= 1472 for pm, pn, pk in grids)
    assert all(_even(128, 768, pm, pk, 1472) for pm, _, pk in gemm_grids(128, 768, 768, 1472, uneven=False))


def test_long_matmuls_keep_the_even_splits():
    m = 2 * UNEVEN_ROWS
    assert all(_even(m, 2048, pm, pk, 1472) for pm, _, pk in gemm_grids(m, 2048, 2048, 1472))


def test_an_uneven_grid_wins_gpt2s_projection():
    """GPT-2 small's attention projection at 128 tokens: 3 row blocks leave 490 tiles to the
    columns and K, where 2 leave 736 that 768 columns and 48 K groups fill worse (plain grids:
    the uneven rule weighs an uneven grid against the even plain ones)."""
    t = load_target("mk2")
    best = choose_gemm(128, 768, 768, 2, True, t)
    even = min(
        (
            c
            for c in gemm_candidates(128, 768, 768, 2, True, t)
            if not c.swapped and _even(128, 768, c.pm, c.pk, t.tiles)
        ),
        key=lambda c: c.cycles,
    )
    assert not _even(128, 768, best.pm, best.pk, t.tiles)
    assert best.cycles < 0.85 * even.cycles
