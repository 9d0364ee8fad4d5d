"""What a sweep can record about one configuration, in named groups, and how to read it off a
compiled model and its emulated run."""

from __future__ import annotations

from typing import Any

import numpy as np

GROUPS: dict[str, tuple[str, ...]] = {
    "cycles": (
        "estimated_cycles",
        "estimated_exchange_cycles",
        "emulated_cycles",
        "exchange_cycles",
        "exchange_phases",
        "host_cycles",
    ),
    "memory": ("peak_standard_bytes", "peak_interleaved_bytes", "peak_total_bytes", "exchange_row_bytes"),
    "time": ("compile_seconds", "seconds_*", "emulate_seconds"),
    "numerics": ("numerical", "max_abs_error", "output_l2"),
}
"""Metric names by group; `seconds_*` stands for one column per pipeline phase (seconds_plan_ops, …)."""

PACKAGE_METRICS = (
    "estimated_cycles",
    "estimated_exchange_cycles",
    "peak_standard_bytes",
    "peak_interleaved_bytes",
    "peak_total_bytes",
    "exchange_row_bytes",
)


def resolve_record(record: list[str] | None) -> list[str]:
    """The metric names a `record` list (groups and/or names; None: everything) stands for."""
    if record is None:
        record = list(GROUPS)
    if not isinstance(record, list):
        raise ValueError("[sweep] record must be a list of groups or metric names")
    known = {m for g in GROUPS.values() for m in g}
    out: list[str] = []
    for r in record:
        names = GROUPS.get(r, (r,) if r in known else None)
        if names is None:
            raise ValueError(f"unknown record entry {r!r} (groups: {', '.join(GROUPS)}; or a metric name)")
        out += [n for n in names if n not in out]
    return out


def wants(record: list[str], name: str) -> bool:
    """Whether `name` (e.g. seconds_plan_ops) is among the recorded metrics."""
    return name in record or (name.startswith("seconds_") and "seconds_*" in record)


def compile_metrics(compiled: Any) -> dict[str, Any]:
    """Estimates and memory from the package, and seconds per pipeline phase."""
    m: dict[str, Any] = {k: compiled.package.metrics.get(k) for k in PACKAGE_METRICS}
    m["compile_seconds"] = round(sum(compiled.phase_seconds.values()), 4)
    m |= {f"seconds_{k}": round(v, 4) for k, v in compiled.phase_seconds.items()}
    return m


def run_metrics(report: Any, checks: list[Any] | None) -> dict[str, Any]:
    """Emulated cycles (total, exchange, host) and, after a check, the numerical outcome."""
    exchange = [r for r in report.profile if r.get("kind") == "exchange"]
    m: dict[str, Any] = {
        "emulated_cycles": report.total_cycles,
        "exchange_cycles": sum(r["cycles"] for r in exchange),
        "exchange_phases": len(exchange),
        "host_cycles": report.host_cycles,
        "output_l2": round(sum(float(np.linalg.norm(v.astype(np.float64))) for v in report.outputs.values()), 6),
    }
    if checks:
        m["numerical"] = "PASS" if all(c.result.passed for c in checks) else "FAIL"
        m["max_abs_error"] = max(float(c.result.max_abs_error) for c in checks)
    else:
        m["numerical"] = "SKIPPED"
    return m


__all__ = ["GROUPS", "compile_metrics", "resolve_record", "run_metrics", "wants"]
