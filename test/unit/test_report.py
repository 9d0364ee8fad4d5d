"""`runtime.report`: the profile figure, page and summary of a real run and of edge-case profiles."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import matplotlib.image
import pytest
from conftest import EXAMPLES

import ipu
from ipu.api import op_locations
from ipu.runtime.profile import build_profile
from ipu.runtime.report import (
    BAR_LIMIT,
    EXCHANGE_TITLE,
    MEMORY_TITLE,
    OPS_TITLE,
    TILE_COMPUTE_TITLE,
    TIMELINE_TITLE,
    build_figure,
    figure_titles,
    html_text,
    profile_summary,
    render_html,
    render_png,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def profile() -> dict[str, Any]:
    path = EXAMPLES / "transformer_block_small.mlir"
    c = ipu.compile(path, target="sim64")
    r = ipu.run(c)
    return build_profile(c.package, c.target, r.result, op_locations(c.reference, path))


def tiny_profile() -> dict[str, Any]:
    """One tile, one compute superstep, no exchange, no estimate."""
    return {
        "schema": "ipu-profile/1",
        "package": {"target": "tiny", "tiles": 1, "clock_hz": 1_000_000, "tile_mapping": "identity"},
        "totals": {"total_cycles": 10, "compute_cycles": 10, "sync_cycles": 0, "exchange_cycles": 0},
        "timeline": [{"kind": "compute", "index": 0, "start": 0, "cycles": 10}],
        "supersteps": [{"index": 0, "start": 0, "compute_cycles": 10, "sync_cycles": 0, "exchange_cycles": 0}],
        "phases": [],
        "kernels": {},
        "ops": [],
        "tiles": {"compute_cycles": [10]},
        "memory": {"per_tile": {"code": [64], "weights": [0]}, "peaks": {}, "tile_bytes": 1024},
    }


def widened(profile: dict[str, Any], tiles: int, phases: int) -> dict[str, Any]:
    """`profile` stretched to `tiles` tiles and `phases` exchange phases (per-tile series repeated)."""
    p = copy.deepcopy(profile)
    p["package"]["tiles"] = tiles

    def stretch(v: list[int]) -> list[int]:
        return (v * (tiles // len(v) + 1))[:tiles]

    p["memory"]["per_tile"] = {k: stretch(v) for k, v in p["memory"]["per_tile"].items()}
    p["tiles"] = {k: stretch(v) for k, v in p["tiles"].items()}
    p["phases"] = [dict(p["phases"][i % len(p["phases"])], index=i) for i in range(phases)]
    return p


def test_png_is_a_picture(profile: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "report.png"
    render_png(profile, out)
    assert out.read_bytes()[:8] == PNG_MAGIC
    height, width = matplotlib.image.imread(out).shape[:2]
    assert width >= 1000
    assert height >= 800
    assert [f.name for f in tmp_path.iterdir()] == ["report.png"]  # no temporary file left behind


def test_figure_panels(profile: dict[str, Any]) -> None:
    fig = build_figure(profile)
    titles = figure_titles(fig)
    assert titles[0] == TIMELINE_TITLE
    assert titles[1] == EXCHANGE_TITLE
    assert titles[2].startswith(MEMORY_TITLE)
    assert titles[3].startswith(TILE_COMPUTE_TITLE)
    assert titles[4].startswith(OPS_TITLE)
    assert "sim64" in fig.get_suptitle()
    assert f"{profile['totals']['total_cycles']:,} cycles" in fig.get_suptitle()
    timeline, exchange, _memory, _compute, ops = fig.axes
    assert [t.get_text() for t in timeline.get_yticklabels()] == ["compute", "sync", "exchange", "checkpoint"]
    assert len(exchange.patches) >= len(profile["phases"])  # one bar per phase and layer
    costliest = max(profile["ops"], key=lambda o: o["compute_cycles"] + o["exchange_cycles"])
    assert ops.get_yticklabels()[0].get_text() == costliest["name"]


def test_html_page(profile: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    render_html(profile, out)
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert '<img alt="run profile figure" src="data:image/png;base64,iVBORw0KGgo' in text  # PNG magic, base64
    assert "http://" not in text
    assert "https://" not in text
    for op in profile["ops"]:
        assert f"<td>{op['name']}</td>" in text
    assert "examples/transformer_block_small.mlir:" in text
    assert f"<td>supersteps</td><td>{len(profile['supersteps'])}</td>" in text


def test_html_escapes(profile: dict[str, Any]) -> None:
    p = copy.deepcopy(profile)
    p["ops"][0]["name"] = "<b>&x"
    p["ops"][0]["location"] = 'a"<i>.mlir:1'
    text = html_text(p)
    assert "&lt;b&gt;&amp;x" in text
    assert "<b>&x" not in text
    assert "<i>" not in text


def test_tiny_profile_without_exchange(tmp_path: Path) -> None:
    p = tiny_profile()
    titles = figure_titles(build_figure(p))
    assert titles[1] == EXCHANGE_TITLE
    render_png(p, tmp_path / "tiny.png")
    render_html(p, tmp_path / "tiny.html")
    assert (tmp_path / "tiny.png").read_bytes()[:8] == PNG_MAGIC
    summary = profile_summary(p)
    assert summary.splitlines()[0] == "tiny · 1 tiles · 10 cycles (10.0 µs)"
    assert "worst phase" not in summary


def test_many_tiles_draw_steps(profile: dict[str, Any], tmp_path: Path) -> None:
    p = widened(profile, 1472, 3 * BAR_LIMIT)
    fig = build_figure(p)
    _timeline, exchange, memory, compute, _ops = fig.axes
    for ax in (exchange, memory, compute):
        assert len(ax.patches) == 0  # filled steps (collections), not one bar per tile or phase
        assert 0 < len(ax.collections) <= 8
    assert memory.get_xlim()[1] == pytest.approx(1471.5)
    render_png(p, tmp_path / "wide.png")
    assert (tmp_path / "wide.png").read_bytes()[:8] == PNG_MAGIC


def test_summary(profile: dict[str, Any]) -> None:
    lines = profile_summary(profile).splitlines()
    assert lines[0].startswith(f"sim64 · 64 tiles · {profile['totals']['total_cycles']:,} cycles")
    assert lines[1].startswith("compute ")
    top = lines.index("top operations:")
    assert len(lines[top + 1 : top + 6]) == 5
    assert all(ln.startswith("  ") and "transformer_block_small.mlir:" in ln for ln in lines[top + 1 : top + 6])
    assert lines[-1].startswith("worst phase gap: phase ")
