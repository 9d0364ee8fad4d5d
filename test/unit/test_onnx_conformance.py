"""ONNX backend node-test conformance on sim16: every node test not in the expected-failure list
must import, compile, emulate and match its shipped outputs; a listed test must still fail
(one that now passes fails here too, so the list only shrinks and the pass count only grows)."""

from __future__ import annotations

import pytest

onnx = pytest.importorskip("onnx")

from ipu.conformance import (  # noqa: E402
    EXPECTED_FAILURES,
    node_tests,
    read_expected_failures,
    run_node_test,
)

EXPECTED = read_expected_failures()
TESTS = node_tests()


def test_expected_failures_name_real_tests() -> None:
    stale = sorted(set(EXPECTED) - set(TESTS))
    assert not stale, f"{EXPECTED_FAILURES.name} names tests onnx {onnx.__version__} does not ship: {stale[:10]}"


def test_expected_failures_are_diagnostics() -> None:
    """Only unsupported models (a clear diagnostic) may be listed, never wrong results or crashes."""
    bad = {n: r for n, r in EXPECTED.items() if not r.startswith("unsupported:")}
    assert not bad, f"listed failures that are not diagnostics: {bad}"


@pytest.mark.parametrize("name", TESTS)
def test_node(name: str) -> None:
    outcome = run_node_test(name, "sim16")
    if name in EXPECTED:
        if outcome.status == "pass":
            pytest.fail(f"{name} now passes: remove it from {EXPECTED_FAILURES.name}")
        assert outcome.status == "unsupported", outcome.line()
        pytest.xfail(outcome.detail)
    assert outcome.status == "pass", outcome.line()
