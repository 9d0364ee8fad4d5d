"""Pictures and a page of a run profile (`runtime.profile`, schema "ipu-profile/1").

`build_figure` draws one matplotlib Figure (no pyplot, so no global state or display): the
execution timeline, exchange cycles per phase against their lower bounds, memory per tile by
class against the tile's memory, compute cycles per tile and the costliest graph operations.
Per-tile and per-phase series longer than `BAR_LIMIT` are drawn as filled steps rather than one
bar each, so a 1472-tile run renders as fast as a 16-tile one. `render_png` and `render_html`
write the figure (the page embeds it and adds tables, self-contained); `profile_summary` is the
same story in a few lines of text.
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ipu.atomic import write_bytes

BAR_LIMIT = 128  # longer series are drawn as filled steps, not bars
TOP_OPS = 20  # operations in the per-op panel
TABLE_LIMIT = 500  # rows per HTML table before "... N more"

TIMELINE_TITLE = "Execution timeline"
EXCHANGE_TITLE = "Exchange cycles per phase"
MEMORY_TITLE = "Memory per tile"
TILE_COMPUTE_TITLE = "Compute cycles per tile"
OPS_TITLE = "Costliest operations"

KIND_COLORS = {"compute": "tab:blue", "sync": "tab:gray", "exchange": "tab:orange"}
MEMORY_CLASSES = ("code", "weights", "inputs", "outputs", "checkpoints")
MEMORY_COLORS = ("tab:purple", "tab:blue", "tab:green", "tab:red", "tab:olive")


def _op_cycles(op: dict[str, Any]) -> int:
    return int(op.get("compute_cycles", 0)) + int(op.get("exchange_cycles", 0))


def _top_ops(profile: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """The `n` operations with the most device cycles, costliest first."""
    return sorted(profile.get("ops", []), key=_op_cycles, reverse=True)[:n]


def _phase_gap(ph: dict[str, Any]) -> int | None:
    """Cycles the schedule spent over the phase's lower bound (horizon - bound, the scheduler's
    slack; the route is paid either way), over all its executions (None: no bound)."""
    lb = ph.get("lower_bound")
    return None if lb is None else (int(ph["horizon"]) - int(lb)) * int(ph.get("executions", 1))


def _worst_phase(profile: dict[str, Any]) -> dict[str, Any] | None:
    gaps = [(g, ph) for ph in profile.get("phases", []) if (g := _phase_gap(ph)) is not None]
    return max(gaps, key=lambda gp: gp[0])[1] if gaps else None


# ----------------------------------------------------------------------------- panels


def _stack(ax: Axes, x: np.ndarray, layers: Sequence[tuple[str, np.ndarray, str]], width: float = 0.8) -> None:
    """Stacked series over `x`: bars when short, filled steps when long (one patch per layer)."""
    bottom = np.zeros(len(x), float)
    for label, h, color in layers:
        h = np.asarray(h, float)
        if len(x) <= BAR_LIMIT:
            ax.bar(x, h, width, bottom=bottom, label=label, color=color, linewidth=0)
        else:
            ax.fill_between(x, bottom, bottom + h, step="mid", label=label, color=color, linewidth=0)
        bottom = bottom + h


def _timeline(ax: Axes, profile: dict[str, Any]) -> None:
    """One lane per kind of record with cycles (bars at their start cycle), checkpoints as ticks,
    the emulated total and the compiler's estimate as vertical lines."""
    tl = profile.get("timeline", [])
    kinds = [k for k in KIND_COLORS if any(r["kind"] == k for r in tl)]
    kinds += sorted({r["kind"] for r in tl if r["cycles"] > 0} - set(kinds))
    for lane, kind in enumerate(kinds):
        spans = [(r["start"], r["cycles"]) for r in tl if r["kind"] == kind and r["cycles"] > 0]
        ax.broken_barh(spans, (lane - 0.4, 0.8), color=KIND_COLORS.get(kind, "tab:brown"), linewidth=0)
    labels = list(kinds)
    ticks = [r["start"] for r in tl if r["kind"] == "checkpoint"]
    if ticks:
        lane = len(labels)
        ax.vlines(ticks, lane - 0.4, lane + 0.4, color="black", linewidth=0.6)
        labels.append("checkpoint")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(-0.6, max(len(labels), 1) - 0.4)
    ax.invert_yaxis()
    totals = profile.get("totals", {})
    total, est = totals.get("total_cycles"), totals.get("estimated_cycles")
    if total:
        ax.axvline(total, color="black", linewidth=1.2, label=f"emulated {total:,}")
    if est:
        ax.axvline(est, color="tab:red", linestyle="--", linewidth=1.2, label=f"estimated {est:,}")
    if total or est:
        ax.legend(loc="lower right", bbox_to_anchor=(1, 1), ncols=2, fontsize="small", frameon=False)
    ax.set_xlim(0, max(total or 0, est or 0, 1) * 1.01)
    ax.set_xlabel("device cycles")
    ax.set_title(TIMELINE_TITLE)


def _exchange(ax: Axes, profile: dict[str, Any]) -> None:
    """Cycles of one execution of each phase: horizon, route tail and the rest, with the phase's
    lower bound marked, so the gap the scheduler left is visible per phase."""
    ph = profile.get("phases", [])
    ax.set_title(EXCHANGE_TITLE)
    ax.set_xlabel("phase index")
    ax.set_ylabel("cycles")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    if not ph:
        ax.text(0.5, 0.5, "no exchange phases", ha="center", va="center", transform=ax.transAxes)
        return
    x = np.array([p["index"] for p in ph], float)
    horizon = np.array([p.get("horizon", 0) for p in ph], float)
    route = np.array([p.get("route_cycles", 0) for p in ph], float)
    rest = np.maximum(np.array([p["cycles"] for p in ph], float) - horizon - route, 0)
    layers = [("horizon", horizon, "tab:orange"), ("route", route, "tab:cyan")]
    if rest.any():
        layers.append(("other", rest, "tab:gray"))
    _stack(ax, x, layers)
    lb = np.array([np.nan if p.get("lower_bound") is None else p["lower_bound"] for p in ph], float)
    if len(x) <= BAR_LIMIT:
        ax.hlines(lb, x - 0.45, x + 0.45, color="black", linewidth=1.2, label="lower bound")
    else:
        ax.step(x, lb, where="mid", color="black", linewidth=0.8, label="lower bound")
    ax.legend(loc="upper right", fontsize="small")
    worst = _worst_phase(profile)
    if worst is not None and len(x) <= BAR_LIMIT:
        ax.annotate("worst gap", (worst["index"], worst["cycles"]), ha="center", va="bottom", fontsize="x-small")


def _memory(ax: Axes, profile: dict[str, Any]) -> None:
    """KiB per tile by class, stacked, against the tile's memory size. When the peak is under a
    tenth of the tile the axis stays on the data and the size is noted instead."""
    mem = profile.get("memory", {})
    per = mem.get("per_tile", {})
    tiles = int(profile.get("package", {}).get("tiles") or max((len(v) for v in per.values()), default=0))
    x = np.arange(tiles)
    colors = dict(zip(MEMORY_CLASSES, MEMORY_COLORS, strict=True))
    layers = [(c, np.asarray(per[c], float) / 1024, colors[c]) for c in MEMORY_CLASSES if c in per]
    _stack(ax, x, layers, width=1.0)
    used = sum((v for _c, v, _col in layers), np.zeros(tiles))
    peak, size = float(used.max(initial=0)), (mem.get("tile_bytes") or 0) / 1024
    title = MEMORY_TITLE
    if size:
        ax.axhline(size, color="tab:red", linestyle="--", linewidth=1.2, label=f"tile memory {size:g} KiB")
        title += f": peak {peak:.1f} of {size:g} KiB ({100 * peak / size:.1f}%)"
        if 0 < peak < size / 10:
            ax.set_ylim(0, peak * 1.25)
            ax.text(0.01, 0.97, f"tile memory {size:g} KiB: off scale", transform=ax.transAxes, va="top")
    ax.set_xlim(-0.5, max(tiles, 1) - 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_xlabel("tile")
    ax.set_ylabel("KiB")
    ax.legend(loc="upper right", fontsize="small", ncols=2)
    ax.set_title(title)


def _tile_compute(ax: Axes, profile: dict[str, Any]) -> None:
    """Compute cycles each tile ran, with the mean: the load balance of the tile mapping."""
    c = np.asarray(profile.get("tiles", {}).get("compute_cycles", []), float)
    x = np.arange(len(c))
    _stack(ax, x, [("compute", c, "tab:blue")], width=1.0)
    title = TILE_COMPUTE_TITLE
    if len(c) and c.mean() > 0:
        ax.axhline(c.mean(), color="black", linestyle=":", linewidth=1, label=f"mean {c.mean():,.0f}")
        ax.legend(loc="upper right", fontsize="small")
        title += f" (max/mean {c.max() / c.mean():.2f})"
    ax.set_xlim(-0.5, max(len(c), 1) - 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_ylim(bottom=0)
    ax.set_xlabel("tile")
    ax.set_ylabel("cycles")
    ax.set_title(title)


def _ops(ax: Axes, profile: dict[str, Any]) -> None:
    """The costliest graph operations: compute and exchange cycles, labelled by name."""
    top = _top_ops(profile, TOP_OPS)
    ax.set_title(f"{OPS_TITLE} (top {len(top)} of {len(profile.get('ops', []))})")
    ax.set_xlabel("cycles")
    if not top:
        ax.text(0.5, 0.5, "no operations", ha="center", va="center", transform=ax.transAxes)
        return
    y = np.arange(len(top))
    comp = np.array([o.get("compute_cycles", 0) for o in top], float)
    exch = np.array([o.get("exchange_cycles", 0) for o in top], float)
    ax.barh(y, comp, 0.8, color="tab:blue", label="compute")
    ax.barh(y, exch, 0.8, left=comp, color="tab:orange", label="exchange")
    ax.set_yticks(y, [_short(str(o.get("name", o.get("op")))) for o in top], fontsize="small")
    ax.invert_yaxis()
    ax.legend(loc="lower right", fontsize="small")


def _short(s: str, n: int = 28) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _title(profile: dict[str, Any]) -> str:
    pkg, tot = profile.get("package", {}), profile.get("totals", {})
    total, est = tot.get("total_cycles"), tot.get("estimated_cycles")
    parts = [str(pkg.get("target", "?")), f"{pkg.get('tiles', '?')} tiles"]
    if total is not None:
        parts.append(f"{total:,} cycles")
        if pkg.get("clock_hz"):
            parts[-1] += f" ({total / pkg['clock_hz'] * 1e6:.1f} µs)"
    if est:
        parts.append(f"estimate {est:,}")
    return " · ".join(parts)


def build_figure(profile: dict[str, Any]) -> Figure:
    """The report figure: timeline across the top, then exchange and memory, then per-tile
    compute and the costliest operations."""
    fig = Figure(figsize=(16, 14), dpi=100, layout="constrained")
    grid = fig.add_gridspec(3, 2, height_ratios=[0.8, 1, 1.1])
    _timeline(fig.add_subplot(grid[0, :]), profile)
    _exchange(fig.add_subplot(grid[1, 0]), profile)
    _memory(fig.add_subplot(grid[1, 1]), profile)
    _tile_compute(fig.add_subplot(grid[2, 0]), profile)
    _ops(fig.add_subplot(grid[2, 1]), profile)
    fig.suptitle(_title(profile), fontsize="x-large")
    return fig


def figure_titles(fig: Figure) -> list[str]:
    """The titles of the figure's panels, in drawing order."""
    return [ax.get_title() for ax in fig.axes]


# ----------------------------------------------------------------------------- output


def png_bytes(profile: dict[str, Any]) -> bytes:
    """The report figure as PNG bytes."""
    buf = io.BytesIO()
    build_figure(profile).savefig(buf, format="png")
    return buf.getvalue()


def render_png(profile: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write the report figure as a PNG file."""
    write_bytes(path, png_bytes(profile))


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], limit: int = TABLE_LIMIT) -> str:
    """An HTML table, every cell escaped; rows past `limit` are counted, not listed."""
    rows = list(rows)
    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head) + "</tr>"]
    for r in rows[:limit]:
        cells = "".join(f"<td>{html.escape(_cell(v))}</td>" for v in r)
        out.append(f"<tr>{cells}</tr>")
    out.append("</table>")
    if len(rows) > limit:
        out.append(f"<p>... {len(rows) - limit} more</p>")
    return "\n".join(out)


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


_CSS = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; margin-bottom: 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; }
"""


def _sections(profile: dict[str, Any]) -> list[str]:
    """The page's tables: totals, package, memory peaks, phases, kernels, operations."""
    tot, pkg = profile.get("totals", {}), profile.get("package", {})
    phases = profile.get("phases", [])
    compute = sum(k.get("cycles", 0) for k in profile.get("kernels", {}).values()) or 1
    ops = _top_ops(profile, TABLE_LIMIT)
    return [
        "<h2>Totals</h2>",
        _table(["quantity", "value"], [*tot.items(), ("supersteps", len(profile.get("supersteps", [])))]),
        "<h2>Package</h2>",
        _table(["field", "value"], [*pkg.items(), ("schema", profile.get("schema"))]),
        "<h2>Memory peaks</h2>",
        _table(["metric", "bytes"], profile.get("memory", {}).get("peaks", {}).items()),
        f"<h2>Exchange phases ({len(phases)})</h2>",
        _table(
            ["phase", "executions", "cycles", "horizon", "route", "lower bound", "gap", "transfers", "families"],
            (
                [p["index"], p.get("executions"), p["cycles"], p.get("horizon"), p.get("route_cycles")]
                + [p.get("lower_bound"), _phase_gap(p), p.get("transfers"), p.get("families")]
                for p in phases
            ),
        ),
        "<h2>Kernels</h2>",
        _table(
            ["kernel", "calls", "cycles", "share", "tile cycles"],
            (
                [k, v.get("calls"), v.get("cycles"), f"{100 * v.get('cycles', 0) / compute:.1f}%", v.get("tile_cycles")]
                for k, v in sorted(profile.get("kernels", {}).items(), key=lambda kv: -kv[1].get("cycles", 0))
            ),
        ),
        f"<h2>Operations by cycles ({len(profile.get('ops', []))})</h2>",
        _table(
            ["name", "op", "location", "compute", "exchange", "total", "calls"],
            (
                [o.get("name"), o.get("op"), o.get("location") or "", o.get("compute_cycles"), o.get("exchange_cycles")]
                + [_op_cycles(o), o.get("calls")]
                for o in ops
            ),
        ),
    ]


def html_text(profile: dict[str, Any]) -> str:
    """The self-contained report page: the figure inlined as a base64 PNG, then the tables."""
    title = html.escape(_title(profile))
    img = base64.b64encode(png_bytes(profile)).decode("ascii")
    summary = html.escape(profile_summary(profile))
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{title}</title>",
            f"<style>{_CSS}</style>",
            "</head><body>",
            f"<h1>{title}</h1>",
            f"<pre>{summary}</pre>",
            f'<img alt="run profile figure" src="data:image/png;base64,{img}">',
            *_sections(profile),
            "</body></html>",
            "",
        ]
    )


def render_html(profile: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write the self-contained report page."""
    write_bytes(path, html_text(profile).encode("utf-8"))


def profile_summary(profile: dict[str, Any]) -> str:
    """A few lines: totals, the five costliest operations and the phase furthest over its bound."""
    tot = profile.get("totals", {})
    total = tot.get("total_cycles") or 0
    lines = [_title(profile)]

    def share(key: str) -> str:
        v = tot.get(key) or 0
        return f"{key.removesuffix('_cycles')} {v:,}" + (f" ({100 * v / total:.1f}%)" if total else "")

    lines.append(", ".join(share(k) for k in ("compute_cycles", "sync_cycles", "exchange_cycles")))
    if tot.get("estimate_over_emulated") is not None:
        lines[-1] += f"; estimate/emulated {tot['estimate_over_emulated']:.3f}"
    top = _top_ops(profile, 5)
    if top:
        lines.append("top operations:")
        for o in top:
            loc = f" at {o['location']}" if o.get("location") else ""
            lines.append(
                f"  {o.get('name')} (op {o.get('op')}){loc}: {_op_cycles(o):,} cycles"
                f" (compute {o.get('compute_cycles', 0):,}, exchange {o.get('exchange_cycles', 0):,})"
            )
    worst = _worst_phase(profile)
    if worst is not None:
        lines.append(
            f"worst phase gap: phase {worst['index']}, {worst['cycles']:,} cycles vs lower bound"
            f" {worst['lower_bound']:,} x {worst.get('executions', 1)} executions (+{_phase_gap(worst):,})"
        )
    return "\n".join(lines)
