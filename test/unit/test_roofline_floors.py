"""bench/roofline.py's floors hold: no compiled plan runs below the plan floor, which counts the
exchange a grid cannot avoid on top of the kernel floor."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from common import parse_example  # noqa: E402
from roofline import all_floors, best_matmul_kernel_cycles, best_matmul_plan_cycles  # noqa: E402

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
