"""Drive a sweep: skip finished configurations, run the rest on a backend with a progress bar, and
record every row as it arrives (so an interrupted sweep resumes where it stopped)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ipu.sweep.backends import connect_ray, run_local, run_ray
from ipu.sweep.results import Results
from ipu.sweep.spec import Spec

DEFAULT_TIMEOUT = 600.0


def _rows(todo: list[dict[str, Any]], jobs: int | None, timeout: float | None, ray: str | None) -> Iterator[dict]:
    if ray is None:
        return run_local(todo, jobs or os.cpu_count() or 1, timeout)
    return run_ray(todo, jobs, timeout)


def run_sweep(
    spec: Spec,
    out_dir: str | Path,
    *,
    jobs: int | None = None,
    ray: str | None = None,
    timeout: float | None = None,
    fresh: bool = False,
    rerun_failed: bool = False,
    console: Console | None = None,
) -> Results:
    """Run the spec's unfinished configurations into `out_dir`; the (loaded and updated) results.

    `jobs`: configurations at once (local default: the CPU count; Ray default: the cluster's CPUs).
    `ray`: None for the local pool, else "auto" or a cluster address. `timeout` overrides the spec's.
    """
    results = Results(out_dir, spec.name)
    if not fresh:
        results.load()
    todo = [c for c in spec.configs if not results.finished(c["key"], rerun_failed)]
    limit = timeout or spec.timeout or DEFAULT_TIMEOUT
    console = console or Console(stderr=True)
    done = len(spec.configs) - len(todo)
    if done:
        console.print(f"resuming: {done} of {len(spec.configs)} configurations already finished")
    started = False
    if ray is not None and todo:
        console.print(f"connecting to Ray ({ray})")
        started = connect_ray(ray, jobs)
    try:
        _run(spec, results, done, _rows(todo, jobs, limit, ray), console)
    finally:
        if started:
            import ray as ray_module

            ray_module.shutdown()
    return results


def _run(spec: Spec, results: Results, done: int, rows: Iterator[dict], console: Console) -> None:
    """Record rows as they arrive, under a progress bar; failures are printed as they happen."""
    order = [c["key"] for c in spec.configs]
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    columns += (TimeElapsedColumn(), TextColumn("{task.fields[failed]} failed"))
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task(spec.name, total=len(spec.configs), completed=done, failed=0)
        failed = 0
        for row in rows:
            results.add(row, order)
            if row["status"] != "ok":
                failed += 1
                progress.console.print(f"[red]failed[/red] {escape(describe(row))}: {escape(row['error'] or '')}")
            progress.update(task, advance=1, failed=failed)


def describe(row: dict[str, Any]) -> str:
    """`model[target k=v ...]`: a configuration in one short phrase."""
    parts = [f"{k}={v}" for k, v in (row["params"] | row["options"]).items()]
    return f"{row['model']}[{' '.join([row['target'], *parts])}]"


__all__ = ["DEFAULT_TIMEOUT", "describe", "run_sweep"]
