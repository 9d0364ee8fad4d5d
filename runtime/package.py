"""The `.ipuexe` package: an in-memory model, a Cap'n Proto file format, a validating reader.

Tables are NumPy int64 arrays whose columns are named in `ipu.abi.tables` (SLICE, TRANSFER);
all addresses are absolute tile byte addresses, strides are in bytes unless named otherwise.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import capnp
import numpy as np

from ipu.abi.isa import DTYPE_SIZE, INSTRUCTION_BYTES, INSTRUCTION_WORDS, DType, Opcode
from ipu.abi.kernels import KERNEL_NAMES, KERNELS, decode_call_params
from ipu.abi.tables import SLICE, TRANSFER
from ipu.atomic import write_bytes
from ipu.target import Target
from ipu.target.mapping import MappingError, TileMapping

SCHEMA_VERSION = 5  # 2: contentDigest; 3: hostCalls; 4: tileMapping; 5: checkpoints name their graph value

# The host calls of a package, in order, and the kinds of their steps (see HostStep).
HOST_CALLS = ("initialize", "run")
HOST_STEP_KINDS = ("write", "read", "execute")

# Instructions that change tile memory or time on the device: `run` writes every input before
# them and reads every output after them (CHECKPOINT only samples a value).
DEVICE_WORK = (Opcode.CALL, Opcode.SYNC, Opcode.EXCHANGE, Opcode.LOOP_BEGIN, Opcode.LOOP_END)


class PackageError(ValueError):
    """A package that cannot be read or fails validation; the message names the problem."""


@dataclass
class Binding:
    """A logical tensor and where its bytes live on tiles (inputs, outputs, weights)."""

    name: str
    dtype: DType
    shape: tuple[int, ...]
    slices: np.ndarray  # int64 [n, len(SLICE)]
    data: bytes | None = None  # logical row-major bytes, weights only


@dataclass
class Program:
    """Code shared by tiles [first_tile, first_tile + tile_count), loaded at code_address."""

    first_tile: int
    tile_count: int
    code_address: int
    code: bytes  # INSTRUCTION_BYTES per instruction, see ipu.abi.isa


@dataclass
class Phase:
    """One scheduled exchange phase."""

    index: int
    lower_bound: int
    horizon: int
    scheduler: str
    transfers: np.ndarray  # int64 [n, len(TRANSFER)]


@dataclass
class Checkpoint:
    """A value sampled when a program reaches CHECKPOINT index."""

    index: int
    name: str
    value: str  # the stable name of the graph value this is (`ipu.dialects.value_names`)
    binding: Binding
    aspect: str = "value"  # "value": the op's result; "scores": an attention op's scaled, masked scores


@dataclass
class HostStep:
    """One step of a host call: a host-exchange phase that writes a binding to its tiles or reads
    it back, or the execution of the programs (no bytes, no host cycles: device cycles)."""

    kind: str  # one of HOST_STEP_KINDS
    binding: str = ""  # the weight, input or output moved; "" for execute
    nbytes: int = 0  # bytes over the host link: the binding's logical bytes (schema field `bytes`)
    cycles: int = 0  # host cycles: Target.host_transfer_cycles(nbytes)


@dataclass
class HostCall:
    """A host entry point: `initialize` writes every weight (package order); `run` writes every
    input (HOST_IN order), executes the programs once, reads every output (HOST_OUT order)."""

    name: str  # one of HOST_CALLS
    steps: list[HostStep]


@dataclass
class Package:
    compiler_version: str
    target: str
    tiles: int
    memory_base: int
    memory_size: int
    programs: list[Program]
    phases: list[Phase]
    weights: list[Binding]
    inputs: list[Binding]
    outputs: list[Binding]
    checkpoints: list[Checkpoint]
    host_calls: list[HostCall] = field(default_factory=list)
    metrics: dict[str, int] = field(default_factory=dict)
    tile_mapping: TileMapping = TileMapping()
    schema_version: int = SCHEMA_VERSION


def binding_bytes(b: Binding) -> int:
    """Logical bytes of a binding: what a host step moves over the host link."""
    return math.prod(int(d) for d in b.shape) * DTYPE_SIZE[DType(int(b.dtype))]


def host_stream_order(programs: list[Program]) -> tuple[list[int], list[int]]:
    """(HOST_IN, HOST_OUT) indices in the order program 0 executes them, up to its END (the
    programs share one control skeleton)."""
    words = np.frombuffer(programs[0].code, "<u4").reshape(-1, INSTRUCTION_WORDS)
    ends = np.flatnonzero(words[:, 0] == Opcode.END)
    words = words[: ends[0] if ends.size else len(words)]
    return (
        [int(w[1]) for w in words if w[0] == Opcode.HOST_IN],
        [int(w[1]) for w in words if w[0] == Opcode.HOST_OUT],
    )


def _transfer_step(kind: str, b: Binding, target: Target) -> HostStep:
    n = binding_bytes(b)
    return HostStep(kind, b.name, n, target.host_transfer_cycles(n))


def make_host_calls(
    weights: list[Binding], inputs: list[Binding], outputs: list[Binding], target: Target
) -> list[HostCall]:
    """`initialize` writing `weights`, `run` writing `inputs`, executing, reading `outputs`, each
    list in the order given, every write and read costed by `target`."""
    run = [_transfer_step("write", b, target) for b in inputs] + [HostStep("execute")]
    run += [_transfer_step("read", b, target) for b in outputs]
    return [HostCall("initialize", [_transfer_step("write", w, target) for w in weights]), HostCall("run", run)]


def host_calls_for(pkg: Package, target: Target) -> list[HostCall]:
    """The host calls `pkg`'s weights and programs imply (the rule build_package applies to a tasm
    module), for packages built by hand: inputs and outputs in program 0's HOST_IN/HOST_OUT order."""
    ins, outs = host_stream_order(pkg.programs)
    return make_host_calls(pkg.weights, [pkg.inputs[i] for i in ins], [pkg.outputs[i] for i in outs], target)


# --------------------------------------------------------------------------------------------
# Cap'n Proto file format
# --------------------------------------------------------------------------------------------

SCHEMA_PATH = Path(__file__).with_name("ipuexe.capnp")
_SCHEMA: Any = None


def _schema() -> Any:
    """The compiled `ipuexe.capnp` schema module (loaded once)."""
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = capnp.load(str(SCHEMA_PATH))
    return _SCHEMA


def _put_table(builder: Any, table: np.ndarray, ncols: int) -> None:
    arr = np.ascontiguousarray(table, dtype="<i8")
    if arr.ndim != 2:
        arr = arr.reshape(-1, ncols)
    builder.rows, builder.columns = arr.shape
    builder.data = arr.tobytes()


def _get_table(reader: Any, what: str) -> np.ndarray:
    rows, cols, raw = int(reader.rows), int(reader.columns), reader.data
    if len(raw) != rows * cols * 8:
        raise PackageError(f"{what}: table data has {len(raw)} bytes, expected {rows}x{cols} int64")
    return np.frombuffer(raw, dtype="<i8").astype(np.int64).reshape(rows, cols)


def _put_binding(b: Any, src: Binding) -> None:
    b.name = src.name
    b.dtype = int(src.dtype)
    b.shape = [int(x) for x in src.shape]
    _put_table(b.slices, src.slices, len(SLICE))
    b.hasData = src.data is not None
    if src.data is not None:
        b.data = bytes(src.data)


def _get_binding(b: Any, what: str) -> Binding:
    name = str(b.name)
    try:
        dtype = DType(int(b.dtype))
    except ValueError:
        raise PackageError(f"{what} '{name}': invalid dtype {int(b.dtype)}") from None
    return Binding(
        name=name,
        dtype=dtype,
        shape=tuple(int(x) for x in b.shape),
        slices=_get_table(b.slices, f"{what} '{name}' slices"),
        data=bytes(b.data) if b.hasData else None,
    )


def _digest_position(buf: bytes | memoryview) -> int | None:
    """Byte offset of the root struct's `contentDigest` word in an unpacked message, or None
    when the root is not a plain struct pointer in segment 0 whose data section holds it."""
    if len(buf) < 8:
        return None
    segments = int.from_bytes(buf[0:4], "little") + 1
    seg0 = 8 * ((segments + 2) // 2)  # the segment table: (1 + segments) u32, padded to 8 bytes
    seg0_end = seg0 + 8 * int.from_bytes(buf[4:8], "little")
    if seg0_end > len(buf) or seg0 + 8 > seg0_end:
        return None
    ptr = int.from_bytes(buf[seg0 : seg0 + 8], "little")
    if ptr & 3:  # not a struct pointer (a far root pointer: not what write_package produces)
        return None
    offset = (ptr >> 2) & 0x3FFFFFFF
    offset -= (offset & 0x20000000) << 1  # signed 30 bits
    word = _schema().Package.schema.fields["contentDigest"].proto.slot.offset
    pos = seg0 + 8 * (1 + offset + word)
    if word >= (ptr >> 32) & 0xFFFF or pos < seg0 or pos + 8 > seg0_end:
        return None
    return pos


def _content_digest(buf: bytes | memoryview, pos: int) -> int:
    """SHA-256 (first 8 bytes) of `buf` with the digest word at `pos` read as zero."""
    view = memoryview(buf)
    h = hashlib.sha256(view[:pos])
    h.update(bytes(8))
    h.update(view[pos + 8 :])
    return int.from_bytes(h.digest()[:8], "little")


def message_bytes(m: Any) -> bytes:
    """The file bytes of a Package message builder, its `contentDigest` set."""
    m.contentDigest = 0
    data = bytearray(m.to_bytes())
    pos = _digest_position(data)
    assert pos is not None, "a fresh message has its root struct first in segment 0"
    data[pos : pos + 8] = _content_digest(data, pos).to_bytes(8, "little")
    return bytes(data)


def package_bytes(pkg: Package) -> bytes:
    """The file bytes of `pkg` (what `write_package` writes), its content digest set."""
    s = _schema()
    m = s.Package.new_message()
    m.schemaVersion = pkg.schema_version
    m.compilerVersion = pkg.compiler_version
    m.target = pkg.target
    m.tiles = pkg.tiles
    m.memoryBase = pkg.memory_base
    m.memorySize = pkg.memory_size
    for b, p in zip(m.init("programs", len(pkg.programs)), pkg.programs, strict=True):
        b.firstTile, b.tileCount, b.codeAddress = p.first_tile, p.tile_count, p.code_address
        b.code = bytes(p.code)
    for b, ph in zip(m.init("phases", len(pkg.phases)), pkg.phases, strict=True):
        b.index, b.lowerBound, b.horizon, b.scheduler = ph.index, ph.lower_bound, ph.horizon, ph.scheduler
        _put_table(b.transfers, ph.transfers, len(TRANSFER))
    for field_name in ("weights", "inputs", "outputs"):
        src = getattr(pkg, field_name)
        for b, binding in zip(m.init(field_name, len(src)), src, strict=True):
            _put_binding(b, binding)
    for b, c in zip(m.init("checkpoints", len(pkg.checkpoints)), pkg.checkpoints, strict=True):
        b.index, b.name, b.value, b.aspect = c.index, c.name, c.value, c.aspect
        _put_binding(b.binding, c.binding)
    for b, (k, v) in zip(m.init("metrics", len(pkg.metrics)), pkg.metrics.items(), strict=True):
        b.name, b.value = k, int(v)
    for b, call in zip(m.init("hostCalls", len(pkg.host_calls)), pkg.host_calls, strict=True):
        b.name = call.name
        for st, step in zip(b.init("steps", len(call.steps)), call.steps, strict=True):
            st.kind, st.binding, st.bytes, st.cycles = step.kind, step.binding, step.nbytes, step.cycles
    m.tileMapping.block, m.tileMapping.width = pkg.tile_mapping.block, pkg.tile_mapping.width
    return message_bytes(m)


def write_package(pkg: Package, path: str | os.PathLike[str]) -> None:
    """Write `pkg` atomically: a temporary file in the same directory, then os.replace."""
    write_bytes(path, package_bytes(pkg))


def read_package(path: str | os.PathLike[str], traversal_limit_words: int | None = None) -> Package:
    """Read a package file; any unreadable, truncated, damaged (content digest) or wrong-version
    file raises PackageError. Nothing is allocated from a size the file declares before it is
    checked: Cap'n Proto bounds data by the buffer, struct lists are checked against the file
    size (zero-sized elements cost no bytes), tables against their data.

    The traversal limit defaults to four times the file size in words (large weight blobs)."""
    path = Path(path)
    try:
        buf = path.read_bytes()
    except FileNotFoundError:
        raise PackageError(f"package file not found: {path}") from None
    except OSError as e:
        raise PackageError(f"cannot read package {path}: {e}") from None
    if len(buf) < 16 or len(buf) % 8:
        raise PackageError(f"{path}: not a package (truncated or not Cap'n Proto, {len(buf)} bytes)")
    limit = traversal_limit_words if traversal_limit_words is not None else 4 * (len(buf) // 8) + (1 << 20)
    try:
        with _schema().Package.from_bytes(buf, traversal_limit_in_words=limit, nesting_limit=64) as m:
            version, stored, pos = int(m.schemaVersion), int(m.contentDigest), _digest_position(buf)
            actual = None if pos is None else _content_digest(buf, pos)
            if version != SCHEMA_VERSION and (stored in (0, actual)):  # intact, or from before digests
                raise PackageError(f"{path}: schema version {version}, this reader supports {SCHEMA_VERSION}")
            if actual is None:
                raise PackageError(f"{path}: corrupt or truncated package (no content digest in the root struct)")
            if stored != actual:
                raise PackageError(
                    f"{path}: corrupt or truncated package (content digest {actual:#018x}, "
                    f"the file records {stored:#018x}: bytes were changed after writing)"
                )
            return _read_message(m, len(buf))
    except PackageError:
        raise
    except Exception as e:  # capnp raises KjException (and friends) for malformed data
        text = str(e)
        if "traversal limit" in text.lower():
            raise PackageError(f"{path}: message exceeds the traversal limit of {limit} words") from None
        first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
        raise PackageError(f"{path}: corrupt or truncated package ({first})") from None


def _struct_list(m: Any, name: str, file_bytes: int, what: str = "package") -> Any:
    """The list field `name` of `m` (`what`, for messages), refused when it claims more elements
    than the file can hold: a list of zero-sized structs costs no bytes, so its count alone must
    not drive allocation."""
    items = getattr(m, name)
    if not len(items):
        return items
    node = items[0].schema.node.struct  # the schema's size: what a writer of this version stores
    words = node.dataWordCount + node.pointerCount
    if len(items) * words * 8 > file_bytes:
        raise PackageError(
            f"{what} {name}: the list claims {len(items)} elements of {words} words, "
            f"more than the {file_bytes}-byte file holds"
        )
    return items


def _read_message(m: Any, file_bytes: int) -> Package:
    def items(name: str) -> Any:
        return _struct_list(m, name, file_bytes)

    programs = [
        Program(int(p.firstTile), int(p.tileCount), int(p.codeAddress), bytes(p.code)) for p in items("programs")
    ]
    phases = [
        Phase(
            int(p.index),
            int(p.lowerBound),
            int(p.horizon),
            str(p.scheduler),
            _get_table(p.transfers, f"phase {int(p.index)} transfers"),
        )
        for p in items("phases")
    ]
    weights = [_get_binding(b, "weight") for b in items("weights")]
    inputs = [_get_binding(b, "input") for b in items("inputs")]
    outputs = [_get_binding(b, "output") for b in items("outputs")]
    checkpoints = [
        Checkpoint(
            int(c.index), str(c.name), str(c.value), _get_binding(c.binding, "checkpoint"), str(c.aspect) or "value"
        )
        for c in items("checkpoints")
    ]
    host_calls = [
        HostCall(
            str(c.name),
            [
                HostStep(str(st.kind), str(st.binding), int(st.bytes), int(st.cycles))
                for st in _struct_list(c, "steps", file_bytes, f"host call '{c.name}'")
            ],
        )
        for c in items("hostCalls")
    ]
    return Package(
        compiler_version=str(m.compilerVersion),
        target=str(m.target),
        tiles=int(m.tiles),
        memory_base=int(m.memoryBase),
        memory_size=int(m.memorySize),
        programs=programs,
        phases=phases,
        weights=weights,
        inputs=inputs,
        outputs=outputs,
        checkpoints=checkpoints,
        host_calls=host_calls,
        metrics={str(x.name): int(x.value) for x in items("metrics")},
        tile_mapping=TileMapping(int(m.tileMapping.block), int(m.tileMapping.width)),
        schema_version=int(m.schemaVersion),
    )


def packages_equal(a: Package, b: Package) -> bool:
    """Deep equality of two packages (numpy tables compared by value)."""

    def norm(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            return ("nd", x.shape, np.asarray(x, np.int64).tobytes())
        if isinstance(x, list | tuple):
            return tuple(norm(v) for v in x)
        if isinstance(x, dict):
            return tuple(sorted((k, norm(v)) for k, v in x.items()))
        if hasattr(x, "__dataclass_fields__"):
            return (type(x).__name__,) + tuple(norm(getattr(x, f)) for f in x.__dataclass_fields__)
        return x

    return norm(a) == norm(b)


# --------------------------------------------------------------------------------------------
# Validation against a target (vectorized: mk2 packages hold ~100k expanded transfers)
# --------------------------------------------------------------------------------------------


_DTYPE_SIZE_BY_CODE = np.zeros(256, np.int64)
for _d, _s in DTYPE_SIZE.items():
    _DTYPE_SIZE_BY_CODE[int(_d)] = _s


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _capacity(target: Target) -> int:
    """Bytes the whole machine holds: no count, index, address or stride in a table may exceed it."""
    return target.tiles * target.memory_size


def _check_magnitudes(table: np.ndarray, columns: tuple[str, ...], limit: int, what: str) -> None:
    """Every value within [-limit, limit] (so the corner arithmetic below cannot overflow int64)."""
    bad = (table > limit) | (table < -limit)
    if bad.any():
        r, q = (int(x) for x in np.argwhere(bad)[0])
        raise PackageError(f"{what} {r}: {columns[q]} = {table[r, q]} is out of range (magnitude above {limit})")


def validate_package(pkg: Package, target: Target) -> None:
    """Check `pkg` against `target`; raises PackageError naming the first problem found."""
    if pkg.schema_version != SCHEMA_VERSION:
        raise PackageError(f"schema version {pkg.schema_version}, expected {SCHEMA_VERSION}")
    for what, have, want in (
        ("target", pkg.target, target.name),
        ("tiles", pkg.tiles, target.tiles),
        ("memory_base", pkg.memory_base, target.memory_base),
        ("memory_size", pkg.memory_size, target.memory_size),
    ):
        if have != want:
            raise PackageError(f"package {what} is {have!r}, target {target.name} has {want!r}")
    try:
        pkg.tile_mapping.check(target.tiles)
    except MappingError as e:
        raise PackageError(str(e)) from None
    phase_ids = [ph.index for ph in pkg.phases]
    if len(set(phase_ids)) != len(phase_ids):
        raise PackageError("duplicate exchange phase indices")
    ckpt_ids = [c.index for c in pkg.checkpoints]
    if len(set(ckpt_ids)) != len(ckpt_ids):
        raise PackageError("duplicate checkpoint indices")
    _validate_programs(pkg, target)
    for ph in pkg.phases:
        _validate_transfers(ph, target)
    for what, items in (
        ("weight", pkg.weights),
        ("input", pkg.inputs),
        ("output", pkg.outputs),
        ("checkpoint", [c.binding for c in pkg.checkpoints]),
    ):
        names = [b.name for b in items]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise PackageError(f"duplicate {what} binding name '{dup}'")
        for b in items:
            _validate_binding(b, what, target, need_data=what == "weight", need_cover=what in ("output", "checkpoint"))
    _validate_host_calls(pkg, target)


def _validate_programs(pkg: Package, target: Target) -> None:
    if not pkg.programs:
        raise PackageError("package has no programs")
    base, end = target.memory_base, target.memory_end
    prev_end, prev_i = 0, -1
    for i in sorted(range(len(pkg.programs)), key=lambda j: pkg.programs[j].first_tile):
        p = pkg.programs[i]
        if p.tile_count <= 0 or p.first_tile < 0 or p.first_tile + p.tile_count > target.tiles:
            raise PackageError(
                f"program {i}: tiles [{p.first_tile}, {p.first_tile + p.tile_count}) "
                f"not a non-empty range within [0, {target.tiles})"
            )
        if p.first_tile < prev_end:
            raise PackageError(f"programs {prev_i} and {i} overlap on tile {p.first_tile}")
        prev_end, prev_i = p.first_tile + p.tile_count, i
    skeleton: np.ndarray | None = None
    for i, p in enumerate(pkg.programs):
        n = len(p.code)
        if n == 0 or n % INSTRUCTION_BYTES:
            raise PackageError(f"program {i}: code length {n} is not a positive multiple of {INSTRUCTION_BYTES}")
        if (
            not any(r.executable and r.start <= p.code_address and p.code_address + n <= r.end for r in target.regions)
            or p.code_address < base
            or p.code_address + n > end
        ):
            raise PackageError(
                f"program {i}: code_address: code [{p.code_address:#x}, {p.code_address + n:#x}) "
                "is not inside an executable region"
            )
        if p.code_address + n > base + target.code_reserve_bytes:
            raise PackageError(
                f"program {i}: code_address: code [{p.code_address:#x}, {p.code_address + n:#x}) leaves the "
                f"code reserve [{base:#x}, {base + target.code_reserve_bytes:#x}) and overlaps data memory"
            )
        words = np.frombuffer(p.code, dtype="<u4").reshape(-1, INSTRUCTION_WORDS).astype(np.int64)
        op = words[:, 0]
        ends = np.flatnonzero(op == Opcode.END)
        if ends.size == 0:
            raise PackageError(f"program {i}: no END instruction")
        words, op = words[: ends[0] + 1], op[: ends[0] + 1]
        bad = op > max(Opcode)
        if bad.any():
            j = _first(bad)
            raise PackageError(f"program {i}: instruction {j} has invalid opcode {op[j]}")
        _validate_calls(i, words, op, base, end, target.memory_size)
        control = words[op != Opcode.CALL]
        if skeleton is None:
            skeleton = control
        elif not np.array_equal(control, skeleton):
            k = min(len(control), len(skeleton))
            diff = np.flatnonzero((control[:k] != skeleton[:k]).any(axis=1))
            at = int(diff[0]) if diff.size else k
            raise PackageError(
                f"program {i} (tiles {p.first_tile}..{p.first_tile + p.tile_count - 1}): control "
                f"skeleton differs from program 0 at control instruction {at}"
            )
    assert skeleton is not None
    limits = {
        Opcode.EXCHANGE: ("exchange phase", {ph.index for ph in pkg.phases}),
        Opcode.HOST_IN: ("input", set(range(len(pkg.inputs)))),
        Opcode.HOST_OUT: ("output", set(range(len(pkg.outputs)))),
        Opcode.CHECKPOINT: ("checkpoint", {c.index for c in pkg.checkpoints}),
    }
    depth = 0
    for j, w in enumerate(skeleton):
        if int(w[0]) == Opcode.LOOP_BEGIN:
            depth += 1
            if int(w[1]) < 1:
                raise PackageError(f"control instruction {j}: loop count {w[1]} must be positive")
        elif int(w[0]) == Opcode.LOOP_END:
            depth -= 1
            if depth < 0:
                raise PackageError(f"control instruction {j}: LOOP_END without LOOP_BEGIN")
        elif int(w[0]) == Opcode.END and depth:
            raise PackageError(f"control instruction {j}: END inside a loop")
        if int(w[0]) in limits:
            what, valid = limits[Opcode(int(w[0]))]
            if int(w[1]) not in valid:
                raise PackageError(f"control instruction {j} ({Opcode(int(w[0])).name}): no {what} {w[1]}")


def _validate_calls(i: int, words: np.ndarray, op: np.ndarray, base: int, end: int, memory_size: int) -> None:
    idx = np.flatnonzero(op == Opcode.CALL)
    calls = words[idx]
    kern = calls[:, 1]
    bad = kern >= len(KERNEL_NAMES)
    if bad.any():
        j = _first(bad)
        raise PackageError(f"program {i}: instruction {idx[j]} calls invalid kernel index {kern[j]}")
    in_dt, out_dt = calls[:, 2] & 0xFF, (calls[:, 2] >> 8) & 0xFF
    bad = (_DTYPE_SIZE_BY_CODE[in_dt] == 0) | (_DTYPE_SIZE_BY_CODE[out_dt] == 0) | (calls[:, 2] >> 16 != 0)
    if bad.any():
        j = _first(bad)
        raise PackageError(f"program {i}: instruction {idx[j]} has invalid dtype word {calls[j, 2]:#x}")
    for k, name in enumerate(KERNEL_NAMES):
        sel = kern == k
        if not sel.any():
            continue
        c, at = calls[sel], idx[sel]
        kernel = KERNELS[name]
        params = decode_call_params(name, c)
        bad = kernel.invalid(params)
        for q in kernel.params:  # a shape larger than a tile's memory is absurd (and would overflow)
            if q.kind == "shape":
                bad = bad | (params[q.name] > memory_size)
        if bad.any():
            j = _first(bad)
            raise PackageError(
                f"program {i}: instruction {at[j]} ({name}) has invalid parameters "
                f"{dict((pn, int(v[j])) for pn, v in params.items())}"
            )
        out_el, in_els = kernel.operand_elements(params)
        out_code, in_codes = kernel.operand_dtypes(c[:, 2] & 0xFF, (c[:, 2] >> 8) & 0xFF)
        operands = [(3, out_el * _DTYPE_SIZE_BY_CODE[out_code])] + [
            (4 + q, e * _DTYPE_SIZE_BY_CODE[dc]) for q, (e, dc) in enumerate(zip(in_els, in_codes, strict=True))
        ]
        for slot, nbytes in operands:
            addr = c[:, slot]
            bad = (addr < base) | (addr + nbytes > end)
            if bad.any():
                j = _first(bad)
                raise PackageError(
                    f"program {i}: instruction {at[j]} ({name}) operand {slot - 3} "
                    f"[{addr[j]:#x}, {addr[j] + nbytes[j]:#x}) outside memory [{base:#x}, {end:#x})"
                )


def _validate_transfers(ph: Phase, target: Target) -> None:
    t = ph.transfers
    if t.ndim != 2 or t.shape[1] != len(TRANSFER):
        raise PackageError(f"phase {ph.index}: transfer table has shape {t.shape}, expected [n, {len(TRANSFER)}]")
    if len(t) == 0:
        return
    c = {name: t[:, q].astype(np.int64) for q, name in enumerate(TRANSFER.columns)}
    bad = (c["rows"] <= 0) | (c["row_words"] <= 0) | (c["par_count"] <= 0) | (c["mc_count"] <= 0)
    bad |= (c["start"] < 0) | (c["par_time_step"] < 0)
    if bad.any():
        j = _first(bad)
        raise PackageError(f"phase {ph.index}: transfer {j} has non-positive rows/row_words/counts or a negative start")
    _check_magnitudes(t, TRANSFER.columns, _capacity(target), f"phase {ph.index}: transfer")
    # no destination byte is written twice in a phase: a phase moves at most what the tiles hold
    words = c["par_count"].astype(np.float64) * c["mc_count"] * c["rows"] * c["row_words"]
    limit = _capacity(target) // 4
    if words.sum() > limit:
        j = int(words.argmax())
        raise PackageError(
            f"phase {ph.index}: transfers move {int(words.sum())} words (transfer {j}: par_count "
            f"{c['par_count'][j]} x mc_count {c['mc_count'][j]} x rows {c['rows'][j]} x row_words "
            f"{c['row_words'][j]}), more than the {limit} words the {target.tiles} tiles can receive once each"
        )
    # member tiles and byte addresses are linear in p, c, r: the extremes are at the corners
    pe, me, re_ = c["par_count"] - 1, c["mc_count"] - 1, c["rows"] - 1

    def lo_hi(v0: np.ndarray, *terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = v0.copy(), v0.copy()
        for term in terms:
            lo += np.minimum(term, 0)
            hi += np.maximum(term, 0)
        return lo, hi

    nbytes = c["row_words"] * 4
    dst_lo_hi = lo_hi(c["dst_tile"], pe * c["par_dst_step"], me * c["mc_step"])
    checks = (
        ("source tile", *lo_hi(c["src_tile"], pe * c["par_src_step"]), 0, target.tiles),
        ("destination tile", *dst_lo_hi, 0, target.tiles),
        (
            "source bytes",
            *lo_hi(c["src_address"], re_ * c["src_stride"], pe * c["par_src_offset_step"]),
            target.memory_base,
            target.memory_end - nbytes + 1,
        ),
        (
            "destination bytes",
            *lo_hi(c["dst_address"], re_ * c["dst_stride"], pe * c["par_dst_offset_step"]),
            target.memory_base,
            target.memory_end - nbytes + 1,
        ),
    )
    for what, lo, hi, vmin, vmax in checks:
        bad = (lo < vmin) | (hi >= vmax)
        if bad.any():
            j = _first(bad)
            raise PackageError(f"phase {ph.index}: transfer {j} {what} out of range (spans {lo[j]:#x}..{hi[j]:#x})")


def _validate_binding(b: Binding, what: str, target: Target, need_data: bool, need_cover: bool) -> None:
    label = f"{what} '{b.name}'"
    try:
        dtype = DType(int(b.dtype))
    except ValueError:
        raise PackageError(f"{label}: invalid dtype {b.dtype}") from None
    if any(int(d) < 0 for d in b.shape):
        raise PackageError(f"{label}: negative dimension in shape {b.shape}")
    size, esize = math.prod(int(d) for d in b.shape), DTYPE_SIZE[dtype]
    if size * esize > _capacity(target):
        raise PackageError(
            f"{label}: shape {b.shape} {dtype.name} is {size * esize} bytes, more than the "
            f"{target.tiles} tiles x {target.memory_size} bytes of target {target.name}"
        )
    if need_data:
        if b.data is None or len(b.data) != size * esize:
            have = None if b.data is None else len(b.data)
            raise PackageError(f"{label}: data has {have} bytes, shape {b.shape} {dtype.name} needs {size * esize}")
    s = b.slices
    if s.ndim != 2 or s.shape[1] != len(SLICE):
        raise PackageError(f"{label}: slice table has shape {s.shape}, expected [n, {len(SLICE)}]")
    if len(s) == 0:
        if size and (need_data or need_cover):
            raise PackageError(f"{label}: no slices")
        return
    c = {name: s[:, q].astype(np.int64) for q, name in enumerate(SLICE.columns)}
    bad = (c["rows"] <= 0) | (c["row_elements"] <= 0) | (c["tile_count"] <= 0)
    if bad.any():
        raise PackageError(f"{label}: slice {_first(bad)} has non-positive rows/row_elements/tile_count")
    _check_magnitudes(s, SLICE.columns, _capacity(target), f"{label}: slice")
    bad = c["tile_count"] > target.tiles
    if bad.any():
        j = _first(bad)
        raise PackageError(f"{label}: slice {j} tile_count {c['tile_count'][j]} exceeds the {target.tiles} tiles")
    bad = c["rows"] * c["row_elements"] * esize > target.memory_size
    if bad.any():
        j = _first(bad)
        raise PackageError(
            f"{label}: slice {j} holds rows {c['rows'][j]} x row_elements {c['row_elements'][j]} elements "
            f"per tile, more than a tile's {target.memory_size} bytes"
        )
    r1, m1 = c["rows"] - 1, c["tile_count"] - 1
    t_last = c["tile"] + m1 * c["tile_step"]
    bad = (np.minimum(c["tile"], t_last) < 0) | (np.maximum(c["tile"], t_last) >= target.tiles)
    if bad.any():
        raise PackageError(f"{label}: slice {_first(bad)} tile family outside [0, {target.tiles})")
    l_last = c["logical_offset"] + r1 * c["logical_stride"]
    bad = (np.minimum(c["logical_offset"], l_last) < 0) | (
        np.maximum(c["logical_offset"], l_last) + c["row_elements"] > size
    )
    if bad.any():
        raise PackageError(f"{label}: slice {_first(bad)} logical range outside the {size} elements")
    a_last = c["address"] + r1 * c["tile_stride"]
    bad = (np.minimum(c["address"], a_last) < target.memory_base) | (
        np.maximum(c["address"], a_last) + c["row_elements"] * esize > target.memory_end
    )
    if bad.any():
        raise PackageError(f"{label}: slice {_first(bad)} byte range outside tile memory")
    if need_cover and size:
        # every logical element must be held by some slice row: union of row intervals
        rows = c["rows"]
        if int(rows.sum()) > size:  # each row holds an element: more rows than elements repeat one
            raise PackageError(f"{label}: slices list {int(rows.sum())} rows for {size} elements (rows repeat)")
        sl = np.repeat(np.arange(len(s)), rows)
        r = np.arange(int(rows.sum())) - np.repeat(np.cumsum(rows) - rows, rows)
        lo = c["logical_offset"][sl] + r * c["logical_stride"][sl]
        order = np.argsort(lo, kind="stable")
        lo, hi = lo[order], (lo + c["row_elements"][sl])[order]
        reach = np.maximum.accumulate(hi)
        gap = np.flatnonzero(lo[1:] > reach[:-1])
        if lo[0] > 0 or gap.size or reach[-1] < size:
            missing = 0 if lo[0] > 0 else int(reach[gap[0]]) if gap.size else int(reach[-1])
            raise PackageError(f"{label}: slices do not cover logical element {missing}")


# --------------------------------------------------------------------------------------------
# Host calls
# --------------------------------------------------------------------------------------------


def _a(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def _validate_host_calls(pkg: Package, target: Target) -> None:
    """`initialize` and `run`: each step names a binding of its kind with that binding's bytes and
    the target's host cycles, every weight, input and output moves exactly once, and `run`
    brackets its one execute step with the programs' HOST_IN and HOST_OUT order."""
    names = [c.name for c in pkg.host_calls]
    if names != list(HOST_CALLS):
        raise PackageError(f"package host calls are {names}, expected {list(HOST_CALLS)}")
    init, run = pkg.host_calls
    _validate_steps(pkg, init, {"write": ("weight", pkg.weights)}, target)
    _validate_steps(pkg, run, {"write": ("input", pkg.inputs), "read": ("output", pkg.outputs)}, target)
    ins, outs = host_stream_order(pkg.programs)
    _validate_stream_order(run, "write", "HOST_IN", [pkg.inputs[i].name for i in ins], ins)
    _validate_stream_order(run, "read", "HOST_OUT", [pkg.outputs[i].name for i in outs], outs)
    for i, p in enumerate(pkg.programs):
        _validate_host_positions(i, p)


def _validate_steps(pkg: Package, call: HostCall, moves: dict[str, tuple[str, list[Binding]]], target: Target) -> None:
    """Each step of `call`: an allowed kind, a binding of that kind (`moves`: kind -> (what,
    bindings)) moved once, its bytes and cycles; then nothing left unmoved, one execute in run."""
    allowed = [*moves, *(["execute"] if call.name == "run" else [])]
    seen: dict[tuple[str, str], int] = {}
    executes = [j for j, st in enumerate(call.steps) if st.kind == "execute"]
    if call.name == "run" and len(executes) != 1:
        raise PackageError(f"host call 'run' has {len(executes)} execute steps {executes}, expected 1")
    split = executes[0] if call.name == "run" else len(call.steps)  # writes before, reads after
    for j, st in enumerate(call.steps):
        where = f"host call '{call.name}': step {j}"
        if st.kind not in HOST_STEP_KINDS:
            raise PackageError(f"{where} has kind '{st.kind}', expected one of {', '.join(HOST_STEP_KINDS)}")
        if st.kind not in allowed:
            raise PackageError(f"{where} is {_a(st.kind)} step; '{call.name}' has only {', '.join(allowed)} steps")
        if st.kind == "execute":
            if (st.binding, st.nbytes, st.cycles) != ("", 0, 0):
                raise PackageError(
                    f"{where} (execute) names '{st.binding}', {st.nbytes} bytes, {st.cycles} cycles; it moves nothing"
                )
            continue
        if (st.kind == "write") != (j < split):
            side = "after" if st.kind == "write" else "before"
            raise PackageError(f"{where} ({st.kind} '{st.binding}') comes {side} the execute step {split}")
        what, bindings = moves[st.kind]
        b = next((x for x in bindings if x.name == st.binding), None)
        if b is None:
            kinds = (("weight", pkg.weights), ("input", pkg.inputs), ("output", pkg.outputs))
            other = next((k for k, bs in kinds if any(x.name == st.binding for x in bs)), None)
            hint = f" ('{st.binding}' is {_a(other)})" if other else ""
            raise PackageError(f"{where} {st.kind}s '{st.binding}': no {what} of that name{hint}")
        where = f"{where} ({st.kind} {what} '{b.name}')"
        if (st.kind, b.name) in seen:
            raise PackageError(f"{where} moves it again: step {seen[st.kind, b.name]} already did")
        seen[st.kind, b.name] = j
        n = binding_bytes(b)
        if st.nbytes != n:
            raise PackageError(f"{where}: {st.nbytes} bytes, the binding holds {n}")
        cycles = target.host_transfer_cycles(n)
        if st.cycles != cycles:
            raise PackageError(f"{where}: {st.cycles} cycles, target {target.name} gives {cycles} for {n} bytes")
    for kind, (what, bindings) in moves.items():
        missing = next((b.name for b in bindings if (kind, b.name) not in seen), None)
        if missing is not None:
            raise PackageError(f"host call '{call.name}' has no {kind} step for {what} '{missing}'")


def _validate_stream_order(run: HostCall, kind: str, opcode: str, streamed: list[str], indices: list[int]) -> None:
    """The `kind` steps of `run` move the bindings the programs' `opcode` instructions stream, in
    the same order (`streamed`: their binding names, `indices`: their operands)."""
    steps = [(j, st.binding) for j, st in enumerate(run.steps) if st.kind == kind]
    for k in range(max(len(steps), len(streamed))):
        if k >= len(streamed):
            j, name = steps[k]
            raise PackageError(f"host call 'run': step {j} ({kind} '{name}'): the programs have no {opcode} for it")
        if k >= len(steps):
            raise PackageError(
                f"host call 'run': the programs' {opcode} number {k} ({opcode} {indices[k]}) streams "
                f"'{streamed[k]}' again; the run call moves it once"
            )
        j, name = steps[k]
        if name != streamed[k]:
            raise PackageError(
                f"host call 'run': step {j} ({kind} '{name}') is out of {opcode} order: the programs' "
                f"{opcode} number {k} ({opcode} {indices[k]}) streams '{streamed[k]}'"
            )


def _validate_host_positions(i: int, p: Program) -> None:
    """HOST_IN before any device work and HOST_OUT after all of it (so outside loops): `run`
    writes every input before it executes the programs and reads every output after."""
    op = np.frombuffer(p.code, "<u4").reshape(-1, INSTRUCTION_WORDS)[:, 0]
    op = op[: int(np.flatnonzero(op == Opcode.END)[0])]  # validated: an END exists
    work = np.flatnonzero(np.isin(op, DEVICE_WORK))
    if not work.size:
        return
    ins, outs = np.flatnonzero(op == Opcode.HOST_IN), np.flatnonzero(op == Opcode.HOST_OUT)
    if ins.size and ins[-1] > work[0]:
        raise PackageError(
            f"program {i}: instruction {ins[-1]} (HOST_IN) follows device work (instruction {work[0]}); "
            "the run call writes every input before executing the programs"
        )
    if outs.size and outs[0] < work[-1]:
        raise PackageError(
            f"program {i}: instruction {outs[0]} (HOST_OUT) precedes device work (instruction {work[-1]}); "
            "the run call reads every output after executing the programs"
        )
