"""Differential fuzzing: random graph models compile, run on the emulator and equal the reference.

Every model from `fuzz_models.graph_models` fits the target by construction, so any exception and
any numerical mismatch is a failure; hypothesis shrinks it and the message carries the minimal
model. Save such a model as `test/fuzz/regressions/NAME.mlir` (see `test_regression`).

    IPU_FUZZ_EXAMPLES=1000 pytest -q test/unit/test_fuzz.py      # a longer run
    IPU_FUZZ_TARGETS=sim64 ...                                    # targets drawn (default sim16,sim64)
    IPU_FUZZ_KNOWN_BUGS=1 ...                                     # also draw models that hit open bugs
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import ROOT
from fuzz_models import graph_models
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ipu

EXAMPLES = int(os.environ.get("IPU_FUZZ_EXAMPLES", "300"))
TARGETS = os.environ.get("IPU_FUZZ_TARGETS", "sim16,sim64").split(",")
# open bug (test/fuzz/regressions/repeat-swap-carried.mlir): a repeat yielding carried values in
# permuted places copies them in sequence, overwriting a source before it is read
KNOWN_BUGS = os.environ.get("IPU_FUZZ_KNOWN_BUGS") == "1"
REGRESSIONS = ROOT / "test" / "fuzz" / "regressions"


def check_model(text: str, target: str) -> None:
    """Compile and emulate `text`; raise AssertionError naming the model unless every checkpoint and
    output equals the reference."""
    try:
        report = ipu.run(ipu.compile(text, target=target))
    except Exception as e:  # noqa: BLE001 -- every exception is a failure, reported with the model
        raise AssertionError(f"{type(e).__name__}: {e}\n--- model (target {target}) ---\n{text}") from e
    if report.passed is not True:
        bad = [f"{c.kind} {c.name}: {c.result.reason}" for c in report.checks if not c.result.passed]
        raise AssertionError("differs from the reference:\n  " + "\n  ".join(bad[:5]) + f"\n--- model ---\n{text}")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(text=graph_models(known_bugs=KNOWN_BUGS), target=st.sampled_from(TARGETS))
def test_random_models_equal_the_reference(text: str, target: str) -> None:
    check_model(text, target)


def _header(text: str, key: str) -> str | None:
    m = re.search(rf"^// {key}:\s*(.+)$", text, re.M)
    return m.group(1).strip() if m else None


def _regressions() -> list[pytest.param]:
    out = []
    for path in sorted(REGRESSIONS.glob("*.mlir")):
        reason = _header(path.read_text(), "XFAIL")
        marks = [pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError)] if reason else []
        out.append(pytest.param(path, marks=marks, id=path.stem))
    return out


@pytest.mark.parametrize("path", _regressions())
def test_regression(path: Path) -> None:
    """A model the fuzzer once broke; `// TARGET: name` picks the target (default sim16) and
    `// XFAIL: reason` marks a bug still open (the test then fails once the bug is fixed)."""
    text = path.read_text()
    check_model(text, _header(text, "TARGET") or "sim16")
