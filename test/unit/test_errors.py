"""User errors are one clear message and a non-zero exit, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES

BIG = """func.func @main(%x: tensor<4096x8192xf16>) -> tensor<4096x8192xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<8192x8192xf16>
  %y = graph.matmul %x, %w : (tensor<4096x8192xf16>, tensor<8192x8192xf16>) -> tensor<4096x8192xf16>
  func.return %y : tensor<4096x8192xf16>
}
"""
MALFORMED = "func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {\n  %y = graph.relu %x : \n}\n"
INVALID = """func.func @main(%x: tensor<4x8xf16>, %w: tensor<16x4xf16>) -> tensor<4x4xf16> {
  %y = graph.matmul %x, %w : (tensor<4x8xf16>, tensor<16x4xf16>) -> tensor<4x4xf16>
  func.return %y : tensor<4x4xf16>
}
"""


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        (MALFORMED, [], "parse error"),
        (INVALID, [], "contraction sizes differ"),
        (None, ["--target", "nosuch"], "unknown target 'nosuch'"),
        (BIG, ["--target", "sim16"], "model does not fit target sim16"),
    ],
)
@pytest.mark.parametrize("tool_name", ["ipu-run", "ipu-opt"])
def test_tool_errors(tool, tmp_path: Path, tool_name: str, text, args, message) -> None:
    path = tmp_path / "m.mlir"
    if text is None:
        path = EXAMPLES / "mlp_small.mlir"
    else:
        path.write_text(text)
    extra = ["-p", "ipu-compile"] if tool_name == "ipu-opt" else []
    r = tool(tool_name, str(path), *extra, *args)
    assert r.returncode != 0
    assert message in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("tool_name", ["ipu-run", "ipu-opt", "ipu-translate"])
def test_missing_file(tool, tool_name: str) -> None:
    args = ["/nonexistent/model.mlir"] + (["--from-ipuexe"] if tool_name == "ipu-translate" else [])
    r = tool(tool_name, *args)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert "no such file" in r.stderr.lower() or "does not exist" in r.stderr.lower()


def test_translate_needs_output(tool) -> None:
    r = tool("ipu-translate", str(EXAMPLES / "mlp_small.mlir"), "--to-ipuexe")
    assert r.returncode != 0 and "give -o FILE" in r.stderr


def test_failed_compile_writes_nothing(tool, tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text(INVALID)
    out = tmp_path / "out.mlir"
    r = tool("ipu-opt", str(bad), "-p", "ipu-compile", "--target", "sim16", "-o", str(out))
    assert r.returncode != 0
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]
