"""bench/roofline.py's floors hold: no compiled plan runs below the plan floor, which counts the
exchange a grid cannot avoid on top of the kernel floor."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from common import parse_example  # noqa: E402
from roofline import (  # noqa: E402
    _combine_marginal,
    all_floors,
    attention_plan_cycles,
    best_matmul_floor,
    best_matmul_kernel_cycles,
    best_matmul_plan_cycles,
    held_plan_cycles,
    unheld_plan_floor,
)

from ipu.codegen.ipuexe import build_package  # noqa: E402
from ipu.runtime.emulator import Emulator  # noqa: E402
from ipu.target import load_target  # noqa: E402
from ipu.transforms.pipeline import compile_passes  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(("m", "k", "n"), [(64, 256, 1024), (256, 1024, 256), (512, 64, 64), (16, 4096, 16)])
def test_plan_floor_adds_the_unavoidable_exchange(m: int, k: int, n: int) -> None:
    t = load_target("sim16")
    kernel = best_matmul_kernel_cycles(m, k, n, t)
    resident = best_matmul_plan_cycles(m, k, n, t, lhs_computed=False)
    computed = best_matmul_plan_cycles(m, k, n, t, lhs_computed=True)
    assert kernel <= resident <= computed
    # a computed lhs adds at most the receive of the whole lhs, and nothing when a grid's lhs
    # block is one tile's share of it ([16, 4096] split 16 ways over K)
    assert computed - resident <= m * k * 2 // t.rates["exchange_bytes_per_cycle"]


def test_plan_floor_without_a_k_split_is_the_kernel_floor() -> None:
    t = load_target("sim16")  # k = 16 cannot be split: every grid is rows x cols
    assert best_matmul_plan_cycles(1024, 16, 256, t, lhs_computed=False) == best_matmul_kernel_cycles(1024, 16, 256, t)


def test_plan_floor_receives_what_a_tile_cannot_hold() -> None:
    """mk2 mlp's up-projection swapped: with unbounded memory its best grid keeps a [357 x 1024]
    block of the weight a tile (731 KB); held to the tile's memory, the floor is the best grid
    that fits or pays for receiving its excess, never below the unbounded one."""
    t = load_target("mk2")
    unbounded = dataclasses.replace(t, memory_size=1 << 40)
    bounded_floor = best_matmul_plan_cycles(8192, 2048, 512, t, lhs_computed=False)
    unbounded_floor = best_matmul_plan_cycles(8192, 2048, 512, unbounded, lhs_computed=False)
    assert unbounded_floor == 217458 < bounded_floor == 226387
    # a matmul whose blocks fit anyway keeps its floor
    plain = (512, 2048, 8192)
    assert best_matmul_plan_cycles(*plain, t, False) == best_matmul_plan_cycles(*plain, unbounded, False)


@pytest.mark.parametrize(
    ("example", "target"),
    [("mlp_small.mlir", "sim16"), ("attention_small.mlir", "sim64"), ("transformer_block_small.mlir", "sim64")],
)
def test_compiled_plans_run_above_the_plan_floor(example: str, target: str) -> None:
    t = load_target(target)
    ref, ctx, module = parse_example(EXAMPLES / example)
    cf, _, kf, pf = all_floors(ref, t)
    for _, p in compile_passes(t.name):
        p.apply(ctx, module)
    cycles = Emulator(build_package(module, t), t, execute=False).run({}).total_cycles
    assert cf <= kf <= pf <= cycles


def test_half_partials_floors_sit_at_the_half_rate() -> None:
    """With fp16 partials the AMP runs at amp_f16_f16 (16 conv units): a GEMM's best kernel and
    plan cycles fall (16-unit passes, half the partials' bytes), and never below the FLOPs at the
    half rate."""
    t = load_target("mk2")
    m, k, n = 512, 1024, 1024
    half_floor = 2 * m * k * n / (t.tiles * t.rates["amp_f16_f16"])
    for fn in (best_matmul_kernel_cycles, lambda *a, **kw: best_matmul_plan_cycles(*a, lhs_computed=True, **kw)):
        f32, f16 = fn(m, k, n, t, pe=4), fn(m, k, n, t, pe=2)
        assert half_floor <= f16 < f32


def test_held_floor_keeps_every_tiles_weights_within_its_memory() -> None:
    """Plans chosen together: while the fronts' cheapest points fit a tile's memory the floor is
    their sum; past it, each byte beyond is received at the exchange rate, or a point keeping
    less (and running slower) is taken, whichever costs less."""
    t = load_target("mk2")
    rate, mem = t.rates["exchange_bytes_per_cycle"], t.memory_size
    fits = [[(0, 900), (100_000, 500)], [(0, 800), (200_000, 300)]]
    assert held_plan_cycles(fits, t) == 500 + 300
    # two matmuls each fastest with 400 KB resident: together 800 KB, beyond 624 KB
    crowded = [[(0, 60_000), (400_000, 10_000)], [(0, 20_000), (400_000, 10_000)]]
    both = 20_000 + (800_000 - mem) // rate
    assert held_plan_cycles(crowded, t) == min(both, 10_000 + 20_000)
    # the floor rounds resident bytes down (HELD_QUANTUM): never above the exact minimum
    odd = [[(mem // 2 + 1, 1000)], [(mem // 2 + 1, 1000)]]
    assert held_plan_cycles(odd, t) <= 2000 + 2 // rate + 1


def test_held_floor_is_not_below_the_unheld_one() -> None:
    """mk2 transformer_stack: four layers' weights replicated in their fastest grids would need
    several times a tile's memory, so the held floor rises above the unheld one (and a model
    whose fastest grids fit keeps it)."""
    t = load_target("mk2")
    ref, _, _ = parse_example(EXAMPLES / "transformer_stack.mlir")
    assert all_floors(ref, t)[3] > 1.1 * unheld_plan_floor(ref, t)
    small = load_target("sim16")
    ref, _, _ = parse_example(EXAMPLES / "mlp_small.mlir")
    assert all_floors(ref, small)[3] == pytest.approx(unheld_plan_floor(ref, small))


def test_sibling_matmuls_are_floored_fused_or_apart(tmp_path: Path) -> None:
    """q, k and v read one lhs with weights of their own: a plan may run them as one product
    (fuse-sibling-matmuls), so the floor is the cheaper of the fused product and the three apart
    (mk2, GPT-2 small's shapes: fused is cheaper)."""
    t = load_target("mk2")
    w = "#graph.gaussian<seed = {s}, std = 0.02> : tensor<768x768xf16>"
    mm = "graph.matmul %x, %w{s} : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>"
    body = "".join(f'  %w{s} = graph.parameter "w{s}" {w.format(s=s)}\n  %y{s} = {mm.format(s=s)}\n' for s in range(3))
    src = tmp_path / "qkv.mlir"
    src.write_text(
        "func.func @main(%x: tensor<128x768xf16>) -> (tensor<128x768xf16>, tensor<128x768xf16>, tensor<128x768xf16>)"
        f" {{\n{body}  func.return %y0, %y1, %y2 : tensor<128x768xf16>, tensor<128x768xf16>, tensor<128x768xf16>\n}}\n"
    )
    ref, _, _ = parse_example(src)
    apart = 3 * best_matmul_floor(128, 768, 768, t, False)[1]
    fused = best_matmul_floor(128, 768, 3 * 768, t, False)[1]
    assert fused < apart
    assert unheld_plan_floor(ref, t) == pytest.approx(min(apart, fused))


def test_attention_floor_pays_the_amps_fixed_costs_and_skips_the_masked_half() -> None:
    """GPT-2 small's attention (12 heads, 128 tokens, head 64) in per-tile blocks: above its
    FLOPs at the AMP's peak (a block of few rows pays every 16 x 16 group's fixed cost), below
    for causal than for full attention (only the blocks on or below the diagonal take tiles), and
    the plan (the row states combined, q, k and v received) above the kernel."""
    t = load_target("mk2")
    flops = 4 * 12 * 128 * 128 * 64 / (t.tiles * t.rates["amp_f16_f32"])
    full = attention_plan_cycles(12, 12, 128, 128, 64, 2, 1.0, t, computed=True)
    causal = attention_plan_cycles(12, 12, 128, 128, 64, 2, 0.5, t, computed=True)
    assert full is not None and causal is not None
    assert flops / 2 < causal[0] < full[0] and causal[1] < full[1]
    assert full[0] < full[1] and causal[0] < causal[1]
    assert attention_plan_cycles(12, 12, 128, 128, 64, 2, 1.0, t, computed=False)[1] < full[1]
    assert attention_plan_cycles(4096, 4096, 8, 8, 8, 2, 1.0, t, computed=True) is None  # more heads than tiles


def test_attention_floor_counts_the_combine_work_of_a_key_split() -> None:
    """A plan that splits a query block's keys over pk tiles combines pk row states: the floor
    adds the combine kernel's per-element work (its cycles less its fixed cost) on the block's
    rows shared by its pk tiles, over the key blocks a causal block sees on average; none
    without a key split."""
    t = load_target("mk2")
    assert _combine_marginal(1, 9, 64, 1.0, 2, t) == 0
    assert _combine_marginal(2, 9, 64, 0.5, 2, t) == 0  # a causal block of 2 key blocks: 1 on average
    work = t.attention_combine_cycles(8, 2, 64) - t.attention_combine_cycles(8, 0, 64)
    assert _combine_marginal(8, 9, 64, 1.0, 2, t) == work > 0
    causal = t.attention_combine_cycles(4, 2, 64) - t.attention_combine_cycles(4, 0, 64)
    assert _combine_marginal(8, 9, 64, 0.5, 2, t) == causal < work
