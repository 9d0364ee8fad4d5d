"""The `.ipuexe` file format: a package as one Cap'n Proto message (`ipuexe.capnp`) with a schema
version and a SHA-256 content digest, written atomically and read with every size bounded."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Any

import capnp
import numpy as np

from ipu.abi.isa import DType
from ipu.abi.package import (
    SCHEMA_VERSION,
    Binding,
    Checkpoint,
    HostCall,
    HostStep,
    Package,
    PackageError,
    Phase,
    Program,
)
from ipu.abi.tables import SLICE, TRANSFER
from ipu.atomic import atomic_path
from ipu.target.mapping import TileMapping

SCHEMA_PATH = Path(__file__).with_name("ipuexe.capnp")


@functools.cache
def load_schema(path: Path) -> Any:
    """A compiled Cap'n Proto schema module of the ABI (each loaded once)."""
    return capnp.load(str(path))


def _schema() -> Any:
    """The compiled `ipuexe.capnp` schema module."""
    return load_schema(SCHEMA_PATH)


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
    if src.perm:
        b.perm = [int(x) for x in src.perm]
    if src.pads:
        b.pads = [int(x) for x in src.pads]
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
        perm=tuple(int(x) for x in b.perm),
        pads=tuple(int(x) for x in b.pads),
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


def message_parts(m: Any) -> tuple[memoryview, bytes, memoryview]:
    """The file bytes of a Package message builder, its `contentDigest` set, in three pieces:
    before the digest word, the digest, after it (no copy of the weight-sized message)."""
    m.contentDigest = 0
    data = m.to_bytes()
    pos = _digest_position(data)
    assert pos is not None, "a fresh message has its root struct first in segment 0"
    view = memoryview(data)
    return view[:pos], _content_digest(data, pos).to_bytes(8, "little"), view[pos + 8 :]


def message_bytes(m: Any) -> bytes:
    """The file bytes of a Package message builder, its `contentDigest` set."""
    return b"".join(message_parts(m))


def package_bytes(pkg: Package) -> bytes:
    """The file bytes of `pkg` (what `write_package` writes), its content digest set."""
    return message_bytes(_message(pkg))


def package_parts(pkg: Package) -> tuple[memoryview, bytes, memoryview]:
    """`package_bytes(pkg)` in the three pieces of `message_parts`, to write without joining."""
    return message_parts(_message(pkg))


def _message(pkg: Package) -> Any:
    """`pkg` as a Package message builder (its digest not yet set)."""
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
        b.tripStride, b.trips, b.tripBegin, b.tripEnd = ph.trip_stride, ph.trips, ph.trip_begin, ph.trip_end
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
    return m


def write_package(pkg: Package, path: str | os.PathLike[str]) -> None:
    """Write `pkg` atomically: a temporary file in the same directory, then os.replace."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.writelines(package_parts(pkg))


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
    return read_package_bytes(buf, str(path), traversal_limit_words)


def read_package_bytes(buf: bytes, where: str, traversal_limit_words: int | None = None) -> Package:
    """`read_package` of a package's bytes (`where` names them in messages)."""
    if len(buf) < 16 or len(buf) % 8:
        raise PackageError(f"{where}: not a package (truncated or not Cap'n Proto, {len(buf)} bytes)")
    limit = traversal_limit_words if traversal_limit_words is not None else 4 * (len(buf) // 8) + (1 << 20)
    try:
        with _schema().Package.from_bytes(buf, traversal_limit_in_words=limit, nesting_limit=64) as m:
            version, stored, pos = int(m.schemaVersion), int(m.contentDigest), _digest_position(buf)
            actual = None if pos is None else _content_digest(buf, pos)
            if version != SCHEMA_VERSION and (stored in (0, actual)):  # intact, or from before digests
                raise PackageError(f"{where}: schema version {version}, this reader supports {SCHEMA_VERSION}")
            if actual is None:
                raise PackageError(f"{where}: corrupt or truncated package (no content digest in the root struct)")
            if stored != actual:
                raise PackageError(
                    f"{where}: corrupt or truncated package (content digest {actual:#018x}, "
                    f"the file records {stored:#018x}: bytes were changed after writing)"
                )
            return _read_message(m, len(buf))
    except PackageError:
        raise
    except Exception as e:  # capnp raises KjException (and friends) for malformed data
        text = str(e)
        if "traversal limit" in text.lower():
            raise PackageError(f"{where}: message exceeds the traversal limit of {limit} words") from None
        first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
        raise PackageError(f"{where}: corrupt or truncated package ({first})") from None


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
            int(p.tripStride),
            int(p.trips),
            int(p.tripBegin),
            int(p.tripEnd),
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
