"""Hostile inputs the tools must handle rather than refuse (issue 33; the refusals are in
`test/corpus`): signals mid-run, a model's own external data, non-finite and extreme values in
every dtype at every level, NaN carried through, loops counted without running them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, ROOT

import ipu
from ipu.golden.compare import ToleranceError, check_tolerances, compare
from ipu.runtime.emulator import Emulator

TOOL = {"ipu-opt": "ipu.tools.ipu_opt", "ipu-run": "ipu.tools.ipu_run", "ipu-translate": "ipu.tools.ipu_translate"}


def _tool(name: str, *args: str, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "IPU_TRACEBACK"}
    return subprocess.run(
        [sys.executable, "-m", TOOL[name], *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600, **kw
    )


@pytest.mark.parametrize("buffered", [True, False])
def test_a_closed_standard_output_ends_quietly(buffered: bool) -> None:
    """`ipu-run … | head -0`: the reader has closed the pipe before ipu-run writes; it stops with
    the status of a writer ended by SIGPIPE (141) and says nothing (it had reported an internal
    error), whether its output is written line by line or at its end."""
    env = {k: v for k, v in os.environ.items() if k not in ("IPU_TRACEBACK", "PYTHONUNBUFFERED")}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    args = [str(EXAMPLES / "mlp_small.mlir"), "--target", "sim16", "--check", "all"]
    p = subprocess.Popen(
        [sys.executable, "-m", TOOL["ipu-run"], *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert p.stdout is not None
    p.stdout.close()
    _, err = p.communicate(timeout=300)
    assert p.returncode == 141 and err == b"", err


# ---------------------------------------------------------------- signals


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_compile_leaves_no_file_and_the_old_output(tmp_path: Path, sig: signal.Signals) -> None:
    """Killed while compiling the mk2 transformer block, ipu-opt says so in one line (exit 130),
    removes its temporary file and leaves the earlier output as it was."""
    out = tmp_path / "out.mlir"
    out.write_text("// the earlier output\n")
    env = {k: v for k, v in os.environ.items() if k != "IPU_TRACEBACK"}
    args = [str(EXAMPLES / "transformer_block.mlir"), "-p", "ipu-compile", "-o", str(out)]
    p = subprocess.Popen([sys.executable, "-m", TOOL["ipu-opt"], *args], stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while not any(f.name.startswith(".out.mlir.") for f in tmp_path.iterdir()):  # it has started writing
        assert time.monotonic() < deadline and p.poll() is None, "ipu-opt never opened its temporary output"
        time.sleep(0.05)
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert err.strip() == "error: interrupted", err
    assert sorted(f.name for f in tmp_path.iterdir()) == ["out.mlir"]
    assert out.read_text() == "// the earlier output\n"


@pytest.mark.parametrize("suffix", [".probe", ".tmp"])
def test_a_signal_just_after_a_temporary_file_is_made_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """The worst moment for Ctrl-C: right after mkstemp made the output check's probe or the
    writer's temporary file. The signal waits until the file is removed or its removal is armed
    (a CI run once found a probe left behind)."""
    import tempfile

    from ipu import atomic

    made = tempfile.mkstemp

    def mkstemp_then_interrupt(*args, **kwargs):
        result = made(*args, **kwargs)
        if result[1].endswith(suffix):
            os.kill(os.getpid(), signal.SIGINT)
        return result

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_text(tmp_path / "out.txt", "x")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- ONNX external data


def _external_model(model_dir: Path) -> Path:
    """A model whose Constant and initializer keep their data in `w.bin` beside it."""
    import onnx
    from onnx import TensorProto, helper

    def ext(name: str) -> onnx.TensorProto:
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[4, 8])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "w.bin"), ("offset", "0"), ("length", "128")):
            e = t.external_data.add()
            e.key, e.value = k, v
        return t

    model_dir.mkdir()
    np.full((4, 8), 2.0, np.float32).tofile(model_dir / "w.bin")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    nodes = [
        helper.make_node("Constant", [], ["c"], value=ext("c")),
        helper.make_node("Add", ["x", "c"], ["s"]),
        helper.make_node("Mul", ["s", "w"], ["y"]),
    ]
    g = helper.make_graph(nodes, "g", [x], [y], initializer=[ext("w")])
    path = model_dir / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_external_data_comes_from_the_models_directory(tmp_path: Path) -> None:
    """Run from another directory holding a decoy `w.bin` (7.0s), the model reads its own (2.0s),
    and onnxruntime, which never opens the file itself, agrees."""
    pytest.importorskip("onnx")
    model = _external_model(tmp_path / "model")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    np.full((4, 8), 7.0, np.float32).tofile(elsewhere / "w.bin")
    ir = _tool("ipu-translate", str(model), "--import-onnx", cwd=elsewhere)
    assert ir.returncode == 0, ir.stderr
    assert "dense<2.000000e+00>" in ir.stdout and "7.0" not in ir.stdout
    run = _tool("ipu-run", str(model), "--target", "sim16", cwd=elsewhere)
    assert run.returncode == 0, run.stderr
    assert "oracleOutput=y oracle=onnxruntime" in run.stdout and "numericalTest=PASS" in run.stdout


def test_a_model_folded_to_constants_runs(tmp_path: Path) -> None:
    """No op names an ONNX node (everything folded): ipu-run once read the .onnx as text then."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    c = helper.make_node("Constant", [], ["y"], value=numpy_helper.from_array(np.ones((4, 8), np.float32)))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    model = helper.make_model(helper.make_graph([c], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    r = _tool(
        "ipu-run",
        str(path),
        "--target",
        "sim16",
        "--outputs",
        str(tmp_path / "y.npz"),
        "--profile",
        str(tmp_path / "p.json"),
    )
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "y.npz") as z:
        assert np.array_equal(z["y"], np.ones((4, 8), np.float32))


# ---------------------------------------------------------------- values at every level

F16 = np.array([np.inf, -np.inf, np.nan, -0.0, 65504.0, -65504.0, 6.1035e-05, 6e-08, 1.0, 0.0], np.float16)
F32 = np.array([np.inf, -np.inf, np.nan, -0.0, 3.4028235e38, -3.4028235e38, 1.1754944e-38, 1e-45, 1.0, 0.0], np.float32)
I32 = np.array([-(2**31), 2**31 - 1, 0, -1, 1, 65535, -65536, 7, 2**24 + 1, -(2**24) - 1], np.int32)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, NaN equal to NaN and -0.0 told from 0.0."""
    if a.dtype.kind == "f":
        return bool(np.array_equal(a, b, equal_nan=True) and (np.signbit(a) == np.signbit(b)).all())
    return bool(np.array_equal(a, b))


@pytest.mark.parametrize("values", [F16, F32, I32], ids=["f16", "f32", "i32"])
def test_extreme_values_round_trip_at_every_level(values: np.ndarray) -> None:
    """A constant holding every non-finite and extreme value of its dtype, written in MLIR's own
    hex form, keeps its bits when printed and read back at every level (graph, plan, tilemap,
    exchange, tasm); the device multiplies it by ones (adds zeros, for integers) to the same
    values the reference computes."""
    from ipu.api import context
    from ipu.ir_text import parse_text
    from ipu.transforms.pipeline import compile_passes

    et = {np.float16: "f16", np.float32: "f32", np.int32: "i32"}[values.dtype.type]
    size = values.dtype.itemsize
    if et == "i32":
        lits = ", ".join(str(int(v)) for v in values)
    else:
        lits = ", ".join(f"0x{int(v):0{2 * size}X}" for v in values.view(f"<u{size}"))
    t = f"tensor<{len(values)}x{et}>"
    op = "add" if et == "i32" else "mul"
    text = (
        f'func.func @main(%x: {t}) -> {t} {{\n  %c = graph.parameter "c" dense<[{lits}]> : {t} : {t}\n'
        f"  %y = graph.{op} %x, %c : ({t}, {t}) -> {t}\n  func.return %y : {t}\n}}\n"
    )
    module = parse_text(context(), text, "extremes")
    ctx = context()
    for label, p in compile_passes("sim16"):
        p.apply(ctx, module)
        back = parse_text(context(), str(module), label)  # printed and read back at this level
        inits = [
            o.init
            for o in back.walk()
            if o.name in ("graph.parameter", "plan.parameter", "tilemap.weight", "tasm.weight")
        ]
        assert inits, label
        for init in inits:
            assert init.data.data == values.astype(values.dtype.newbyteorder("<")).tobytes(), label
    x = np.zeros(len(values), values.dtype) if et == "i32" else np.ones(len(values), values.dtype)
    report = ipu.run(ipu.compile(text, target="sim16"), {"x": x})
    assert report.passed
    assert _same(report.outputs["output0"], values)


def test_nan_on_both_sides_agrees_and_vacuous_tolerances_are_refused() -> None:
    nan = np.array([np.nan, 1.0], np.float32)
    assert compare(nan, nan.copy()).passed
    assert not compare(np.array([np.nan, 1.0], np.float32), np.array([0.0, 1.0], np.float32)).passed
    assert not compare(np.array([0.0, 1.0], np.float32), np.array([np.nan, 1.0], np.float32)).passed
    for bad in ({"atol": float("nan")}, {"rtol": float("inf")}, {"atol": -1e-9}):
        with pytest.raises(ToleranceError):
            check_tolerances(bad.get("atol"), bad.get("rtol"))
    check_tolerances(0.0, 0.0)  # exact comparison is a real check


def test_the_cycle_count_of_a_loop_equals_its_run() -> None:
    """`count_device_cycles` times each loop body once and multiplies: equal to the emulated run."""
    compiled = ipu.compile(EXAMPLES / "transformer_stack_small.mlir")
    em = Emulator(compiled.package, compiled.target)
    report = ipu.run(compiled)
    assert em.count_device_cycles() == report.total_cycles
    with pytest.raises(Exception, match="more than the budget of 1,000"):
        ipu.run(compiled, max_cycles=1000)


def test_stablehlo_gather_clamps_its_indices() -> None:
    """StableHLO clamps a gather's start indices into the operand: ids past the table read its
    last row, as JAX computes them, where the device's lookup of an absent row gives zeros."""
    text = (ROOT / "test" / "stablehlo" / "embedding.mlir").read_text()
    compiled = ipu.compile(text, target="sim16")
    ids = np.arange(32, dtype=np.int32) * 7  # up to 217: past the 100-row table
    ids[0] = 10**6
    report = ipu.run(compiled, {"arg0": ids})
    assert report.passed
    graph = str(ipu.parse(text))
    assert "graph.max" in graph and "graph.min" in graph
