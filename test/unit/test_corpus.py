"""The bad-input corpus (`test/corpus/cases.toml`): every case runs a real tool, which must refuse
the input with its expected message, a non-zero exit, no traceback, no "internal error", and no
file left behind in the run's scratch directory (outputs, packages, profiles, temporaries).

The cases run two at a time in one module-scoped batch; each test then checks one result.
"""

from __future__ import annotations

import importlib.util
import io
import os
import random
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, ROOT

CORPUS = ROOT / "test" / "corpus"
MODULES = {"ipu-opt": "ipu.tools.ipu_opt", "ipu-run": "ipu.tools.ipu_run", "ipu-translate": "ipu.tools.ipu_translate"}
X_SHAPE = (8, 16)  # the input of level/graph-module.mlir


def _onnx_available() -> bool:
    return importlib.util.find_spec("onnx") is not None and (ROOT / "frontends" / "onnx_import.py").is_file()


# ---------------------------------------------------------------- inputs written at test time


def _npz(path: Path, **arrays: np.ndarray) -> None:
    with path.open("wb") as f:
        np.savez(f, **arrays)


def _x(dtype: type = np.float16, shape: tuple[int, ...] = X_SHAPE) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


class _Trap:
    """Unpickling this creates the file `path`: the loader must refuse, never unpickle."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def _npz_pickle(path: Path) -> None:
    arr = np.empty(1, dtype=object)
    arr[0] = _Trap(path.parent / "UNPICKLED")
    with path.open("wb") as f:
        np.savez(f, x=arr)


def _npz_huge_header(path: Path) -> None:
    """`x.npy` declaring 2**42 float32 elements (16 TiB) with no data behind the header."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (1 << 42,)})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", buf.getvalue())


def _npz_truncated(path: Path) -> None:
    _npz(path, x=_x())
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _onnx_bytes() -> bytes:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return onnx.helper.make_model(graph).SerializeToString()


def _package_sim16(path: Path) -> None:
    import ipu
    from ipu.runtime.package_io import write_package

    write_package(ipu.compile(CORPUS / "level" / "graph-module.mlir", target="sim16").package, path)


MAKERS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "npz-wrong-name": ("x.npz", lambda p: _npz(p, y=_x())),
    "npz-empty": ("x.npz", lambda p: _npz(p)),
    "npz-extra-name": ("x.npz", lambda p: _npz(p, x=_x(), z=_x())),
    "npz-wrong-shape": ("x.npz", lambda p: _npz(p, x=_x(shape=X_SHAPE[::-1]))),
    "npz-string-dtype": ("x.npz", lambda p: _npz(p, x=np.full(X_SHAPE, "abc"))),
    "npz-complex-dtype": ("x.npz", lambda p: _npz(p, x=_x(np.complex64))),
    "npz-text": ("x.npz", lambda p: p.write_text("x = [1, 2, 3]\n")),
    "npz-truncated": ("x.npz", _npz_truncated),
    "npz-pickle": ("x.npz", _npz_pickle),
    "npz-huge-header": ("x.npz", _npz_huge_header),
    "onnx-empty": ("m.onnx", lambda p: p.write_bytes(b"")),
    "onnx-random": ("m.onnx", lambda p: p.write_bytes(random.Random(3).randbytes(700))),
    "onnx-truncated": ("m.onnx", lambda p: p.write_bytes(_onnx_bytes()[:40])),
    "package-sim16": ("m.ipuexe", _package_sim16),
}


# ---------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    name: str
    tool: str
    args: list[str]
    stderr: str
    file: str | None = None
    make: str | None = None
    exit: int = 1
    xfail: str | None = None
    requires: str | None = None


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    left: list[str] = field(default_factory=list)  # files the run left in its scratch directory


def load_cases() -> list[Case]:
    with (CORPUS / "cases.toml").open("rb") as f:
        return [Case(**c) for c in tomllib.load(f)["case"]]


CASES = load_cases()


def run_case(case: Case, scratch: Path) -> Outcome:
    """Run one case's tool in its own scratch directory (also the working directory)."""
    scratch.mkdir(parents=True)
    made = scratch / "inputs"
    made.mkdir()
    made_path = ""
    if case.make:
        fname, make = MAKERS[case.make]
        made_path = str(made / fname)
        make(Path(made_path))
    before = {p for p in made.iterdir()}
    subst = {
        "{case}": str(CORPUS / case.file) if case.file else "",
        "{made}": made_path,
        "{tmp}": str(scratch),
        "{examples}": str(EXAMPLES),
        "{root}": str(ROOT),
    }
    args = [re.sub("|".join(map(re.escape, subst)), lambda m: subst[m.group(0)], a) for a in case.args]
    env = {k: v for k, v in os.environ.items() if k != "IPU_TRACEBACK"}
    r = subprocess.run(
        [sys.executable, "-c", f"import {MODULES[case.tool]} as m; m.main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=scratch,
        env=env,
    )
    left = [str(p.relative_to(scratch)) for p in scratch.rglob("*") if p != made and p not in before]
    return Outcome(r.returncode, r.stdout, r.stderr, sorted(left))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every runnable case's outcome, two at a time."""
    root = tmp_path_factory.mktemp("corpus")
    runnable = [c for c in CASES if c.requires != "onnx" or _onnx_available()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {c.name: pool.submit(run_case, c, root / c.name) for c in runnable}
        return {name: f.result() for name, f in futures.items()}


def _param(case: Case) -> pytest.param:
    marks = []
    if case.xfail:
        marks.append(pytest.mark.xfail(reason=case.xfail, strict=True))
    if case.requires == "onnx":
        reason = "the ONNX importer (onnx, frontends/onnx_import.py) is not available"
        marks.append(pytest.mark.skipif(not _onnx_available(), reason=reason))
    return pytest.param(case, marks=marks, id=case.name)


def test_corpus_is_large_and_well_formed() -> None:
    names = [c.name for c in CASES]
    assert len(CASES) >= 60
    assert len(set(names)) == len(names), "duplicate case names"
    for c in CASES:
        assert c.tool in MODULES, c.name
        assert c.file is None or (CORPUS / c.file).is_file(), c.name
        assert c.make is None or c.make in MAKERS, c.name
        re.compile(c.stderr)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_refused_cleanly(case: Case, outcomes: dict[str, Outcome]) -> None:
    out = outcomes[case.name]
    both = out.stdout + out.stderr
    assert "Traceback" not in both, f"traceback:\n{out.stderr}"
    assert "internal error" not in both, f"a crash caught generically (a bug):\n{out.stderr}"
    assert out.returncode != 0, f"accepted (exit 0):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    assert out.returncode == case.exit, f"exit {out.returncode}, expected {case.exit}:\n{out.stderr}"
    assert re.search(case.stderr, out.stderr), f"stderr does not match {case.stderr!r}:\n{out.stderr}"
    assert out.stderr.lstrip().startswith(("error:", "Usage:")), f"not one error message:\n{out.stderr}"
    assert not out.left, f"files left behind: {out.left}"
