"""The run profile (`ipu-run --profile out.json`): where a run's cycles and memory went.

Built from the emulator's records and the package alone. Cycles per superstep (compute, sync,
exchange, in program order with start cycles), per exchange phase, per kernel, per graph
operation and per tile; memory per tile by class. Kernel and exchange cycles are attributed to
graph operations by program order: the work between two checkpoints belongs to the operation
checkpointed second (the compiler checkpoints every graph operation after its last kernel), and
work after the last checkpoint to "(epilogue)".
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from ipu.abi.isa import DTYPE_SIZE
from ipu.abi.package import Binding, Package
from ipu.abi.tables import SLICE, TRANSFER
from ipu.abi.transfers import port_words
from ipu.runtime.emulator import RunResult
from ipu.target import Target

SCHEMA = "ipu-profile/2"  # 2: ops are keyed by graph value name ("op": "h"), not op index


def _tile_bytes(b: Binding, tiles: int) -> np.ndarray:
    """Bytes each tile holds of binding `b` (every replica counts)."""
    out = np.zeros(tiles, np.int64)
    s = b.slices.reshape(-1, len(SLICE))
    es = DTYPE_SIZE[b.dtype]
    for lo, ls, rows, re, tile, tc, ts, addr, tstride in s.tolist():
        del lo, ls, addr, tstride
        t = tile + ts * np.arange(tc)
        np.add.at(out, t[(t >= 0) & (t < tiles)], rows * re * es)
    return out


def memory_per_tile(pkg: Package, tiles: int) -> dict[str, list[int]]:
    """Per tile: code, weights, inputs, outputs and checkpoint bytes (the package's bindings)."""
    code = np.zeros(tiles, np.int64)
    for p in pkg.programs:
        code[p.first_tile : p.first_tile + p.tile_count] += len(p.code)
    out = {"code": code}
    for cls, bs in (
        ("weights", pkg.weights),
        ("inputs", pkg.inputs),
        ("outputs", pkg.outputs),
        ("checkpoints", [c.binding for c in pkg.checkpoints]),
    ):
        acc = np.zeros(tiles, np.int64)
        for b in bs:
            acc += _tile_bytes(b, tiles)
        out[cls] = acc
    return {k: v.tolist() for k, v in out.items()}


def _phase_words(pkg: Package, tiles: int) -> dict[int, tuple[list[int], list[int]]]:
    """Per phase index: words each tile sends and receives (a multicast member sends once)."""
    out = {}
    for ph in pkg.phases:
        t = np.asarray(ph.transfers, np.int64).reshape(-1, len(TRANSFER))
        sent, recv = port_words(t, tiles) if len(t) else (np.zeros(tiles, np.int64),) * 2
        out[ph.index] = (sent.tolist(), recv.tolist())
    return out


def _superstep(index: int, start: int) -> dict[str, Any]:
    return {"index": index, "start": start, "compute_cycles": 0, "sync_cycles": 0, "exchange_cycles": 0}


def build_profile(
    pkg: Package, target: Target, result: RunResult, locations: dict[str, str] | None = None
) -> dict[str, Any]:
    """The profile document of one run (JSON-serialisable). `locations` maps graph values (their
    stable names) to their IR locations (`file:line`), when the source is known."""
    tiles = target.tiles
    names = {c.value: c.name for c in pkg.checkpoints if c.aspect == "value"}
    ckpt_op = {c.index: c.value for c in pkg.checkpoints}
    timeline: list[dict[str, Any]] = []
    supersteps: list[dict[str, Any]] = []
    phases: dict[int, dict[str, Any]] = {}
    kernels: dict[str, dict[str, int]] = defaultdict(lambda: {"calls": 0, "cycles": 0, "tile_cycles": 0})
    per_op: dict[str, dict[str, int]] = defaultdict(lambda: {"compute_cycles": 0, "exchange_cycles": 0, "calls": 0})
    tile_compute = np.zeros(tiles + 1, np.int64)
    pending: dict[str, int] = {"compute_cycles": 0, "exchange_cycles": 0, "calls": 0}
    clock = 0
    step = _superstep(0, 0)
    for rec in result.profile:
        kind = rec["kind"]
        if kind in ("host_write", "host_read"):
            continue
        cyc = int(rec["cycles"])
        entry = {"kind": kind, "index": rec["index"], "start": clock, "cycles": cyc}
        if kind == "compute":
            for _prog, kernel, first, count, c in rec["calls"]:
                k = kernels[kernel]
                k["calls"] += 1
                k["cycles"] += c
                k["tile_cycles"] += c * count
                tile_compute[first] += c
                tile_compute[first + count] -= c
            pending["compute_cycles"] += cyc
            pending["calls"] += len(rec["calls"])
            step["compute_cycles"] += cyc
        elif kind == "sync":
            step["sync_cycles"] += cyc
        elif kind == "exchange":
            entry |= {"phase": rec["index"], "horizon": rec["horizon"], "route_cycles": rec["route_cycles"]}
            ph = phases.setdefault(
                rec["index"],
                {
                    "index": rec["index"],
                    "executions": 0,
                    "cycles": cyc,
                    "horizon": rec["horizon"],
                    "route_cycles": rec["route_cycles"],
                    "lower_bound": rec["lower_bound"],
                    "scheduled_lower_bound": rec.get("scheduled_lower_bound"),
                    "transfers": rec["transfers"],
                    "families": rec["families"],
                },
            )
            ph["executions"] += 1
            pending["exchange_cycles"] += cyc
            step["exchange_cycles"] += cyc
            step["phase"] = rec["index"]
            supersteps.append(step)
            step = _superstep(len(supersteps), clock + cyc)
        elif kind == "checkpoint":
            op = ckpt_op.get(rec["index"], "")
            for key, v in pending.items():
                per_op[op][key] += v
                pending[key] = 0
        timeline.append(entry)
        clock += cyc
    if step["compute_cycles"] or step["sync_cycles"]:
        supersteps.append(step)
    if any(pending.values()):
        per_op[""] = dict(pending)
    words = _phase_words(pkg, tiles)
    sent_total, recv_total = np.zeros(tiles, np.int64), np.zeros(tiles, np.int64)
    for idx, ph in phases.items():
        sent, recv = words.get(idx, ([0] * tiles, [0] * tiles))
        ph["max_words_sent"], ph["max_words_received"] = max(sent), max(recv)
        sent_total += ph["executions"] * np.asarray(sent, np.int64)
        recv_total += ph["executions"] * np.asarray(recv, np.int64)
    exchange_total = sum(s["exchange_cycles"] for s in supersteps)
    est = pkg.metrics.get("estimated_cycles")
    locs = locations or {}
    return {
        "schema": SCHEMA,
        "package": {
            "target": pkg.target,
            "tiles": tiles,
            "clock_hz": target.clock_hz,
            "tile_mapping": str(pkg.tile_mapping),
        },
        "totals": {
            "total_cycles": result.total_cycles,
            "host_cycles": result.host_cycles,
            "compute_cycles": sum(s["compute_cycles"] for s in supersteps),
            "sync_cycles": sum(s["sync_cycles"] for s in supersteps),
            "exchange_cycles": exchange_total,
            "estimated_cycles": est,
            "estimated_exchange_cycles": pkg.metrics.get("estimated_exchange_cycles"),
            "estimate_over_emulated": round(est / result.total_cycles, 6) if est and result.total_cycles else None,
        },
        "timeline": timeline,
        "host": [r for r in result.profile if r["kind"] in ("host_write", "host_read")],
        "supersteps": supersteps,
        "phases": [phases[k] for k in sorted(phases)],
        "kernels": {k: dict(v) for k, v in sorted(kernels.items())},
        "ops": [
            {"op": op, "name": names.get(op, "(epilogue)"), "location": locs.get(op, "")} | v
            for op, v in sorted(per_op.items(), key=lambda kv: kv[0] == "")  # program order, epilogue last
        ],
        "tiles": {
            "compute_cycles": np.cumsum(tile_compute)[:tiles].tolist(),
            "exchange_words_sent": sent_total.tolist(),
            "exchange_words_received": recv_total.tolist(),
        },
        "memory": {
            "per_tile": memory_per_tile(pkg, tiles),
            "peaks": {k: v for k, v in pkg.metrics.items() if k.startswith(("peak_", "maximum_", "exchange_row"))},
            "tile_bytes": target.memory_size,
        },
    }
