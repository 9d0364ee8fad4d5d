"""Shared helpers: run the console tools as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run_tool(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    module = {
        "ipu-opt": "ipu.tools.ipu_opt",
        "ipu-run": "ipu.tools.ipu_run",
        "ipu-translate": "ipu.tools.ipu_translate",
    }[tool]
    return subprocess.run(
        [sys.executable, "-c", f"import {module} as m; m.main()", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def tool():
    return run_tool
