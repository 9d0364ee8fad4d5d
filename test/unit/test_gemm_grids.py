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


def test_memoized_candidates_price_the_lhs_layout_they_are_given():
    """The candidates are memoized without the lhs's current layout and repriced where it spares
    a move: for every layout asked, each candidate equals pricing its grid alone with it (the
    grids laid out as the lhs is pay no lhs move; the swapped ones always move it)."""
    from ipu.transforms.plan.families.gemm import gemm_candidate

    t = load_target("sim64")
    cands = gemm_candidates(64, 256, 192, 2, True, t)
    layouts = {c.layouts.a for c in cands if not c.swapped}
    assert len(layouts) > 3
    cheaper = 0
    for a in [None, *sorted(layouts, key=str)[:6]]:
        got = gemm_candidates(64, 256, 192, 2, True, t, a_current=a)
        want = tuple(
            gemm_candidate(64, 256, 192, 2, True, t, False, 1, a, c.grid, None, False, c.swapped) for c in cands
        )
        assert got == want
        cheaper += sum(g.exchange_cycles < c.exchange_cycles for g, c in zip(got, cands, strict=True))
    assert cheaper > 0  # some grid was laid out as a given lhs and spared its move


def test_amp_cycles_memo_matches_the_formula():
    """A target memoizes its AMP vertex cycles by their arguments: the same figures as the formula."""
    t = load_target("mk2")
    for args in [(128, 768, 96, False, 4), (43, 64, 16, True, 2), (1, 16, 16, False, 4), (128, 768, 96, False, 4)]:
        assert t.amp_matmul_cycles(*args) == t._amp_vertex_cycles(*args, 1, 0, 0)
    c = t.costs
    kernel = 3 * c["amp_kernel_row"] + 9 * c["amp_kernel_position"]
    seg = c["workers"] * c["amp_segment"] * max(0, -(-4 // c["workers"]) - 1)
    for _ in range(2):
        assert t.amp_conv_cycles(4, 16, 32, 64, 3, 3) == t._amp_vertex_cycles(64, 32, 64, False, 4, 9, kernel, seg)
