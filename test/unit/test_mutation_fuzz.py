"""A short, fixed run of the mutation fuzzer (`test/fuzz/mutate.py`): damaged MLIR, StableHLO,
ONNX, `.npz` and package inputs through the real tools, each refused with one `error:` line or
handled; no internal error, timeout or stray file. The long runs are the fuzzer's own command."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "test" / "fuzz"))

import mutate  # noqa: E402


def test_mutated_inputs_are_refused_or_handled(capsys) -> None:
    code = mutate.main(["--cases", "24", "--jobs", "2", "--seconds", "300", "--seed", "7"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "cases=24" in out
