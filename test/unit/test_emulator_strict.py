"""The emulator's machine rules, each broken on purpose in a real package: every violation stops
the run and names the tile, the cycle and the instruction."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from conftest import EXAMPLES

import ipu
from ipu.abi.isa import Opcode, pack, unpack
from ipu.abi.kernels import KERNEL_NAMES
from ipu.abi.package import Package
from ipu.abi.tables import TRANSFER
from ipu.api import default_inputs
from ipu.runtime.emulator import Emulator, EmulatorError

D_ADDR = TRANSFER.index("dst_address")
S_ADDR = TRANSFER.index("src_address")


@pytest.fixture(scope="module")
def compiled() -> ipu.Compiled:
    # the greedy plan: plain AMP calls, whose streamed operand (input 1) the tests below move
    return ipu.compile(EXAMPLES / "mlp_small.mlir", target="sim16", options={"finalists": 1})


def _run(c: ipu.Compiled, pkg: Package, checked: bool = False) -> None:
    Emulator(pkg, c.target, checked=checked).run(default_inputs(pkg, c.reference, 0))


def _with_call(c: ipu.Compiled, kernel: str, word: int, value: int) -> tuple[Package, int]:
    """A copy of the package whose first `kernel` CALL has instruction word `word` set to `value`;
    also returns that instruction's index."""
    pkg = copy.deepcopy(c.package)
    words, n = unpack(pkg.programs[0].code)
    i = int(np.flatnonzero((words[:, 0] == Opcode.CALL) & (words[:, 1] == KERNEL_NAMES.index(kernel)))[0])
    words[i, word] = value
    pkg.programs[0].code = pack(words, n)
    return pkg, i


def test_the_package_runs_clean_in_checked_mode(compiled: ipu.Compiled) -> None:
    _run(compiled, compiled.package, checked=True)


def test_access_outside_memory(compiled: ipu.Compiled) -> None:
    t = compiled.target
    pkg, i = _with_call(compiled, "gelu", 3, t.memory_end - 64)  # output runs off the end of SRAM
    with pytest.raises(
        EmulatorError,
        match=rf"program 0 instruction {i} \(CALL\) on tiles 0\.\.15 at cycle \d+ .*"
        r"gelu output: .* outside memory",
    ):
        _run(compiled, pkg)


def test_amp_weights_across_regions(compiled: ipu.Compiled) -> None:
    boundary = compiled.target.region("interleaved").start
    pkg, i = _with_call(compiled, "amp_matmul", 5, boundary - 64)  # the streamed operand straddles the regions
    with pytest.raises(
        EmulatorError,
        match=rf"instruction {i} \(CALL\) .* at cycle \d+ amp_matmul input 1: .* streamed with 128-bit loads but the "
        "operand crosses from region standard into region interleaved",
    ):
        _run(compiled, pkg)


def test_amp_weights_in_standard_memory(compiled: ipu.Compiled) -> None:
    pkg, i = _with_call(compiled, "amp_matmul", 5, compiled.target.region("standard").start + 0x8000)
    with pytest.raises(EmulatorError, match=rf"instruction {i} .* amp_matmul input 1: .* lies in region standard"):
        _run(compiled, pkg)


def test_kernel_write_over_code(compiled: ipu.Compiled) -> None:
    code = compiled.package.programs[0].code_address
    pkg, i = _with_call(compiled, "gelu", 3, code + 64)
    with pytest.raises(
        EmulatorError,
        match=rf"instruction {i} \(CALL\) .* gelu output: writes .* over the code at "
        r"\[0x4c000, .*\) on tile 0",
    ):
        _run(compiled, pkg)


def test_read_of_uninitialized_memory_in_checked_mode(compiled: ipu.Compiled) -> None:
    unused = compiled.target.region("interleaved").start + 0x10000  # nothing is placed there
    pkg, i = _with_call(compiled, "gelu", 4, unused)
    _run(compiled, pkg)  # unchecked: the machine reads whatever is there
    with pytest.raises(
        EmulatorError,
        match=rf"instruction {i} \(CALL\) .* gelu input 0: reads uninitialized memory "
        rf"at {unused:#x} on tile 0 \(checked mode\)",
    ):
        _run(compiled, pkg, checked=True)


def _with_transfer(c: ipu.Compiled, column: int, value: int) -> Package:
    pkg = copy.deepcopy(c.package)
    ph = pkg.phases[0]
    ph.transfers = ph.transfers.copy()
    ph.transfers[0, column] = value
    return pkg


def test_exchange_write_over_code(compiled: ipu.Compiled) -> None:
    pkg = _with_transfer(compiled, D_ADDR, compiled.package.programs[0].code_address)
    with pytest.raises(
        EmulatorError,
        match=r"control instruction \d+ \(EXCHANGE 0\) at cycle \d+: phase 0: transfer 0 "
        r"\(cycles \d+\.\.\d+\) writes .* over the code on tile \d+",
    ):
        _run(compiled, pkg)


def test_exchange_read_of_uninitialized_memory(compiled: ipu.Compiled) -> None:
    pkg = _with_transfer(compiled, S_ADDR, compiled.target.region("interleaved").start + 0x10000)
    _run(compiled, pkg)
    with pytest.raises(
        EmulatorError, match=r"\(EXCHANGE 0\) at cycle \d+: .* reads uninitialized memory .* on tile \d+"
    ):
        _run(compiled, pkg, checked=True)


def test_exchange_port_rule(compiled: ipu.Compiled) -> None:
    pkg = copy.deepcopy(compiled.package)
    ph = pkg.phases[0]
    ph.transfers = np.concatenate([ph.transfers, ph.transfers[:1]])  # the same transfer twice, same cycles
    with pytest.raises(
        EmulatorError, match=r"control instruction \d+ \(EXCHANGE 0\) at cycle \d+: phase 0: .*tile \d+"
    ):
        _run(compiled, pkg)
