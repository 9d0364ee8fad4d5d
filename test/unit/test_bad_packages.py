"""A corpus of damaged and hostile `.ipuexe` files, each derived from a real mlp_small package.

Every file must be refused by `ipu-translate --from-ipuexe`, `ipu-translate --inspect` (and, for
some, `ipu-run`) with one `error:` line naming the problem: exit status 1, no traceback, no
output file. Files declaring absurd sizes must be refused without large allocations.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import re
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from conftest import EXAMPLES

from ipu.abi.isa import DType, Opcode, encode_simple, pack, unpack
from ipu.abi.kernels import KERNEL_NAMES, KERNELS
from ipu.abi.package import SCHEMA_VERSION, HostStep, Package, PackageError, Program
from ipu.abi.package_check import validate_package
from ipu.abi.package_io import (
    _content_digest,
    _digest_position,
    _schema,
    message_bytes,
    read_package,
    write_package,
)
from ipu.abi.tables import SLICE, TRANSFER
from ipu.codegen.ipuexe import build_package
from ipu.target import load_target
from ipu.target.mapping import TileMapping
from ipu.tools.common import make_context, parse_file
from ipu.tools.ipu_run import cli as run_cli
from ipu.tools.ipu_translate import cli as translate_cli
from ipu.transforms.pipeline import IpuCompilePass

T = load_target("sim16")
PEAK_LIMIT = 64 << 20  # bytes: reading and validating a hostile file stays far below this
S = {name: q for q, name in enumerate(SLICE.columns)}
X = {name: q for q, name in enumerate(TRANSFER.columns)}


@pytest.fixture(scope="module")
def base() -> Package:
    """mlp_small compiled for sim16: 1 program, 2 phases, 4 weights, 1 input, 1 output."""
    ctx = make_context()
    module = parse_file(ctx, EXAMPLES / "mlp_small.mlir")
    IpuCompilePass(target=T.name).apply(ctx, module)
    pkg = build_package(module, T)
    validate_package(pkg, T)
    return pkg


@pytest.fixture(scope="module")
def raw(base: Package, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("base") / "base.ipuexe"
    write_package(base, path)
    return path.read_bytes()


# ---------------------------------------------------------------- ways to damage a package

Make = Callable[[Package, bytes], "bytes | Package"]


def _flip(where: str, seed: int) -> Make:
    """One bit flipped, chosen by `seed`, in the segment table's first word ("header"), the
    middle quarter of the file ("middle") or its last 64 bytes ("end")."""

    def make(_: Package, raw: bytes) -> bytes:
        n = len(raw)
        lo, hi = {"header": (0, 8), "middle": (3 * n // 8, 5 * n // 8), "end": (n - 64, n)}[where]
        rng = random.Random(seed)
        data = bytearray(raw)
        data[rng.randrange(lo, hi)] ^= 1 << rng.randrange(8)
        return bytes(data)

    return make


def _read_by_trip(ph: Any, stride: int, trips: int, end: int | None = None) -> None:
    """Phase `ph` reading families [0, end) (default: all) by the trip of a loop of `trips`."""
    ph.trip_stride, ph.trips, ph.trip_begin, ph.trip_end = stride, trips, 0, len(ph.transfers) if end is None else end


def _edit(fn: Callable[[Package], Any]) -> Make:
    """A package-level change, written by write_package (a well-formed file of a bad package)."""

    def make(base: Package, _: bytes) -> Package:
        pkg = copy.deepcopy(base)
        fn(pkg)
        return pkg

    return make


def _edit_message(fn: Callable[[Any], Any]) -> Make:
    """A change to the Cap'n Proto message itself (fields the Package model cannot express)."""

    def make(_: Package, raw: bytes) -> bytes:
        with _schema().Package.from_bytes(raw, traversal_limit_in_words=1 << 30) as m:
            b = m.as_builder()
        fn(b)
        return message_bytes(b)

    return make


def _set_slice(kind: str, i: int, row: int, **values: int) -> Make:
    def fn(pkg: Package) -> None:
        b = getattr(pkg, kind)[i]
        b.slices = b.slices.copy()
        for name, v in values.items():
            b.slices[row, S[name]] = v

    return _edit(fn)


def _set_transfer(row: int, **values: int) -> Make:
    def fn(pkg: Package) -> None:
        t = pkg.phases[0].transfers.copy()
        for name, v in values.items():
            t[row, X[name]] = v
        pkg.phases[0] = dataclasses.replace(pkg.phases[0], transfers=t)

    return _edit(fn)


def _set_program(**values: Any) -> Make:
    return _edit(lambda pkg: pkg.programs.__setitem__(0, dataclasses.replace(pkg.programs[0], **values)))


def _code_word(opcode: Opcode, word: int, value: int) -> Make:
    """Set word `word` of the first `opcode` instruction of program 0."""

    def fn(pkg: Package) -> None:
        w, n = unpack(pkg.programs[0].code)
        w[int(np.flatnonzero(w[:, 0] == opcode)[0]), word] = value
        _set_code(pkg, w, n)

    return _edit(fn)


def _iterated_call_outside_loops(pkg: Package) -> None:
    """The first CALL made an `iteration_slice` of 3 iterations: a kernel that reads the loop's
    counter, in a program without loops."""
    w, n = unpack(pkg.programs[0].code)
    i = int(np.flatnonzero(w[:, 0] == Opcode.CALL)[0])
    w[i, 1] = KERNEL_NAMES.index("iteration_slice")
    w[i, 2] = int(DType.F16) | int(DType.F16) << 8
    w[i, 5:7] = (3, 2)
    n[i] = KERNELS["iteration_slice"].call_words
    _set_code(pkg, w, n)


def _host_steps(call: int, fn: Callable[[list[HostStep]], Any]) -> Make:
    """A change to the steps of host call `call` (0: initialize, 1: run)."""
    return _edit(lambda pkg: fn(pkg.host_calls[call].steps))


def _sync_five_words_long(pkg: Package) -> None:
    """Program 0's first SYNC's header claims 5 words (a SYNC is 1)."""
    w, n = unpack(pkg.programs[0].code)
    at = int(n[: int(np.flatnonzero(w[:, 0] == Opcode.SYNC)[0])].sum())
    raw = np.frombuffer(pkg.programs[0].code, "<u4").copy()
    raw[at] = Opcode.SYNC | 5 << 8
    pkg.programs[0] = dataclasses.replace(pkg.programs[0], code=raw.tobytes())


def _set_code(pkg: Package, words: np.ndarray, lengths: np.ndarray) -> None:
    """Program 0's code made of unpacked instructions (`ipu.abi.isa.unpack`)."""
    pkg.programs[0] = dataclasses.replace(pkg.programs[0], code=pack(words, lengths))


def _second_input_written_first(pkg: Package) -> None:
    """A second input x2 that the programs stream after x (HOST_IN 1 follows HOST_IN 0), while
    the run call writes it first."""
    pkg.inputs.append(dataclasses.replace(pkg.inputs[0], name="x2"))
    w, n = unpack(pkg.programs[0].code)
    at = int(np.flatnonzero(w[:, 0] == Opcode.HOST_IN)[0]) + 1
    extra, one = unpack(encode_simple(Opcode.HOST_IN, 1).tobytes() + encode_simple(Opcode.END).tobytes())
    _set_code(pkg, np.concatenate([w[:at], extra[:1], w[at:]]), np.concatenate([n[:at], one[:1], n[at:]]))
    steps = pkg.host_calls[1].steps
    steps.insert(0, dataclasses.replace(steps[0], binding="x2"))


def _host_in_after_a_call(pkg: Package) -> None:
    """Program 0's HOST_IN swapped with the CALL after it: the input lands after device work."""
    w, n = unpack(pkg.programs[0].code)
    i = int(np.flatnonzero(w[:, 0] == Opcode.HOST_IN)[0])
    j = i + int(np.flatnonzero(w[i:, 0] == Opcode.CALL)[0])
    w[[i, j]], n[[i, j]] = w[[j, i]], n[[j, i]]
    _set_code(pkg, w, n)


def _amplified_list(_: Package, __: bytes) -> bytes:
    """A 152-byte message whose program list claims 10**6 zero-sized elements (no bytes each)."""
    m = _schema().Package.new_message()
    m.schemaVersion = SCHEMA_VERSION
    m.init("programs", 1)
    data = bytearray(message_bytes(m))
    assert int.from_bytes(data[:4], "little") == 0  # one segment, starting at byte 8
    root = int.from_bytes(data[8:16], "little")
    slot = _schema().Package.schema.fields["programs"].proto.slot.offset
    at = 8 + 8 * (1 + ((root >> 2) & 0x3FFFFFFF) + ((root >> 32) & 0xFFFF) + slot)
    ptr = int.from_bytes(data[at : at + 8], "little")  # an inline-composite list pointer
    tag = at + 8 + 8 * ((ptr >> 2) & 0x3FFFFFFF)
    data[at : at + 8] = ((ptr & 0xFFFFFFFF) | 7 << 32).to_bytes(8, "little")  # 0 words of elements
    data[tag : tag + 8] = (10**6 << 2).to_bytes(8, "little")  # 10**6 elements of 0 words
    pos = _digest_position(data)  # re-seal: the file is intact, only hostile
    assert pos is not None
    data[pos : pos + 8] = _content_digest(data, pos).to_bytes(8, "little")
    return bytes(data)


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    make: Make
    message: str  # regex searched in the one error line
    args: tuple[str, ...] = ()  # extra CLI arguments
    run: bool = False  # also through ipu-run
    absurd: bool = False  # declares an absurd size: check the peak allocation too


def _bytes(data: bytes) -> Make:
    return lambda _, __: data


CORRUPT = r"corrupt or truncated package"
CASES = [
    # --- damaged files
    Case("empty", _bytes(b""), r"not a package \(truncated or not Cap'n Proto, 0 bytes\)", run=True),
    Case("truncated_8", lambda _, r: r[:8], r"not a package .*8 bytes"),
    Case("truncated_64", lambda _, r: r[:64], CORRUPT),
    Case("truncated_half", lambda _, r: r[: len(r) // 16 * 8], CORRUPT, run=True),
    Case("truncated_last_word", lambda _, r: r[:-8], CORRUPT),
    Case("truncated_odd", lambda _, r: r[:-3], r"not a package .*bytes\)"),
    Case("appended_word", lambda _, r: r + bytes(8), CORRUPT),
    Case("not_capnp", _bytes(b"this is a text file, not a package\n".ljust(40)), CORRUPT),
    # a flip in the header may land in the schema-version field, which is read (and refused) first
    *[Case(f"bitflip_header_{s}", _flip("header", s), f"{CORRUPT}|schema version") for s in range(3)],
    *[Case(f"bitflip_middle_{s}", _flip("middle", s), CORRUPT, run=s == 0) for s in range(3)],
    *[Case(f"bitflip_end_{s}", _flip("end", s), CORRUPT) for s in range(3)],
    # --- well-formed files of bad packages
    Case("schema_version_1", _edit(lambda p: setattr(p, "schema_version", 1)), r"schema version 1, this reader"),
    Case("wrong_target_name", _edit(lambda p: setattr(p, "target", "sim64")), r"package tiles is 16, target sim64"),
    Case("wrong_target_option", lambda _, r: r, r"package target is 'sim16', target mk2", args=("--target", "mk2")),
    Case("unknown_target", _edit(lambda p: setattr(p, "target", "nosuch")), r"unknown target 'nosuch'", run=True),
    Case(
        "tile_mapping_not_a_permutation",
        _edit(lambda p: setattr(p, "tile_mapping", TileMapping(16, 3))),
        r"tile mapping block=16 width=3 is not a permutation of 16 tiles",
    ),
    Case(
        "tile_mapping_block_too_large",
        _edit(lambda p: setattr(p, "tile_mapping", TileMapping(32, 2))),
        r"tile mapping block=32 width=2 is not a permutation of 16 tiles",
    ),
    Case(
        "overlapping_programs",
        _edit(lambda p: p.programs.append(Program(8, 8, p.programs[0].code_address, p.programs[0].code))),
        r"programs 0 and 1 overlap on tile 8",
    ),
    Case("code_outside_sram", _set_program(code_address=0x1000), r"program 0: code_address: .* executable region"),
    Case("code_in_data_region", _set_program(code_address=0x80000), r"program 0: code_address: .* executable region"),
    Case(
        "code_past_code_reserve",
        _set_program(code_address=T.memory_base + T.code_reserve_bytes),
        r"program 0: code_address: .* leaves the code region",
    ),
    Case(
        "program_tile_u32_minus_1",
        _edit_message(lambda m: setattr(m.programs[0], "firstTile", 2**32 - 1)),
        r"program 0: tiles \[4294967295, .* not a non-empty range within \[0, 16\)",
    ),
    Case(
        "iterated_kernel_outside_loops",
        _edit(_iterated_call_outside_loops),
        r"program 0: instruction \d+ \(iteration_slice of 3 iterations\) is outside any loop",
        run=True,
    ),
    Case(
        "kernel_index_out_of_range",
        _code_word(Opcode.CALL, 1, 999),
        r"program 0: instruction \d+ calls invalid kernel index 999",
    ),
    Case(
        "float_kernel_with_i32_dtype",  # the AMP computes on floats only; i32 is for the `ints` kernels
        _code_word(Opcode.CALL, 2, int(DType.INT32) | int(DType.INT32) << 8),
        r"program 0: instruction \d+ \(amp_matmul(_swapped)?\) names i32 in its dtype word; the kernel computes on "
        r"floats only",
    ),
    Case(
        "no_end_instruction",
        _edit(lambda pkg: _set_code(pkg, *(a[:-1] for a in unpack(pkg.programs[0].code)))),
        r"program 0: runs out after \d+ instructions \(\d+ bytes\) without END",
    ),
    Case(
        "bad_instruction_header",
        _edit(_sync_five_words_long),
        r"program 0: instruction \d+ \(byte \d+\) has invalid header 0x502",
    ),
    Case(
        "transfer_dst_past_sram",
        _set_transfer(0, dst_address=T.memory_end),
        r"phase 0: transfer 0 destination bytes out of range",
    ),
    Case(
        "transfer_src_below_sram",
        _set_transfer(0, src_address=0x1000),
        r"phase 0: transfer 0 source bytes out of range",
    ),
    Case("transfer_negative_tile", _set_transfer(0, src_tile=-1), r"phase 0: transfer 0 source tile out of range"),
    # --- a phase read by the trip (its sources advance trip_stride bytes a trip of its loop)
    Case(
        "phase_trip_stride_unaligned",
        _edit(lambda p: _read_by_trip(p.phases[0], 6, 3)),
        r"phase 0: trip_stride 6 and trips 3: a stride is a whole number of words, given with the loop's trips",
    ),
    Case(
        "phase_trip_stride_without_trips",
        _edit(lambda p: _read_by_trip(p.phases[0], 8, 0)),
        r"phase 0: trip_stride 8 and trips 0: a stride is a whole number of words",
    ),
    Case(
        "phase_trip_families_past_table",
        _edit(lambda p: _read_by_trip(p.phases[0], 8, 3, len(p.phases[0].transfers) + 1)),
        r"phase 0: families 0 to \d+ read by the trip with trip_stride 8: a stride moves a range of the \d+ families",
    ),
    Case(
        "phase_last_trip_past_sram",
        _edit(lambda p: _read_by_trip(p.phases[0], 1 << 24, 3)),
        r"phase 0: transfer 0 source bytes out of range",
        run=True,
    ),
    Case(
        "phase_read_by_trip_outside_loop",
        _edit(lambda p: _read_by_trip(p.phases[0], 8, 3)),
        r"control instruction \d+ \(EXCHANGE 0\): the phase reads by the trip of a loop of 3 trips, and runs "
        r"outside any loop",
        run=True,
    ),
    Case(
        "slice_negative_tile",
        _set_slice("weights", 1, 0, tile=-1),
        r"weight 'b1': slice 0 tile family outside \[0, 16\)",
    ),
    Case(
        "slice_past_memory_end",
        _set_slice("weights", 0, 0, address=T.memory_end - 64),
        r"weight 'w1': slice 0 byte range outside tile memory",
        run=True,
    ),
    Case(
        "output_not_covered",
        _edit(lambda p: setattr(p.outputs[0], "slices", p.outputs[0].slices[:-1])),
        r"output 'output0': slices do not cover logical element \d+",
    ),
    Case(
        "duplicate_weight_name",
        _edit(lambda p: p.weights.append(copy.deepcopy(p.weights[0]))),
        r"duplicate weight binding name 'w1'",
    ),
    Case(
        "weight_data_size_disagrees",
        _edit(lambda p: setattr(p.weights[1], "data", p.weights[1].data[:-2])),
        r"weight 'b1': data has 2046 bytes, shape \(1024,\) F16 needs 2048",
    ),
    Case("invalid_dtype", _edit_message(lambda m: setattr(m.weights[0], "dtype", 7)), r"weight 'w1': invalid dtype 7"),
    # --- host calls (initialize: w1 b1 w2 b2; run: x, execute, output0)
    Case(
        "host_call_missing",
        _edit(lambda p: p.host_calls.pop()),
        r"package host calls are \['initialize'\], expected \['initialize', 'run'\]",
    ),
    Case(
        "host_weight_write_missing",
        _host_steps(0, lambda s: s.pop(1)),
        r"host call 'initialize' has no write step for weight 'b1'",
        run=True,
    ),
    Case(
        "host_unknown_binding",
        _host_steps(1, lambda s: setattr(s[0], "binding", "nosuch")),
        r"host call 'run': step 0 writes 'nosuch': no input of that name$",
    ),
    Case(
        "host_weight_written_as_input",
        _host_steps(1, lambda s: setattr(s[0], "binding", "w1")),
        r"host call 'run': step 0 writes 'w1': no input of that name \('w1' is a weight\)",
    ),
    Case(
        "host_duplicate_input",
        _host_steps(1, lambda s: s.insert(1, copy.copy(s[0]))),
        r"host call 'run': step 1 \(write input 'x'\) moves it again: step 0 already did",
    ),
    Case(
        "host_execute_in_initialize",
        _host_steps(0, lambda s: s.append(HostStep("execute"))),
        r"host call 'initialize': step 4 is an execute step; 'initialize' has only write steps",
    ),
    Case(
        "host_run_without_execute",
        _host_steps(1, lambda s: s.pop(1)),
        r"host call 'run' has 0 execute steps \[\], expected 1",
    ),
    Case(
        "host_read_before_execute",
        _host_steps(1, lambda s: s.reverse()),
        r"host call 'run': step 0 \(read 'output0'\) comes before the execute step 1",
    ),
    Case(
        "host_step_kind_invalid",
        _host_steps(1, lambda s: setattr(s[0], "kind", "jump")),
        r"host call 'run': step 0 has kind 'jump', expected one of write, read, execute",
    ),
    Case(
        "host_wrong_cycles",
        _host_steps(1, lambda s: setattr(s[2], "cycles", s[2].cycles + 1)),
        r"host call 'run': step 2 \(read output 'output0'\): 2026 cycles, target sim16 gives 2025 for 32768 bytes",
        run=True,
    ),
    Case(
        "host_wrong_bytes",
        _host_steps(0, lambda s: setattr(s[0], "nbytes", 2)),
        r"host call 'initialize': step 0 \(write weight 'w1'\): 2 bytes, the binding holds 524288",
    ),
    Case(
        "host_run_out_of_host_in_order",
        _edit(_second_input_written_first),
        r"host call 'run': step 0 \(write 'x2'\) is out of HOST_IN order: "
        r"the programs' HOST_IN number 0 \(HOST_IN 0\) streams 'x'",
    ),
    Case(
        "host_in_after_device_work",
        _edit(_host_in_after_a_call),
        r"program 0: instruction 1 \(HOST_IN\) follows device work \(instruction 0\); the run call writes",
    ),
    # --- absurd declared sizes
    Case(
        "input_shape_1e12",
        _edit(lambda p: setattr(p.inputs[0], "shape", (10**6, 10**6))),
        r"input 'x': shape \(1000000, 1000000\) F16 is 2000000000000 bytes, more than",
        run=True,
        absurd=True,
    ),
    Case(
        "weight_shape_1e12",
        _edit(lambda p: setattr(p.weights[0], "shape", (10**6, 10**6))),
        r"weight 'w1': shape \(1000000, 1000000\) F16 is 2000000000000 bytes",
        absurd=True,
    ),
    Case(
        "shape_overflows_int64",
        _edit(lambda p: setattr(p.outputs[0], "shape", (2**40, 2**40))),
        r"output 'output0': shape .* bytes, more than",
        absurd=True,
    ),
    Case(
        "phase_table_rows_1e12",
        _edit_message(lambda m: setattr(m.phases[0].transfers, "rows", 10**12)),
        r"phase 0 transfers: table data has \d+ bytes, expected 1000000000000x17 int64",
        absurd=True,
    ),
    Case(
        "transfer_par_count_1e12",
        _set_transfer(0, par_count=10**12, par_src_step=0, par_dst_step=0),
        r"phase 0: transfer 0: par_count = 1000000000000 is out of range",
        run=True,
        absurd=True,
    ),
    Case(
        "phase_moves_too_many_words",
        _set_transfer(0, par_count=10**6, par_src_step=0, par_dst_step=0, par_src_offset_step=0, par_dst_offset_step=0),
        r"phase 0: transfers move \d+ words \(transfer 0: par_count 1000000 .* more than the 2555904 words",
        absurd=True,
    ),
    Case(
        "slice_rows_1e12",
        _set_slice("outputs", 0, 0, rows=10**12, tile_stride=0, logical_stride=0),
        r"output 'output0': slice 0: rows = 1000000000000 is out of range",
        absurd=True,
    ),
    Case(
        "slice_rows_exceed_tile",
        _set_slice("outputs", 0, 0, rows=10**6, tile_stride=0, logical_stride=0),
        r"output 'output0': slice 0 holds rows 1000000 x row_elements \d+ elements per tile, more than",
        absurd=True,
    ),
    Case(
        "slice_tile_count_1e6",
        _set_slice("inputs", 0, 0, tile_count=10**6, tile_step=0),
        r"input 'x': slice 0 tile_count 1000000 exceeds the 16 tiles",
        absurd=True,
    ),
    Case("amplified_program_list", _amplified_list, r"package programs: the list claims 1000000 elements", absurd=True),
]


def _write(case: Case, base: Package, raw: bytes, path: Path) -> Path:
    made = case.make(base, raw)
    if isinstance(made, Package):
        write_package(made, path)
    else:
        path.write_bytes(made)
    return path


def _assert_refused(result: Result, message: str) -> None:
    text = result.stdout + result.stderr
    assert result.exit_code == 1, (result.exit_code, text, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in text
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert re.search(message, lines[0]), lines[0]


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 20
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_translate_refuses(case: Case, base: Package, raw: bytes, tmp_path: Path) -> None:
    path = _write(case, base, raw, tmp_path / "bad.ipuexe")
    runner = CliRunner()
    for mode, out in (("--from-ipuexe", tmp_path / "out.mlir"), ("--inspect", tmp_path / "out.txt")):
        result = runner.invoke(translate_cli, [str(path), mode, "-o", str(out), *case.args])
        _assert_refused(result, case.message)
        assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.ipuexe"]  # no temporary left either


@pytest.mark.parametrize("case", [c for c in CASES if c.run], ids=lambda c: c.name)
def test_run_refuses(case: Case, base: Package, raw: bytes, tmp_path: Path) -> None:
    path = _write(case, base, raw, tmp_path / "bad.ipuexe")
    out = tmp_path / "y.npz"
    result = CliRunner().invoke(run_cli, [str(path), "--outputs", str(out), *case.args])
    _assert_refused(result, case.message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.ipuexe"]


def _read_and_validate(path: Path) -> None:
    pkg = read_package(path)
    validate_package(pkg, load_target(pkg.target))


@pytest.mark.parametrize("case", [c for c in CASES if c.absurd], ids=lambda c: c.name)
def test_absurd_sizes_allocate_little(case: Case, base: Package, raw: bytes, tmp_path: Path) -> None:
    path = _write(case, base, raw, tmp_path / "bad.ipuexe")
    tracemalloc.start()
    try:
        with pytest.raises(PackageError, match=case.message):
            _read_and_validate(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_LIMIT, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("name", ["empty", "bitflip_middle_0", "transfer_par_count_1e12"])
def test_as_a_user_runs_it(tool, name: str, base: Package, raw: bytes, tmp_path: Path) -> None:
    """The same refusals from real processes (console entry points, not CliRunner)."""
    case = next(c for c in CASES if c.name == name)
    path = _write(case, base, raw, tmp_path / "bad.ipuexe")
    out = tmp_path / "out.mlir"
    for r in (tool("ipu-translate", str(path), "--from-ipuexe", "-o", str(out)), tool("ipu-run", str(path))):
        assert r.returncode == 1, r.stderr
        assert "Traceback" not in r.stdout + r.stderr
        assert re.search(case.message, r.stderr), r.stderr
    assert not out.exists()


def test_base_package_is_accepted(base: Package, raw: bytes, tmp_path: Path) -> None:
    """The corpus's starting point reads back equal and passes every check."""
    path = tmp_path / "good.ipuexe"
    path.write_bytes(raw)
    result = CliRunner().invoke(translate_cli, [str(path), "--inspect"])
    assert result.exit_code == 0, result.output
    assert "target sim16" in result.stdout
    validate_package(read_package(path), T)
