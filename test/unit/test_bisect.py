"""`ipu-run --bisect` names the first operation whose value diverges; check modes and tolerances."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, run_tool

from ipu.abi.isa import Opcode, pack, unpack
from ipu.abi.kernels import KERNEL_NAMES
from ipu.abi.package_io import read_package, write_package
from ipu.golden.compare import tolerance

MLP = EXAMPLES / "mlp_small.mlir"  # h = x @ w1; hb = h + b1; g = gelu(hb); y = g @ w2; yb = y + b2


@pytest.fixture(scope="module")
def built_package(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The mlp_small package for sim16, compiled once for the tests below (each edits its own copy)."""
    p = tmp_path_factory.mktemp("mlp") / "mlp.ipuexe"
    r = run_tool("ipu-run", str(MLP), "--target", "sim16", "--package", str(p), "--check", "none")
    assert r.returncode == 0, r.stderr
    return p.read_bytes()


@pytest.fixture
def package(built_package: bytes, tmp_path: Path) -> Path:
    p = tmp_path / "mlp.ipuexe"
    p.write_bytes(built_package)
    return p


def _swap_kernel(path: Path, old: str, new: str) -> None:
    """Make every CALL of kernel `old` call `new` (same operands): an injected compiler bug."""
    pkg = read_package(path)
    hits = 0
    for prog in pkg.programs:
        words, n = unpack(prog.code)
        sel = (words[:, 0] == Opcode.CALL) & (words[:, 1] == KERNEL_NAMES.index(old))
        words[sel, 1] = KERNEL_NAMES.index(new)
        hits += int(sel.sum())
        prog.code = pack(words, n)
    assert hits
    write_package(pkg, path)


def test_bisect_on_a_good_package_finds_nothing(tool, package: Path) -> None:
    r = tool("ipu-run", str(package), "--reference", str(MLP), "--bisect")
    assert r.returncode == 0, r.stderr
    assert "firstDivergence=none" in r.stdout
    assert "check=all" in r.stdout  # every element of every op was compared


def test_bisect_names_the_op_with_the_injected_error(tool, package: Path) -> None:
    _swap_kernel(package, "gelu", "tanh")  # %g = graph.gelu now computes tanh
    r = tool("ipu-run", str(package), "--reference", str(MLP), "--bisect")
    assert r.returncode == 1
    line = next(x for x in r.stdout.splitlines() if x.startswith("firstDivergence"))
    assert "checkpoint=g value=g aspect=value" in line
    assert f"location={MLP}:" in line
    assert "graph.gelu" in r.stdout.split(line)[1].splitlines()[1]  # the source line is printed
    # the ops before it still pass; the one after it fails too (it consumes g)
    assert "name=hb value=hb aspect=value" in r.stdout and " FAIL " in r.stdout


def test_bisect_finds_an_error_late_in_the_model(tool, package: Path) -> None:
    pkg = read_package(package)
    w2 = next(w for w in pkg.weights if w.name == "w2")
    data = np.frombuffer(w2.data, np.float16).copy()
    data[: data.size // 2] *= 4  # a corrupted weight feeds only %y = graph.matmul %g, %w2
    w2.data = data.tobytes()
    write_package(pkg, package)
    r = tool("ipu-run", str(package), "--reference", str(MLP), "--bisect")
    assert r.returncode == 1
    assert "firstDivergence checkpoint=y value=y" in r.stdout


def test_check_modes(tool, package: Path) -> None:
    out = {}
    for mode in ("none", "outputs", "sampled", "all"):
        r = tool("ipu-run", str(package), "--reference", str(MLP), "--check", mode)
        assert r.returncode == 0, r.stderr
        out[mode] = r.stdout
    assert "numericalTest=SKIPPED (--check none)" in out["none"]
    assert "checkpoint=" not in out["outputs"] and "output=output0" in out["outputs"]
    assert "samples=256 " in out["sampled"]
    assert "samples=16384 " in out["all"]  # h is 64 x 256: every element


def test_tolerances_by_dtype() -> None:
    assert tolerance(np.float16) == (3e-2, 3e-2)
    assert tolerance(np.float32) == (1e-3, 1e-3)
    assert tolerance(np.float32, atol=0.5) == (0.5, 1e-3)
    # an fp32 value computed from fp16 ones (attention scores in an fp16 model) carries fp16 error
    assert tolerance(np.float32, floor=np.float16) == (3e-2, 3e-2)
