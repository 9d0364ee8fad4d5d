"""Exchange scheduling quality and speed: prints, never asserts.

Part 1, per example on a target (default mk2): every scheduled phase's transfers (logical members),
families after scheduling, endpoint lower bound, horizon, gap, runs per transfer, the scheduler
that won and the phase's longest route under the screened tile mapping; per example the sum of
horizons over the sum of lower bounds and the time of the schedule-exchange pass.
Part 2: synthetic 1472-tile phases of ~100,000 transfers (random 1-64 and 1-512 words, hot tiles,
64 shifts, balanced), each scheduled --repeat times (median seconds, numba cache warm after the
first call), with the horizon over the bound and runs per transfer.
Goals (issue 5): unicast phases at the bound, multicast within 5%, about one run per transfer on
structured phases, a 100,000-transfer phase in under 1 s.
Usage: python bench/exchange.py [--target mk2] [--repeat 3] [--no-examples] [examples ...]
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from common import example_parser, example_path  # bench/ is the script's directory
from xdsl.dialects import func

from ipu.abi.tables import MOVE
from ipu.abi.transfers import (
    D_OFF,
    D_STR,
    D_TILE,
    MC,
    MCS,
    PC,
    PDS,
    PSS,
    ROWS,
    S_OFF,
    S_STR,
    S_TILE,
    WORDS,
    split_start,
)
from ipu.api import parse
from ipu.context import make_context
from ipu.dialects import exchange, tilemap
from ipu.dialects.table import table_of
from ipu.target import load_target
from ipu.transforms.exchange.schedulers import endpoint_lower_bound, schedule_phase
from ipu.transforms.pipeline import compile_passes


def example_phases(path: Path, target: str) -> None:
    ctx = make_context()
    module = parse(Path(path))
    seconds = 0.0
    for name, p in compile_passes(target):
        if name == "place_storage":
            break
        t0 = time.perf_counter()
        p.apply(ctx, module)
        if name == "schedule_exchange":
            seconds = time.perf_counter() - t0
    lbs = hs = 0
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp) and tilemap.MAPPING_ATTR in o.attributes)
    print(f"  tile_mapping={tilemap.mapping_of(f)}")
    for index, ph in enumerate(o for o in module.walk() if isinstance(o, exchange.PhaseOp)):
        t = split_start(table_of(ph.transfers))[1]
        logical = ph.logical_transfers.value.data if ph.logical_transfers else 0
        runs = int((t[:, PC] * t[:, MC]).sum())
        lb, h = ph.lower_bound.value.data, ph.horizon.value.data
        lbs, hs = lbs + lb, hs + h
        multicast = bool((t[:, MC] > 1).any()) or ph.scheduler.data.endswith("unicast-expanded")
        print(
            f"  phase={index} transfers={logical} families={len(t)} lower_bound={lb} horizon={h} "
            f"gap={h - lb} ({(h - lb) / max(lb, 1):.1%}) runs_per_transfer={runs / max(logical, 1):.3f} "
            f"multicast={int(multicast)} route_cycles={ph.route_cycles.value.data if ph.route_cycles else '-'} "
            f"scheduler={ph.scheduler.data}"
        )
    print(f"example={path.name} sum_horizon/sum_lower_bound={hs / max(lbs, 1):.4f} schedule_exchange_s={seconds:.2f}")


def synthetic(kind: str, tiles: int, rng: np.random.Generator) -> np.ndarray:
    """A unicast move table of one-row transfers (each its own family) with distinct destinations."""
    n = 100_000
    if kind == "shifts64":
        shifts = rng.choice(np.arange(1, tiles), 64, replace=False)
        src = np.tile(np.arange(tiles), 64)[:n]
        dst = (src + np.repeat(shifts, tiles)[:n]) % tiles
        words = np.repeat(rng.integers(100, 401, 64), tiles)[:n]
        n = len(src)
    else:
        src, dst = rng.integers(0, tiles, n), rng.integers(0, tiles, n)
        hi = {"random64": 64, "random512": 512, "hot": 64, "balanced": 64}[kind]
        words = rng.integers(1, hi + 1, n)
        if kind == "hot":  # 5% of the tiles receive 20x the traffic
            hot = rng.choice(tiles, tiles // 20, replace=False)
            pick = rng.random(n) < 0.5
            dst[pick] = rng.choice(hot, int(pick.sum()))
        if kind == "balanced":  # a union of permutations: every port carries the same load
            src = np.tile(np.arange(tiles), n // tiles + 1)[:n]
            dst = np.concatenate([rng.permutation(tiles) for _ in range(n // tiles + 1)])[:n]
    t = np.zeros((n, len(MOVE)), np.int64)
    t[:, S_TILE], t[:, D_TILE] = src, dst
    order = np.argsort(dst, kind="stable")
    off = np.zeros(n, np.int64)
    w4 = 4 * words[order]
    csum = np.cumsum(w4) - w4
    first = np.searchsorted(dst[order], dst[order])
    off[order] = csum - csum[first]
    t[:, S_OFF], t[:, S_STR], t[:, D_OFF], t[:, D_STR] = 0, 4 * words, off, 4 * words
    t[:, ROWS], t[:, WORDS] = 1, words
    t[:, [PC, PSS, PDS, MC, MCS]] = 1
    return t


def main() -> None:
    ap = example_parser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-examples", action="store_true")
    a = ap.parse_args()
    t = load_target(a.target)
    print(f"target={t.name} tiles={t.tiles}")
    if not a.no_examples:
        for name in a.examples:
            example_phases(example_path(name), t.name)
    rng = np.random.default_rng(0)
    schedule_phase(synthetic("random64", t.tiles, rng)[:1000], t.tiles)  # load the numba cache
    for kind in ("random64", "random512", "hot", "shifts64", "balanced"):
        table = synthetic(kind, t.tiles, rng)
        lb = endpoint_lower_bound(table, t.tiles)
        times = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            out, s = schedule_phase(table, t.tiles)
            times.append(time.perf_counter() - t0)
        runs = int((out[:, PC] * out[:, MC]).sum())
        print(
            f"synthetic={kind} transfers={len(table)} lower_bound={lb} horizon={s.horizon} "
            f"ratio={s.horizon / lb:.4f} runs_per_transfer={runs / len(table):.3f} families={len(out)} "
            f"scheduler={s.scheduler} median_s={statistics.median(times):.3f}"
        )


if __name__ == "__main__":
    main()
