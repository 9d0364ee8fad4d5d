"""The same model and options give byte-identical IR and packages, whatever PYTHONHASHSEED is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES


def _compile(example: str, target: str, seed: str, out: Path) -> tuple[bytes, bytes]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    ir, pkg = out / f"{seed}.mlir", out / f"{seed}.ipuexe"
    for args in (
        ["ipu.tools.ipu_opt", str(EXAMPLES / example), "-p", "ipu-compile", "--target", target, "-o", str(ir)],
        ["ipu.tools.ipu_translate", str(ir), "--to-ipuexe", "-o", str(pkg)],
    ):
        mod, *rest = args
        r = subprocess.run(
            [sys.executable, "-c", f"import {mod} as m; m.main()", *rest], env=env, capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr
    return ir.read_bytes(), pkg.read_bytes()


@pytest.mark.parametrize(
    ("example", "target"), [("transformer_block_small.mlir", "sim64"), ("mlp_small.mlir", "sim16")]
)
def test_pipeline_is_deterministic_across_hash_seeds(example: str, target: str, tmp_path: Path) -> None:
    ir_a, pkg_a = _compile(example, target, "0", tmp_path)
    ir_b, pkg_b = _compile(example, target, "4242", tmp_path)
    assert ir_a == ir_b
    assert pkg_a == pkg_b


# Runs the pipeline in one process, writing the IR after every pass (plan, tilemap, exchange, tasm).
_LEVELS = """
import sys
from ipu.tools.common import make_context, parse_file
from ipu.transforms.pipeline import compile_passes
ctx = make_context()
module = parse_file(ctx, sys.argv[1])
for n, (label, p) in enumerate(compile_passes(sys.argv[2], None)):
    p.apply(ctx, module)
    open(f"{sys.argv[3]}/{n}-{label}.mlir", "w").write(str(module))
"""


def test_every_level_is_deterministic_across_hash_seeds(tmp_path: Path) -> None:
    """The IR after each pass, not only the final tasm, is the same whatever PYTHONHASHSEED is."""
    texts = []
    for seed in ("1", "977"):
        out = tmp_path / seed
        out.mkdir()
        r = subprocess.run(
            [sys.executable, "-c", _LEVELS, str(EXAMPLES / "transformer_stack_small.mlir"), "sim64", str(out)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        texts.append({p.name: p.read_text() for p in sorted(out.iterdir())})
    assert len(texts[0]) >= 4
    for name, text in texts[0].items():
        assert texts[1][name] == text, f"IR after {name} differs between hash seeds"
