"""What the tools import at start-up, and that user errors stay user errors when their classes
are looked up lazily: `ipu-translate` (parse and package) must not pull in the compiler, the
emulator (numba) or the reference, which cost about a second per run."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ipu.tools.common import ToolError, user_errors

HEAVY = ("numba", "ipu.api", "ipu.runtime.emulator", "ipu.golden.evaluator", "ipu.transforms.pipeline")


def test_translate_imports_no_compiler_emulator_or_reference() -> None:
    code = f"import sys, ipu.tools.ipu_translate; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _exit_of(exc: BaseException, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    @user_errors
    def body() -> None:
        raise exc

    with pytest.raises(SystemExit) as e:
        body()
    return int(e.value.code or 0), capsys.readouterr().err


def test_user_errors_of_loaded_modules_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    from ipu.abi.package import PackageError
    from ipu.golden.evaluator import GoldenError
    from ipu.runtime.emulator import EmulatorError
    from ipu.target import TargetError

    for cls in (ToolError, EmulatorError, GoldenError, PackageError, TargetError):
        code, err = _exit_of(cls("bad input"), capsys)
        assert (code, err) == (1, "error: bad input\n"), cls


def test_bugs_exit_2(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IPU_TRACEBACK", raising=False)
    code, err = _exit_of(KeyError("x"), capsys)
    assert code == 2 and err.startswith("internal error: KeyError")


def test_commands_end_fast_with_their_output_complete(tmp_path) -> None:
    """The commands end without the interpreter's teardown once they succeed: what they wrote
    (standard output, -o files, log lines on standard error) is all there, and errors still exit 1."""
    from conftest import EXAMPLES

    from ipu.abi.package_io import read_package

    opt_cmd = [sys.executable, "-m", "ipu.tools.ipu_opt", str(EXAMPLES / "mlp_small.mlir"), "-p", "ipu-compile"]
    opt_cmd += ["--target", "sim16"]
    translate = [sys.executable, "-m", "ipu.tools.ipu_translate"]
    opt = subprocess.run([*opt_cmd, "--log-level", "info"], capture_output=True, text=True)
    assert opt.returncode == 0, opt.stderr
    assert opt.stdout.rstrip().endswith("}") and "tasm." in opt.stdout
    assert "lowered to tile programs" in opt.stderr  # the log's last lines, flushed
    tasm = tmp_path / "m.tasm.mlir"
    again = subprocess.run([*opt_cmd, "-o", str(tasm)])
    assert again.returncode == 0 and tasm.read_text() == opt.stdout
    pkg = tmp_path / "m.ipuexe"
    tr = subprocess.run([*translate, str(tasm), "--to-ipuexe", "-o", str(pkg)], capture_output=True)
    assert tr.returncode == 0, tr.stderr
    assert read_package(pkg).target == "sim16"
    piped = subprocess.run([*translate, str(tasm), "--to-ipuexe", "-o", "-"], capture_output=True)
    assert piped.returncode == 0 and piped.stdout == pkg.read_bytes()
    bad = subprocess.run([*translate, str(tmp_path / "none.mlir"), "--to-ipuexe", "-o", str(pkg)])
    assert bad.returncode == 1


def test_commands_collect_garbage_less_often() -> None:
    import gc

    from ipu.tools.common import collect_less

    before = gc.get_threshold()
    try:
        collect_less()
        assert gc.get_threshold()[0] == 10_000
    finally:
        gc.set_threshold(*before)
