"""`runtime.summary`: the `ipu-translate --inspect` text of a small hand-built package."""

from __future__ import annotations

import dataclasses

from test_package import T, good_package

from ipu.abi.package import SCHEMA_VERSION
from ipu.abi.package_check import validate_package
from ipu.runtime.summary import LIST_LIMIT, summarize_package


def test_summary_figures() -> None:
    pkg = good_package()
    validate_package(pkg, T)
    lines = summarize_package(pkg, T).splitlines()
    assert lines[0] == f"package: schema {SCHEMA_VERSION}, target sim16, compiler 0.1.0"
    assert "programs: 2 (2 distinct) for 16 of 16 tiles" in lines
    assert "  program 1: tiles 8..15 (8), code 64 bytes at 0x4c000" in lines
    assert "exchange: 1 phases, 3 transfer families, 18 transfers, tile mapping identity" in lines
    assert "  phase 0: lower_bound 64 horizon 80 scheduler greedy families 3 transfers 18" in lines
    assert "  weight w f16 [16, 16]: 1 slices, 512 bytes (8192 on tiles)" in lines
    assert "  checkpoint 0 mm (%mm, value) f32 [16, 16]: 1 slices, 1024 bytes (1024 on tiles)" in lines
    stats = {ln[2:22].strip(): ln[22:].split() for ln in lines if ln.startswith("  ") and "tile " in ln[22:]}
    assert stats["code"] == ["64", "70", "76", "tile", "0"]  # each program its own instructions
    assert stats["outputs"] == ["0", "0", "1024", "tile", "3"]  # only tile 3 holds y
    assert stats["region interleaved"][:3] == ["0", "0", "0"]
    assert "  exchange_cycles = 200" in lines
    # host calls: 512-byte w and x cost 600 + ceil(512 / 23), the 1024-byte y 600 + ceil(1024 / 23)
    at = lines.index("host calls: 2 (4 steps), 2048 bytes over the host link, 1891 host cycles")
    assert lines[at + 1 : at + 7] == [
        "  initialize: 1 steps, 512 bytes, 623 cycles",
        "    step 0: write weight w, 512 bytes, 623 cycles",
        "  run: 3 steps, 1536 bytes, 1268 cycles",
        "    step 0: write input x, 512 bytes, 623 cycles",
        "    step 1: execute the programs",
        "    step 2: read output y, 1024 bytes, 645 cycles",
    ]


def test_long_lists_are_capped() -> None:
    pkg = good_package()
    pkg.phases = [dataclasses.replace(pkg.phases[0], index=i) for i in range(LIST_LIMIT + 5)]
    text = summarize_package(pkg, T)
    assert f"  phase {LIST_LIMIT - 1}: " in text and f"  phase {LIST_LIMIT}: " not in text
    assert "  ... 5 more phases\n" in text
    assert f"exchange: {LIST_LIMIT + 5} phases, {3 * (LIST_LIMIT + 5)} transfer families" in text


def test_long_host_calls_are_capped() -> None:
    pkg = good_package()
    pkg.host_calls[0].steps *= LIST_LIMIT + 3
    text = summarize_package(pkg, T)
    assert f"  initialize: {LIST_LIMIT + 3} steps, {512 * (LIST_LIMIT + 3)} bytes" in text
    assert f"    step {LIST_LIMIT - 1}: write weight w" in text and f"    step {LIST_LIMIT}: " not in text
    assert "    ... 3 more initialize steps\n  run: 3 steps" in text
