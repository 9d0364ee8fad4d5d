"""ipu-sweep: spec expansion, the attention generator, pipeline options, the local and Ray backends,
per-configuration failures and timeouts, resuming, and the plots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES

from ipu import api
from ipu.sweep import backends
from ipu.sweep.models import attention
from ipu.sweep.plot import pareto_front
from ipu.sweep.results import Results
from ipu.sweep.runner import run_sweep
from ipu.sweep.spec import SpecError, load_spec

# Two shapes (seq 2048 does not fit sim16's tiles) x two option sets (one names no real option):
# one configuration succeeds, three fail, each for its own reason.
SPEC = """
[sweep]
name = "mixed"
target = "sim16"
timeout = 300
record = ["cycles", "memory", "time", "numerics"]

[[models]]
example = "attention"
params = { heads = 4, kv_heads = 2, seq = [32, 2048], head_dim = 16 }

[[variants]]
finalists = 1

[[variants]]
no_such_option = 3
"""


def _spec(tmp_path: Path, text: str = SPEC) -> Path:
    p = tmp_path / "sweep.toml"
    p.write_text(text)
    return p


def _by_shape(rows: list[dict]) -> dict[tuple[int, str], dict]:
    return {(r["params"]["seq"], next(iter(r["options"]))): r for r in rows}


def _check_mixed(rows: list[dict]) -> None:
    """The mixed spec's outcome: one ok row with every metric group, three failures with their reasons."""
    assert len(rows) == 4
    by = _by_shape(rows)
    ok = by[(32, "finalists")]
    assert ok["status"] == "ok", ok["error"]
    m = ok["metrics"]
    assert m["emulated_cycles"] > 0
    assert m["estimated_cycles"] > 0
    assert 0 < m["exchange_cycles"] < m["emulated_cycles"]
    assert max(m["peak_standard_bytes"], m["peak_interleaved_bytes"]) < m["peak_total_bytes"]
    assert m["numerical"] == "PASS"
    assert "seconds_plan_ops" in m
    assert m["compile_seconds"] > 0
    assert "does not fit target sim16" in by[(2048, "finalists")]["error"]
    for seq in (32, 2048):
        bad = by[(seq, "no_such_option")]
        assert bad["status"] == "failed"
        assert "unknown pipeline option(s) no_such_option" in bad["error"]


def test_attention_generator_reproduces_the_example():
    body = [line for line in attention().splitlines() if not line.startswith("//")]
    assert body == [
        line for line in (EXAMPLES / "attention_small.mlir").read_text().splitlines() if not line.startswith("//")
    ]
    for kw in ({"heads": 4, "kv_heads": 1, "seq": 32}, {"dtype": "f32"}, {"form": "streamed", "head_dim": 32}):
        api.parse(attention(**kw))
    with pytest.raises(ValueError, match="multiple of kv_heads"):
        attention(heads=6, kv_heads=4)


def test_compile_options_reach_the_planner():
    with pytest.raises(api.ApiError, match="unknown pipeline option"):
        api.compile(attention(heads=4, seq=32), "sim16", options={"finalist": 2})
    with pytest.raises(api.ApiError, match="positive integer"):
        api.compile(attention(heads=4, seq=32), "sim16", options={"beam": 0})
    c = api.compile(attention(heads=4, seq=32), "sim16", options={"finalists": 1})
    assert c.estimated_cycles > 0


def test_spec_expansion(tmp_path):
    (tmp_path / "m.mlir").write_text((EXAMPLES / "mlp_small.mlir").read_text())
    text = """
[sweep]
target = "sim16"
[[models]]
file = "m.mlir"
[[models]]
example = "attention"
params = { heads = [4, 8], seq = 32 }
[grid]
target = ["sim16", "sim64"]
finalists = [1, 2]
[[variants]]
beam = 4
[[variants]]
candidates = 2
"""
    spec = load_spec(_spec(tmp_path, text))
    assert len(spec.configs) == 3 * 2 * 2 * 2
    assert {c["target"] for c in spec.configs} == {"sim16", "sim64"}
    assert spec.configs[0]["path"] == str(tmp_path / "m.mlir")
    assert len({c["key"] for c in spec.configs}) == len(spec.configs)
    assert [c["key"] for c in load_spec(tmp_path / "sweep.toml").configs] == [c["key"] for c in spec.configs]
    for bad, message in [
        ("[[models]]\nfile = 'a'\nexample = 'b'\n", "exactly one of"),
        ("[sweep]\nrecord = ['nonsense']\n[[models]]\nfile = 'a'\n", "unknown record entry"),
        ("[grid]\nfinalists = [1]\n", "names no models"),
        ("[sweep]\ntimeout = -1\n[[models]]\nfile = 'a'\n", "timeout"),
    ]:
        with pytest.raises(SpecError, match=message):
            load_spec(_spec(tmp_path, bad))


def test_pareto_front():
    pts = [(3, 1), (1, 5), (2, 2), (2, 3), (4, 1), (1, 6)]
    assert pareto_front(pts) == [1, 2, 0]


def test_local_sweep_reports_failures_resumes_and_plots(tmp_path):
    """The CLI as a user runs it: failures are rows, the sweep finishes (exit 0), a rerun skips everything."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "ipu.tools.ipu_sweep", str(_spec(tmp_path)), "--out", str(out), "--jobs", "2"]
    r = subprocess.run([*cmd, "--plot"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "configurations=4 ok=1 failed=3" in r.stdout
    assert "attention[sim16 heads=4 kv_heads=2 seq=2048 head_dim=16 finalists=1]" in r.stderr  # reported as it happens
    doc = json.loads((out / "results.json").read_text())
    _check_mixed(doc["results"])
    csv = (out / "results.csv").read_text().splitlines()
    assert len(csv) == 5
    assert csv[0].startswith("key,status,model,source,target,heads,kv_heads,seq,head_dim,finalists,no_such_option")
    for png in ("cycles_vs_memory.png", "cycles_by_option.png"):
        assert (out / png).read_bytes().startswith(b"\x89PNG")
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]

    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "resuming: 4 of 4 configurations already finished" in r.stderr
    assert json.loads((out / "results.json").read_text()) == doc


def test_resume_runs_only_unfinished(tmp_path, monkeypatch):
    spec = load_spec(_spec(tmp_path))
    results = Results(tmp_path / "out", spec.name)
    for c in spec.configs[1:]:
        results.add({**backends.failed_row(c, "earlier"), "status": "ok" if c is spec.configs[1] else "failed"})
    ran: list[list[str]] = []

    def fake_local(configs, jobs, timeout):
        ran.append([c["key"] for c in configs])
        yield from (backends.failed_row(c, "fake") for c in configs)

    monkeypatch.setattr("ipu.sweep.runner.run_local", fake_local)
    run_sweep(spec, tmp_path / "out", jobs=1)
    assert ran == [[spec.configs[0]["key"]]]
    run_sweep(spec, tmp_path / "out", jobs=1, rerun_failed=True)
    assert ran[1] == [c["key"] for c in spec.configs if c is not spec.configs[1]]
    assert list(Results(tmp_path / "out").load().rows) == [c["key"] for c in spec.configs]


def _hang(config):
    time.sleep(3600)


def _crash(config):
    os._exit(7)


def test_timeout_and_crash_fail_only_their_configuration(tmp_path, monkeypatch):
    """The forked child inherits the patched worker: one that hangs is killed, one that dies is reported."""
    config = load_spec(_spec(tmp_path)).configs[0]
    monkeypatch.setattr(backends, "run_config", _hang)
    row = backends.run_isolated(config, timeout=0.5)
    assert (row["status"], row["error"]) == ("failed", "timeout after 0.5 s")
    monkeypatch.setattr(backends, "run_config", _crash)
    row = backends.run_isolated(config, timeout=60)
    assert (row["status"], row["error"]) == ("failed", "worker exited with code 7")


def test_ray_address_is_checked_before_connecting():
    pytest.importorskip("ray")
    with pytest.raises(ConnectionError, match="HOST:PORT"):
        backends.connect_ray("nonsense")


def test_ray_backend_on_a_local_instance(tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=100 * 1024 * 1024)
    try:
        results = run_sweep(load_spec(_spec(tmp_path)), tmp_path / "out", ray="auto")
        assert ray.is_initialized()  # a cluster the caller started stays up
    finally:
        ray.shutdown()
    _check_mixed(list(results.rows.values()))
    saved = json.loads((tmp_path / "out" / "results.json").read_text())["results"]
    assert [r["key"] for r in saved] == [c["key"] for c in load_spec(tmp_path / "sweep.toml").configs]
