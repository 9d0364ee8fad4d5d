"""Cost-model formulas against hand-computed values."""

from __future__ import annotations

import pytest
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import TensorType, f16
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import plan
from ipu.dialects.layout import Layout
from ipu.target import load_target
from ipu.transforms.plan.cost import PlanMetrics, dominates, estimate, overflow
from ipu.transforms.plan.families import cost_of
from ipu.transforms.plan.layouts import plan_type
from ipu.transforms.plan.pricing import conversion_bound, conversion_cost, fragments
from ipu.transforms.plan.state import RESERVE_ATTR

T = load_target("sim16")


def test_fragments_by_hand() -> None:
    rows = Layout((64, 32), (16,), ((0,), ()))  # 4 rows x 32 per tile
    cols = Layout((64, 32), (16,), ((), (0,)))  # 64 x 2 per tile
    # a column block (all 64 rows) overlaps all 16 row blocks; a row block overlaps 16 column blocks
    assert fragments(rows, cols) == 16
    assert fragments(cols, rows) == 16
    assert fragments(rows, rows) == 1
    partial = Layout((64, 32), (4, 4), ((0,), ()), partial=1)
    assert fragments(partial, Layout((64, 32), (4, 4), ((0,), (1,)))) == 4  # one block, 4 partial copies


def test_conversion_cost_by_hand() -> None:
    src = plan_type(TensorType(f16, [64, 32]), Layout((64, 32), (16,), ((0,), ())))
    dst = plan_type(TensorType(f16, [64, 32]), Layout((64, 32), (16,), ((), (0,))))
    cycles, frag = conversion_cost(src, dst, T)
    # the move's endpoint bound: every tile receives its 64 x 2 block (64 words, its own 4 x 2
    # piece among them) and sends its 4 x 32 rows once (64 words); fragments add nothing
    words = 64 * 2 * 2 // 4
    assert frag == 16
    assert cycles == words + 600 + 120


def test_conversion_bound_counts_a_multicast_once() -> None:
    rows = Layout((64, 32), (16,), ((0,), ()))
    every = Layout((64, 32), (16,), ((), ()))  # the whole tensor replicated on every tile
    # each tile receives all 64 x 32 halves (1024 words) and sends its 4 rows (64 words) once
    assert conversion_bound(rows, every, 2, None, 16) == 64 * 32 * 2 // 4
    # the reverse keeps every tile's own rows: it receives and sends 64 words
    assert conversion_bound(every, rows, 2, None, 16) == 4 * 32 * 2 // 4
    # fp32 partials over 4 K parts reduced onto their 4 x 4 grid: 4 staged copies of a block
    partial = Layout((64, 32), (4, 4), ((0,), ()), partial=1)
    assert conversion_bound(partial, Layout((64, 32), (4, 4), ((0,), (1,))), 4, None, 16) == 4 * 16 * 8


def test_gemm_and_memory_by_hand() -> None:
    grid = (4, 4, 1)
    a_t = plan_type(TensorType(f16, [64, 128]), Layout((64, 128), grid, ((0,), (2,))))
    w_t = plan_type(TensorType(f16, [128, 64]), Layout((128, 64), grid, ((2,), (1,))), "interleaved")
    r_t = plan_type(TensorType(f16, [64, 64]), Layout((64, 64), grid, ((0,), (1,))), "interleaved")
    b = Block(arg_types=[a_t])
    w = plan.ParameterOp("w", builtin.DenseIntOrFPElementsAttr.from_list(TensorType(f16, [1]), [1.0]), w_t)
    g = plan.GemmOp(b.args[0], w.result, r_t, 1)
    b.add_ops([w, g, func.ReturnOp(g.result)])
    f = func.FuncOp("main", builtin.FunctionType.from_lists([a_t], [r_t]), Region(b))
    comp, exch, phases, frags = cost_of(g, T)
    # per tile: [16 x 128] x [128 x 16], PopLibs' AMP estimate: 2 or 3 rows a worker (I_z 204,
    # I_nz 210), 8 input groups, 1 output group of 2 passes, 16 weight-load cycles a pass
    assert comp == 50 + 6 * (7 + 3 * 7) + 13 + 7 * (15 + (19 + 2 * (6 + 16 + 210))) + 11 + (18 + 2 * (7 + 16 + 204))
    assert (exch, phases, frags) == (0, 0, 0)
    m = estimate(f, T)
    assert m.estimated_cycles == comp
    # live at the gemm: input 16x128 fp16 (standard), weight 128x16 and result 16x16 (interleaved)
    assert m.peak_standard_bytes == 16 * 128 * 2
    assert m.peak_interleaved_bytes == 128 * 16 * 2 + 16 * 16 * 2
    assert m.peak_total_bytes == m.peak_standard_bytes + m.peak_interleaved_bytes
    assert m.active_tile_counts == {16}
    assert m.fits


def test_pareto_dominance() -> None:
    a = PlanMetrics(estimated_cycles=10, estimated_exchange_cycles=5, peak_total_bytes=100)
    b = PlanMetrics(estimated_cycles=12, estimated_exchange_cycles=5, peak_total_bytes=100)
    c = PlanMetrics(estimated_cycles=9, estimated_exchange_cycles=5, peak_total_bytes=200)
    assert dominates(a, b) and not dominates(b, a)
    assert not dominates(a, c) and not dominates(c, a)
    assert not dominates(a, a)


def test_padding_groups_by_hand() -> None:
    # 6 heads of 64 columns over 4 column parts: blocks of 2 whole heads (128), the last part empty
    six_on_four = Layout((128, 384), (1, 4), ((0,), (1,)), align=(1, 64))
    assert six_on_four.block == (128, 128)
    assert six_on_four.padding_groups == (6,)
    # over 2 parts the heads divide evenly: no padding, no groups reported
    assert Layout((128, 384), (1, 2), ((0,), (1,)), align=(1, 64)).padding_groups == ()
    # an alignment of 2 keeps 32-bit words whole; it forms no groups even when it pads
    assert Layout((128, 30), (1, 4), ((0,), (1,)), align=(1, 2)).padding_groups == ()


def test_attention_bias_is_priced_by_hand() -> None:
    """A bias adds one in-place add over each update's [qr, kr] fp32 scores and its block's bytes
    (materialized: [qr, kr]; streamed: [qr, all keys], plus each window's columns exchanged)."""
    from ipu.transforms.plan.families.attention import attention_candidates

    hq, hkv, s, sk, d = 8, 2, 64, 64, 16
    for form in ("materialized", "streamed"):
        plain = attention_candidates(hq, hkv, s, sk, d, 2, form, T)
        biased = attention_candidates(hq, hkv, s, sk, d, 2, form, T, bias=True)
        assert [c.grid for c in plain] == [c.grid for c in biased]
        for a, b in zip(plain, biased, strict=True):
            qr, kr = a.rows, a.keys
            if form == "materialized":
                assert b.bytes_per_tile - a.bytes_per_tile == qr * kr * 2
                assert b.cycles - a.cycles == T.binary_cycles("add", qr * kr, 2, in_place=True)  # half scores
            else:
                steps = -(-sk // kr)
                assert b.bytes_per_tile - a.bytes_per_tile == qr * sk * 2
                add = T.binary_cycles("add", qr * kr, 2, in_place=True)
                assert b.cycles - a.cycles == steps * (add + qr * kr * 2 // 4)
    # 512 fp32 scores: 86 a worker, 43 vectors of 2 floats, BinaryOp1DInPlace (prologue 58);
    # 512 half scores: 22 vectors of 4
    for e, vectors in ((4, 43), (2, 22)):
        bias_add = 11 + 6 * (58 + 3 * vectors)
        assert T.attention_bias_update_cycles(16, 32, 64, e) == T.attention_update_cycles(16, 32, 64, e) + bias_add
        # a query block that came scaled (map-tiles scales it once): its 512 scores are not scaled
        unscaled = T.attention_update_cycles(16, 32, 64, e, scaled=False)
        assert T.attention_update_cycles(16, 32, 64, e) - unscaled == 11 + 6 * (58 + 3 * vectors)
    # the scaling itself, [16, 64] halves: 171 a worker, 43 vectors of 4, BinaryOp1D (prologue 26)
    assert T.attention_prescale_cycles(16, 64) == 11 + 6 * (26 + 3 * 43)


def _args_only(*layouts: tuple[Layout, str]) -> func.FuncOp:
    """A function that returns its arguments (f16, one per layout): all live at its one op."""
    types = [plan_type(TensorType(f16, list(lay.shape)), lay, mem) for lay, mem in layouts]
    b = Block(arg_types=types)
    b.add_op(func.ReturnOp(*b.args))
    return func.FuncOp("main", builtin.FunctionType.from_lists(types, types), Region(b))


def test_memory_peak_is_the_worst_tiles() -> None:
    """Values on disjoint tile ranges do not add up (place-storage gives them one address); the
    peak is the busiest tile's, with each value's block bytes on its layout's tiles only."""
    big = (8, 200_000)  # one 1 x 200000 f16 block per tile: 400000 bytes of 621488
    rows = ((0,), ())
    a = Layout(big, (8,), rows)
    b = Layout(big, (8,), rows, first_tile=8)
    m = estimate(_args_only((a, "standard"), (b, "standard")), T)
    assert m.peak_standard_bytes == m.peak_total_bytes == 400_000
    assert m.fits
    # on tiles [4, 12) the second meets the first on tiles 4-7: both count, and they do not fit
    m = estimate(_args_only((a, "standard"), (Layout(big, (8,), rows, first_tile=4), "standard")), T)
    assert m.peak_standard_bytes == m.peak_total_bytes == 800_000
    assert not m.fits
    # classes peak on their own busiest tiles; the total is one tile's sum
    small = Layout((4, 1000), (4,), rows, first_tile=12)  # 2000 bytes on tiles 12-15
    m = estimate(_args_only((a, "standard"), (b, "standard"), (small, "interleaved")), T)
    assert (m.peak_standard_bytes, m.peak_interleaved_bytes, m.peak_total_bytes) == (400_000, 2000, 402_000)


def test_overflow_names_what_does_not_fit() -> None:
    """The fit check on sim16 (624 KiB tiles: a 208 KiB executable region, a 416 KiB
    interleaved one): code and exchange rows come first, the rows taken to fill the executable
    region at most (the estimate is an upper bound); the data peaks share what is left, less a
    slack for placement."""
    fits = PlanMetrics(
        code_bytes=4096, exchange_row_bytes=100_000, peak_interleaved_bytes=300_000, peak_total_bytes=480_000
    )
    assert overflow(fits, T) == ""
    inter = PlanMetrics(peak_interleaved_bytes=500_000, peak_total_bytes=500_000)
    assert overflow(inter, T) == "interleaved data peaks at 500000 bytes per tile of 425984"
    total = PlanMetrics(exchange_row_bytes=100_000, peak_total_bytes=500_000)
    assert overflow(total, T) == (
        "data peaks at 500000 bytes per tile, beside 16384 bytes of code and 100000 of exchange rows, "
        "of 638976 less 32768 kept for placement"
    )
    # rows estimated past the executable region count as filling it: 638976 - 212992 - 32768 left
    assert overflow(PlanMetrics(exchange_row_bytes=300_000, peak_total_bytes=393_216), T) == ""
    assert "of exchange rows" in overflow(PlanMetrics(exchange_row_bytes=300_000, peak_total_bytes=393_217), T)


_K_SPLIT = """func.func @main(%x: tensor<64x1024xf16>) -> tensor<64x256xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 3, std = 0.02> : tensor<1024x256xf16>
  %g = graph.gelu %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = graph.matmul %g, %w : (tensor<64x1024xf16>, tensor<1024x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}"""


@pytest.mark.parametrize("model", ["k_split", "attention_small.mlir"])
def test_memory_peaks_count_the_staging_of_partial_sums(model: str) -> None:
    """A reduce (or attention combine) stages every part of its result block, f32, on the
    result's tiles (map-tiles' `_stage` move): no plan value, so the plan's memory peaks add it
    themselves, byte for byte what map-tiles allocates."""
    from conftest import EXAMPLES
    from xdsl.parser import Parser

    from ipu.context import make_context
    from ipu.dialects import tilemap
    from ipu.transforms.pipeline import compile_passes
    from ipu.transforms.plan.cost import _staging

    ctx = make_context()
    text = _K_SPLIT if model == "k_split" else (EXAMPLES / model).read_text()
    module = Parser(ctx, text).parse_module()
    staged: dict[str, int] = {}
    planned = None
    for label, p in compile_passes("sim16", {"finalists": 1}):
        p.apply(ctx, module)
        if label not in ("plan_ops", "map_tiles"):
            continue
        f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
        if label == "plan_ops":
            planned = estimate(f, T)
            ops = [o for o in f.walk() if isinstance(o, plan.ReduceOp | plan.AttentionCombineOp)]
            staged = {o.results[0].name_hint: _staging(o)[0] for o in ops}
            assert staged and all(staged.values())
        if label == "map_tiles":
            moves = {o.result.name_hint: o.result.type.nbytes for o in f.walk() if isinstance(o, tilemap.MoveOp)}
            assert {h: moves[f"{h}_stage"] for h in staged} == staged
    assert planned is not None and planned.fits


_QKV = "(tensor<4x64x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>)"
_STREAMED = f"""
func.func @main(%q: tensor<4x64x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x64x16xf16>) -> tensor<4x64x16xf16> {{
  %h = graph.attention %q, %k, %v {{form = "streamed", key_block = 32, causal}} : {_QKV} -> tensor<4x64x16xf16>
  func.return %h : tensor<4x64x16xf16>
}}"""


@pytest.mark.parametrize("model", ["streamed", "attention_small.mlir"])
def test_memory_peaks_count_the_attention_scratch(model: str) -> None:
    """An attention's buffers beside its operands and state (the score scratch in the inputs'
    dtype, the offsets, the scaled query block and, streamed, one key and one value window in
    interleaved memory) have no plan value: the plan's peaks add them, byte for byte what
    map-tiles allocates."""
    from conftest import EXAMPLES
    from xdsl.parser import Parser

    from ipu.context import make_context
    from ipu.dialects import tilemap
    from ipu.transforms.pipeline import compile_passes
    from ipu.transforms.plan.cost import _scratch

    ctx = make_context()
    text = _STREAMED if model == "streamed" else (EXAMPLES / model).read_text()
    module = Parser(ctx, text).parse_module()
    want: dict[str, tuple[int, int]] = {}
    for label, p in compile_passes("sim16", {"finalists": 1}):
        p.apply(ctx, module)
        f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
        if label == "plan_ops":
            ops = [o for o in f.walk() if isinstance(o, plan.AttentionOp)]
            assert [o.form.data for o in ops] == ["streamed" if model == "streamed" else "materialized"]
            want = {o.result.name_hint: _scratch(o)[:2] for o in ops}
        if label == "map_tiles":
            size = {o.results[0].name_hint: o.results[0].type.nbytes for o in f.walk() if o.results}
            for h, (std, inter) in want.items():
                # attention_small's scale is folded into wq (fold-attention-scale): no scaled query
                got_std = size[f"{h}_scores"] + size[f"{h}_offsets"] + size.get(f"{h}_q_scaled", 0)
                assert (got_std, size.get(f"{h}_k0", 0) + size.get(f"{h}_v0", 0)) == (std, inter)
                scores = next(o for o in f.walk() if isinstance(o, tilemap.AllocOp))
                assert scores.result.type.element_type == builtin.f16  # half attention: half scores
            break


def test_streamed_attention_leaves_the_amp_its_interleaved_memory() -> None:
    """A streamed window of kb keys takes 2 kb d bytes-per-element of interleaved memory for
    its key and value windows, and as much again on the tiles the windows come from: a window
    that would not fit there beside the query block is not a candidate, however cheap (the long
    streamed attention's 512-key window, which place-storage could not place)."""
    from ipu.transforms.plan.budget import MEMORY_FRACTION
    from ipu.transforms.plan.families.attention import attention_candidates, choose_attention

    mk2 = load_target("mk2")
    cands = attention_candidates(32, 8, 4096, 4096, 128, 2, "streamed", mk2)
    for c in cands:
        assert c.interleaved_bytes == (c.rows + 4 * c.keys) * 128 * 2
    cap = MEMORY_FRACTION * sum(r.size for r in mk2.regions if r.interleaved)
    chosen = choose_attention(32, 8, 4096, 4096, 128, 2, "streamed", mk2)
    assert chosen.interleaved_bytes <= cap
    assert any(c.keys == 512 and c.cycles < chosen.cycles and c.interleaved_bytes > cap for c in cands)


def test_a_reserve_is_left_free() -> None:
    """A function's `plan.reserve` (bytes per tile) is left free beside the placement slack."""
    small = Layout((1, 100_000), (1,), ((), ()))  # 200,000 bytes standard and interleaved on tile 0
    f = _args_only((small, "standard"), (small, "interleaved"))
    assert estimate(f, T).fits
    f.attributes[RESERVE_ATTR] = builtin.IntegerAttr(200_000, 64)
    assert not estimate(f, T).fits
    f.attributes[RESERVE_ATTR] = builtin.StringAttr("lots")
    with pytest.raises(DiagnosticException, match="plan.reserve must be a non-negative integer"):
        estimate(f, T)


def test_overflow_leaves_the_reserve_free() -> None:
    fits = PlanMetrics(code_bytes=4096, peak_interleaved_bytes=300_000, peak_total_bytes=480_000)
    assert overflow(fits, T) == ""
    assert overflow(fits, T, reserve=130_000) == "interleaved data peaks at 300000 bytes per tile of 295984"
    total = PlanMetrics(code_bytes=4096, peak_total_bytes=480_000)
    assert overflow(total, T, reserve=130_000).endswith("of 638976 less 162768 kept for placement")
