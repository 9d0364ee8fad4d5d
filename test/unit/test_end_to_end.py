"""End to end: compile, package, emulate and check; corrupted packages must fail."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, run_tool

from ipu.abi.package_io import read_package, write_package
from ipu.abi.tables import TRANSFER


def test_mlp_small_passes_on_sim16(tool, tmp_path: Path) -> None:
    out = tmp_path / "y.npz"
    r = tool("ipu-run", str(EXAMPLES / "mlp_small.mlir"), "--target", "sim16", "--outputs", str(out))
    assert r.returncode == 0, r.stderr
    assert "numericalTest=PASS" in r.stdout
    assert r.stdout.count("checkpoint=") == 5
    cycles = int(r.stdout.split("totalCycles=")[1].split()[0])
    assert cycles > 0
    with np.load(out) as z:
        assert z["output0"].shape == (64, 256)


def test_inputs_npz_round_trip(tool, tmp_path: Path) -> None:
    x = np.random.default_rng(5).standard_normal((64, 256)).astype(np.float16)
    np.savez(tmp_path / "x.npz", x=x)
    r = tool("ipu-run", str(EXAMPLES / "mlp_small.mlir"), "--target", "sim64", "--inputs", str(tmp_path / "x.npz"))
    assert r.returncode == 0, r.stderr
    assert "numericalTest=PASS" in r.stdout


@pytest.fixture(scope="module")
def built_package(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The mlp_small package for sim16, compiled once for the tests below (each corrupts its own copy)."""
    p = tmp_path_factory.mktemp("mlp") / "mlp.ipuexe"
    r = run_tool("ipu-run", str(EXAMPLES / "mlp_small.mlir"), "--target", "sim16", "--package", str(p))
    assert r.returncode == 0, r.stderr
    return p.read_bytes()


@pytest.fixture
def package(built_package: bytes, tmp_path: Path) -> Path:
    p = tmp_path / "mlp.ipuexe"
    p.write_bytes(built_package)
    return p


def _run_corrupted(tool, pkg_path: Path) -> tuple[int, str]:
    r = tool("ipu-run", str(pkg_path), "--reference", str(EXAMPLES / "mlp_small.mlir"))
    assert "Traceback" not in r.stderr
    return r.returncode, r.stdout + r.stderr


def test_prebuilt_package_passes(tool, package: Path) -> None:
    rc, text = _run_corrupted(tool, package)
    assert rc == 0 and "numericalTest=PASS" in text


def test_corrupted_transfer_destination_fails(tool, package: Path) -> None:
    pkg = read_package(package)
    ph = pkg.phases[0]
    row = int(np.argmax(ph.transfers[:, 7] * ph.transfers[:, 8]))
    ph.transfers[row, TRANSFER.index("dst_address")] += 64  # shift one transfer's destination by 64 bytes
    write_package(pkg, package)
    rc, text = _run_corrupted(tool, package)
    assert rc != 0
    assert "numericalTest=FAIL" in text or "error:" in text


def test_corrupted_weight_byte_fails(tool, package: Path) -> None:
    pkg = read_package(package)
    w = bytearray(pkg.weights[0].data)
    w[1] = 0x7B  # high byte of the first fp16 weight: a huge value
    pkg.weights[0].data = bytes(w)
    write_package(pkg, package)
    rc, text = _run_corrupted(tool, package)
    assert rc != 0
    assert "numericalTest=FAIL" in text


def test_truncated_package_is_a_clear_error(tool, package: Path) -> None:
    data = package.read_bytes()
    package.write_bytes(data[: len(data) // 2])
    rc, text = _run_corrupted(tool, package)
    assert rc != 0 and "error:" in text


def test_translate_round_trip(tool, tmp_path: Path) -> None:
    tasm_path = tmp_path / "m.tasm.mlir"
    r = tool(
        "ipu-opt",
        str(EXAMPLES / "mlp_small.mlir"),
        "-p",
        "ipu-compile",
        "--target",
        "sim16",
        "-o",
        str(tasm_path),
    )
    assert r.returncode == 0, r.stderr
    pkg_path = tmp_path / "m.ipuexe"
    r = tool("ipu-translate", str(tasm_path), "--to-ipuexe", "-o", str(pkg_path))
    assert r.returncode == 0, r.stderr
    r = tool("ipu-translate", str(pkg_path), "--from-ipuexe")
    assert r.returncode == 0, r.stderr
    assert 'tasm.call "amp_matmul' in r.stdout and "tasm.exchange @phase1" in r.stdout
    # the disassembled programs and phases parse back as tasm
    dis = tmp_path / "dis.mlir"
    dis.write_text(r.stdout)
    r = tool("ipu-opt", str(dis))
    assert r.returncode == 0, r.stderr
    assert "tasm.program @p0 tiles(0, 16)" in r.stdout


def test_cycle_count_only_matches_execution(tool, tmp_path: Path) -> None:
    """Kernel and exchange timing are data-independent: counting equals running."""
    from ipu.runtime.emulator import Emulator
    from ipu.target import load_target

    p = tmp_path / "m.ipuexe"
    r = tool("ipu-run", str(EXAMPLES / "transformer_block_small.mlir"), "--target", "sim64", "--package", str(p))
    assert r.returncode == 0, r.stderr
    ran = int(r.stdout.split("totalCycles=")[1].split()[0])
    counted = Emulator(read_package(p), load_target("sim64"), execute=False).run({}).total_cycles
    assert counted == ran
