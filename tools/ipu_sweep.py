"""`ipu-sweep SPEC`: compile and emulate every configuration a sweep spec names (models x targets x
pipeline options), each in its own worker, on a local process pool or a Ray cluster.

Writes `results.json` (the record a rerun resumes from: finished configurations are skipped) and
`results.csv` to `--out` (default `sweep-results/<sweep name>`); `--plot` also draws
`cycles_vs_memory.png` (Pareto front highlighted) and `cycles_by_option.png`. A configuration that
fails or times out is recorded with its error; the sweep goes on.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ipu.sweep.plot import axis_value, plot, varying_axes
from ipu.sweep.results import Results
from ipu.sweep.runner import run_sweep
from ipu.sweep.spec import SpecError, load_spec
from ipu.tools.common import ToolError, setup_logging, user_errors


def _summary(results: Results, keys: list[str]) -> Table:
    """The spec's rows: varying axes, status, emulated/estimated/exchange cycles, peak memory, numerics or error."""
    rows = [results.rows[k] for k in keys if k in results.rows]
    axes = varying_axes(rows)
    multi_model = len({r["model"] for r in rows}) > 1
    table = Table(title=f"{results.name}: {results.csv_path}", title_justify="left")
    for col in (["model"] if multi_model else []) + axes + ["status"]:
        table.add_column(col)
    for col in ("emulated", "estimated", "exchange", "peak KiB"):
        table.add_column(col, justify="right")
    table.add_column("numerics / error", overflow="fold")
    for r in rows:
        m = r["metrics"]

        def num(name: str, scale: float = 1.0, m: dict = m) -> str:
            return "" if m.get(name) is None else f"{m[name] / scale:,.0f}"

        ok = r["status"] == "ok"
        table.add_row(
            *([r["model"]] if multi_model else []),
            *[escape(str(axis_value(r, a))) for a in axes],
            "[green]ok[/green]" if ok else "[red]failed[/red]",
            num("emulated_cycles"),
            num("estimated_cycles"),
            num("exchange_cycles"),
            num("peak_total_bytes", 1024),
            str(m.get("numerical", "")) if ok else escape((r["error"] or "")[:160]),
        )
    return table


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="results directory [sweep-results/NAME]")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="configurations at once [CPU count]")
@click.option("--ray", "ray_address", metavar="auto|ADDRESS", help="run on a Ray cluster instead of local processes")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="seconds per configuration [spec or 600]")
@click.option("--fresh", is_flag=True, help="ignore earlier results in the output directory")
@click.option("--rerun-failed", is_flag=True, help="run configurations that failed before again")
@click.option("--plot", "draw", is_flag=True, help="draw cycles vs memory and cycles by option (PNG)")
@click.option("--no-run", is_flag=True, help="only report (and plot) the results already recorded")
@click.option("--log-level", default="warning", show_default=True)
@user_errors
def cli(
    spec: str,
    out_dir: str | None,
    jobs: int | None,
    ray_address: str | None,
    timeout: float | None,
    fresh: bool,
    rerun_failed: bool,
    draw: bool,
    no_run: bool,
    log_level: str,
) -> None:
    """Sweep the configurations SPEC (TOML) names; see README.md, "Sweeps"."""
    setup_logging(log_level)
    try:
        sp = load_spec(spec)
    except SpecError as e:
        raise ToolError(str(e)) from None
    out = Path(out_dir) if out_dir else Path("sweep-results") / sp.name
    console = Console(stderr=True)
    if ray_address is not None:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ToolError("the Ray backend needs ray: pip install 'ipu-compiler[ray]'") from None
    try:
        if no_run:
            results = Results(out, sp.name).load()
        else:
            results = run_sweep(
                sp,
                out,
                jobs=jobs,
                ray=ray_address,
                timeout=timeout,
                fresh=fresh,
                rerun_failed=rerun_failed,
                console=console,
            )
    except (ValueError, ConnectionError) as e:  # an unreadable results.json, an unreachable Ray cluster
        raise ToolError(str(e)) from None
    keys = [c["key"] for c in sp.configs]
    rows = [results.rows[k] for k in keys if k in results.rows]
    out_console = Console()
    if not out_console.is_terminal:
        out_console.width = 160
    out_console.print(_summary(results, keys))
    ok = sum(r["status"] == "ok" for r in rows)
    print(f"configurations={len(keys)} ok={ok} failed={len(rows) - ok} missing={len(keys) - len(rows)}")
    print(f"results={results.json_path} table={results.csv_path}")
    if draw:
        try:
            paths = plot(rows, out, sp.name)
        except ValueError as e:
            raise ToolError(str(e)) from None
        print("plots=" + ",".join(str(p) for p in paths))


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
