"""The emulator's worker threads: any thread count gives the same memory, cycles and faults."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest
from conftest import EXAMPLES
from test_copy_rows import writes_twice

import ipu
from ipu.abi.tables import TRANSFER
from ipu.api import Compiled, default_inputs
from ipu.runtime import emulator as emu
from ipu.runtime.copy_rows import buffer_sources, copy_members, copy_ordered, read_written
from ipu.runtime.emulator import Emulator, EmulatorError
from ipu.runtime.workers import emulator_threads, run_pieces


def test_pieces_run_to_their_end_and_the_first_fault_is_raised() -> None:
    ran, lock = [], threading.Lock()

    def piece(i: int) -> int:
        with lock:
            ran.append(i)
        if i in (2, 4):
            raise ValueError(f"piece {i}")
        return i * i

    with pytest.raises(ValueError, match="piece 2"):
        run_pieces(piece, range(6), 3)
    assert sorted(ran) == list(range(6))  # every piece ran: none is left writing memory
    assert run_pieces(lambda i: i * i, range(7), 3) == [i * i for i in range(7)]


def test_thread_count_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IPU_EMULATOR_THREADS", "3")
    assert emulator_threads() == 3
    monkeypatch.setenv("IPU_EMULATOR_THREADS", "x")
    assert emulator_threads() == 1
    monkeypatch.delenv("IPU_EMULATOR_THREADS")
    assert 1 <= emulator_threads() <= 8


def test_copies_in_parts_match_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random phases of strided members (some sources written by the phase), copied in the
    parts `_parts` cuts on three threads, give what one pass of `copy_members` gives."""
    monkeypatch.setattr(emu, "PARALLEL_COPY_WORDS", 1)
    rng = np.random.default_rng(7)
    i64 = np.int64
    tiles, tw = 4, 128
    tried = split = 0
    for _ in range(1500):
        n = int(rng.integers(2, 12))
        cols = [rng.integers(lo, hi, n).astype(i64) for lo, hi in ((0, tiles), (0, 50), (0, 8))]
        cols += [rng.integers(lo, hi, n).astype(i64) for lo, hi in ((0, tiles), (0, 50), (0, 9), (1, 5), (1, 5))]
        s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words = cols
        if writes_twice((tiles, tw), d_tile, d_word, d_step, rows, words):
            continue  # the phase's checks refuse a word written twice
        tried += 1
        args = (s_tile, s_word, s_step, d_tile, d_word, d_step, rows, words)
        by_dst = np.argsort(d_tile, kind="stable")
        buffered = read_written(by_dst, *args)
        mem = rng.integers(0, 1 << 32, tiles * tw, dtype=np.uint64).astype(np.uint32)
        want = mem.copy()
        copy_members(want, tw, buffered, by_dst, *args)
        buf, start = buffer_sources(mem, tw, buffered, s_tile, s_word, s_step, rows, words)
        parts = emu._parts(by_dst, rows * words, 3)
        assert np.array_equal(np.concatenate(parts), by_dst)
        split += len(parts) > 1
        run_pieces(lambda part: copy_ordered(mem, tw, buffered, buf, start, part, *args), parts, 3)  # noqa: B023
        assert (mem == want).all()
    assert tried > 100 and split > tried // 2


@pytest.fixture(scope="module")
def block() -> Compiled:
    """The half transformer block at test scale on sim16: matmuls, attention, layer norms and many phases."""
    return ipu.compile(EXAMPLES / "transformer_block_small.mlir", target="sim16")


def test_any_thread_count_gives_the_same_memory(block: Compiled, monkeypatch: pytest.MonkeyPatch) -> None:
    """One thread, and three with every CALL cut into many chunks and every phase into parts:
    the same tile memory byte for byte, the same outputs and the same cycles."""
    x = default_inputs(block.package, block.reference, 0)
    runs = []
    for threads, chunk, words in ((1, emu.KERNEL_CHUNK_BYTES, emu.PARALLEL_COPY_WORDS), (3, 1024, 1)):
        monkeypatch.setenv("IPU_EMULATOR_THREADS", str(threads))
        monkeypatch.setattr(emu, "KERNEL_CHUNK_BYTES", chunk)
        monkeypatch.setattr(emu, "PARALLEL_COPY_WORDS", words)
        e = Emulator(block.package, block.target)
        assert e.threads == threads
        runs.append((e.run(x), e.mem.copy()))
    (one, mem1), (three, mem3) = runs
    assert np.array_equal(mem1, mem3)
    assert one.total_cycles == three.total_cycles
    assert one.outputs.keys() == three.outputs.keys()
    for name, v in one.outputs.items():
        assert v.tobytes() == three.outputs[name].tobytes()
    checks = ipu.check(block.package, three, block.reference, x)
    assert checks and all(k.result.passed for k in checks)


def test_a_phase_checked_ahead_faults_when_the_run_reaches_it(block: Compiled, monkeypatch: pytest.MonkeyPatch) -> None:
    """A phase that writes past tile memory is checked on the background thread while the run
    goes on; the fault is raised, with the one-thread message, when the run reaches that phase."""
    pkg = block.package
    last = pkg.phases[-1]
    t = np.asarray(last.transfers, np.int64).reshape(-1, len(TRANSFER)).copy()
    t[0, TRANSFER.columns.index("dst_address")] = block.target.memory_end
    bad = dataclasses.replace(pkg, phases=[*pkg.phases[:-1], dataclasses.replace(last, transfers=t)])
    x = default_inputs(pkg, block.reference, 0)
    messages = []
    for threads in (1, 2):
        monkeypatch.setenv("IPU_EMULATOR_THREADS", str(threads))
        e = Emulator(bad, block.target)
        assert bool(e._ahead) == (threads > 1)
        with pytest.raises(EmulatorError) as err:
            e.run(x)
        messages.append(str(err.value))
        assert not e._ahead  # nothing left queued once the run has ended
    assert messages[0] == messages[1]
    assert f"phase {last.index}: transfer 0" in messages[0] and "outside memory" in messages[0]


def test_an_emulator_can_be_given_its_threads(block: Compiled, monkeypatch: pytest.MonkeyPatch) -> None:
    """A system's Ray actors share the cores: each emulator takes the count it is given (at least
    one; one thread checks no phase ahead)."""
    monkeypatch.setenv("IPU_EMULATOR_THREADS", "4")
    assert Emulator(block.package, block.target, execute=False, threads=3).threads == 3
    one = Emulator(block.package, block.target, threads=0)
    assert one.threads == 1 and not one._ahead


def test_a_refused_run_leaves_no_checks_queued(block: Compiled) -> None:
    """Phases queued for checking ahead are dropped when a run is refused before it starts."""
    e = Emulator(block.package, block.target, max_cycles=1, threads=2)
    assert e._ahead
    with pytest.raises(EmulatorError, match="budget"):
        e.run(default_inputs(block.package, block.reference, 0))
    assert not e._ahead
