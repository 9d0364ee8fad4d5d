"""Sweep plots (matplotlib, Agg): cycles against peak memory with the Pareto front highlighted, and
cycles by each option or model parameter that varies."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats in both coordinates (both minimised), by x."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    front, best_y = [], float("inf")
    for i in order:
        if points[i][1] < best_y:
            front.append(i)
            best_y = points[i][1]
    return front


def _cycles(row: dict[str, Any]) -> tuple[str, float] | None:
    m = row["metrics"]
    for k in ("emulated_cycles", "estimated_cycles"):
        if m.get(k) is not None:
            return k, float(m[k])
    return None


def varying_axes(rows: list[dict[str, Any]]) -> list[str]:
    """The target, options and model parameters that take more than one value among `rows`."""
    axes: dict[str, set[str]] = {"target": set()}
    for r in rows:
        axes["target"].add(str(r["target"]))
        for k, v in (r["params"] | r["options"]).items():
            axes.setdefault(k, set()).add(str(v))
    return [k for k, vals in axes.items() if len(vals) > 1]


def _problem(row: dict[str, Any], vary: set[str], without: str | None = None) -> str:
    """A row's model and varying parameters (every varying axis but `without` when given): one front or line each."""
    if without is None:
        items = [(k, v) for k, v in row["params"].items() if k in vary]
    else:
        items = [
            (k, v) for k, v in ({"target": row["target"]} | row["params"] | row["options"]).items() if k != without
        ]
    return row["model"] + (" " + " ".join(f"{k}={v}" for k, v in items) if items else "")


def _log_if_wide(ax: Any, ys: list[float]) -> None:
    if ys and min(ys) > 0 and max(ys) / min(ys) > 20:
        ax.set_yscale("log")


def axis_value(row: dict[str, Any], axis: str) -> Any:
    return row["target"] if axis == "target" else (row["params"] | row["options"]).get(axis)


def plot(rows: list[dict[str, Any]], out_dir: str | Path, title: str = "sweep") -> list[Path]:
    """Draw both PNGs from the successful rows into `out_dir`; the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ipu.atomic import write_bytes

    ok = [r for r in rows if r["status"] == "ok" and _cycles(r) is not None]
    if not ok:
        raise ValueError("nothing to plot: no configuration finished with cycles recorded")
    out = Path(out_dir)
    written = []
    ykey = _cycles(ok[0])[0]
    vary = set(varying_axes(ok))

    mem = [r for r in ok if r["metrics"].get("peak_total_bytes") is not None]
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    if mem:
        problems: dict[str, list[dict[str, Any]]] = {}
        for r in mem:
            problems.setdefault(_problem(r, vary), []).append(r)
        for name, rs in problems.items():
            pts = [(r["metrics"]["peak_total_bytes"] / 1024, _cycles(r)[1]) for r in rs]
            front = pareto_front(pts)
            (line,) = ax.plot([pts[i][0] for i in front], [pts[i][1] for i in front], "-", lw=1.2, alpha=0.8)
            ax.scatter([x for x, _ in pts], [y for _, y in pts], s=18, alpha=0.5, color=line.get_color(), label=name)
            ax.scatter(
                [pts[i][0] for i in front],
                [pts[i][1] for i in front],
                s=70,
                facecolors="none",
                edgecolors="crimson",
                linewidths=1.4,
            )
        ax.scatter([], [], s=70, facecolors="none", edgecolors="crimson", label="Pareto front (per model)")
        _log_if_wide(ax, [_cycles(r)[1] for r in mem])
    else:
        ax.text(0.5, 0.5, "peak_total_bytes not recorded", ha="center", transform=ax.transAxes)
    ax.set(xlabel="peak memory per tile (KiB, all classes)", ylabel=ykey.replace("_", " "))
    ax.set_title(f"{title}: cycles vs memory")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    written.append(_save(fig, out / "cycles_vs_memory.png", write_bytes))
    plt.close(fig)

    axes = varying_axes(ok) or ["target"]
    fig, subs = plt.subplots(1, len(axes), figsize=(4.2 * len(axes), 4.2), squeeze=False, sharey=True)
    for ax, axis in zip(subs[0], axes, strict=True):
        values = sorted({axis_value(r, axis) for r in ok}, key=lambda v: (isinstance(v, str), v))
        pos = {v: i for i, v in enumerate(values)}
        lines: dict[str, list[dict[str, Any]]] = {}  # rows equal in every other axis: the option's own effect
        for r in ok:
            lines.setdefault(_problem(r, vary, without=axis), []).append(r)
        for rs in lines.values():
            rs.sort(key=lambda r: pos[axis_value(r, axis)])
            ax.plot(
                [pos[axis_value(r, axis)] for r in rs],
                [_cycles(r)[1] for r in rs],
                "-o",
                color="tab:blue",
                lw=0.8,
                ms=3.5,
                alpha=0.45,
            )
        best = [min(_cycles(r)[1] for r in ok if axis_value(r, axis) == v) for v in values]
        ax.plot(range(len(values)), best, "--", color="black", lw=1.2, label="best")
        ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set(xlabel=axis, title=f"cycles by {axis}")
        ax.grid(alpha=0.3)
        _log_if_wide(ax, [_cycles(r)[1] for r in ok])
    subs[0][0].set_ylabel(ykey.replace("_", " "))
    subs[0][-1].legend(fontsize=7)
    fig.suptitle(title)
    written.append(_save(fig, out / "cycles_by_option.png", write_bytes))
    plt.close(fig)
    return written


def _save(fig: Any, path: Path, write: Any) -> Path:
    import io

    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    write(path, buf.getvalue())
    return path


__all__ = ["axis_value", "pareto_front", "plot", "varying_axes"]
