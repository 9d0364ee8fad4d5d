"""The system package (`.ipupod`): one `.ipuexe` per chip and the manifest that joins them.

A `Pod` says which system it is for, how many micro-batches a run pushes through, each stage's
chip and package, the transfers between stages (which output of which stage feeds which input of
which, and between which chips), which stages read each model input and where each model output
comes from. The file is an 8-byte magic, the SHA-256 of the rest, then one Cap'n Proto message
(`ipupod.capnp`); each stage also records its package's SHA-256. `validate_pod` checks that the
manifest and the packages agree (names, shapes, dtypes, chips, targets), so a run never starts
on a damaged or mismatched system.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ipu.abi.link_rows import LINK_ROW, check_link_rows
from ipu.abi.package import Binding, Package, PackageError
from ipu.abi.package_check import validate_package
from ipu.abi.package_io import load_schema, package_bytes, read_package_bytes
from ipu.atomic import atomic_path

MAGIC = b"IPUPOD01"
POD_SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("ipupod.capnp")


def _schema() -> Any:
    return load_schema(SCHEMA_PATH)


@dataclass(frozen=True)
class Route:
    """Binding `binding` of stage `stage`."""

    stage: int
    binding: str


@dataclass(frozen=True, eq=False)
class PodTransfer:
    """A value handed from one stage's output to another's input; between chips over the links,
    its `rows` (abi.link_rows.LINK_ROW) saying which bytes of which tile go where."""

    src: Route
    dst: Route
    src_chip: int
    dst_chip: int
    nbytes: int
    rows: np.ndarray | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PodTransfer):
            return NotImplemented
        same_rows = (self.rows is None and other.rows is None) or (
            self.rows is not None and other.rows is not None and np.array_equal(self.rows, other.rows)
        )
        key = (self.src, self.dst, self.src_chip, self.dst_chip, self.nbytes)
        return same_rows and key == (other.src, other.dst, other.src_chip, other.dst_chip, other.nbytes)


@dataclass(frozen=True)
class PodCollective:
    """An all-reduce over `chips`: member i's partial is stage output `inputs[i]`; the sum feeds the
    stage inputs `outputs[i]` (on the same chip); `nbytes` is one member's value."""

    kind: str
    chips: tuple[int, ...]
    inputs: tuple[Route, ...]
    outputs: tuple[tuple[Route, ...], ...]
    nbytes: int


@dataclass
class PodStage:
    index: int
    chip: int
    function: str
    package: Package


@dataclass
class Pod:
    system: str
    microbatches: int
    stages: list[PodStage]
    transfers: list[PodTransfer] = field(default_factory=list)
    inputs: dict[str, list[Route]] = field(default_factory=dict)  # model input -> the stages reading it
    outputs: dict[str, Route] = field(default_factory=dict)  # model output -> where it is read
    compiler_version: str = ""
    collectives: list[PodCollective] = field(default_factory=list)

    @property
    def pipelined(self) -> bool:
        """One stage a chip and no collectives: a pipeline (else tensor-parallel segments)."""
        chips = [s.chip for s in self.stages]
        return not self.collectives and len(set(chips)) == len(chips)


def _binding(pkg: Package, name: str, kind: str) -> Binding | None:
    return next((b for b in (pkg.inputs if kind == "input" else pkg.outputs) if b.name == name), None)


def validate_pod(pod: Pod) -> None:
    """Raise PackageError naming the first thing in `pod` that does not hold together."""
    from ipu.target import TargetError
    from ipu.target.system import load_system

    try:
        system = load_system(pod.system)
    except TargetError as e:
        raise PackageError(f"system package: {e}") from None
    if pod.microbatches < 1:
        raise PackageError(f"system package: microbatches {pod.microbatches} must be at least 1")
    if not pod.stages or [s.index for s in pod.stages] != list(range(len(pod.stages))):
        raise PackageError("system package: stages must be numbered 0, 1, … in order")
    chips = [s.chip for s in pod.stages]
    if any(not 0 <= c < system.chips for c in chips):
        raise PackageError(f"system package: stage chips {chips} must be chips of {system.name}")
    if len(set(chips)) != len(chips) and not pod.collectives:
        raise PackageError(f"system package: stage chips {chips}: a pipeline runs one stage a chip")
    for s in pod.stages:
        if s.package.target != system.chip.name:
            raise PackageError(
                f"system package: stage {s.index}'s package is for {s.package.target}, the system's chips are "
                f"{system.chip.name}"
            )
        validate_package(s.package, system.chip)
    fed: dict[tuple[int, str], str] = {}

    def feed(r: Route, what: str) -> Binding:
        if not 0 <= r.stage < len(pod.stages):
            raise PackageError(f"system package: {what} names stage {r.stage}, not one of the {len(pod.stages)}")
        b = _binding(pod.stages[r.stage].package, r.binding, "input")
        if b is None:
            raise PackageError(f"system package: {what}: stage {r.stage} has no input '{r.binding}'")
        if (r.stage, r.binding) in fed:
            raise PackageError(f"system package: stage {r.stage}'s input '{r.binding}' is fed twice")
        fed[(r.stage, r.binding)] = what
        return b

    for t in pod.transfers:
        what = f"transfer {t.src.stage}:{t.src.binding} -> {t.dst.stage}:{t.dst.binding}"
        if not 0 <= t.src.stage < len(pod.stages) or t.src.stage >= t.dst.stage:
            raise PackageError(f"system package: {what} must go from an earlier stage to a later one")
        src = _binding(pod.stages[t.src.stage].package, t.src.binding, "output")
        if src is None:
            raise PackageError(f"system package: {what}: stage {t.src.stage} has no output '{t.src.binding}'")
        dst = feed(t.dst, what)
        if (src.shape, src.dtype) != (dst.shape, dst.dtype):
            raise PackageError(
                f"system package: {what}: {src.shape} {src.dtype.name} feeds {dst.shape} {dst.dtype.name}"
            )
        if (t.src_chip, t.dst_chip) != (pod.stages[t.src.stage].chip, pod.stages[t.dst.stage].chip):
            raise PackageError(f"system package: {what}: its chips are not its stages' chips")
        if t.src_chip != t.dst_chip:
            if t.rows is None:
                raise PackageError(f"system package: {what}: a transfer between chips needs its link rows")
            why = check_link_rows(t.rows, src, dst, system.chip.memory_base)
            if why:
                raise PackageError(f"system package: {what}: {why}")
    for name, routes in pod.inputs.items():
        for r in routes:
            feed(r, f"model input '{name}'")
    for j, c in enumerate(pod.collectives):
        what = f"collective {j} ({c.kind})"
        if c.kind != "all_reduce" or not (len(c.chips) == len(c.inputs) == len(c.outputs) >= 2):
            raise PackageError(f"system package: {what}: an all_reduce with one input and output list per chip")
        shapes = set()
        for chip, src, dsts in zip(c.chips, c.inputs, c.outputs, strict=True):
            if not 0 <= src.stage < len(pod.stages) or pod.stages[src.stage].chip != chip:
                raise PackageError(f"system package: {what}: its input {src.stage}:{src.binding} is not on chip {chip}")
            b = _binding(pod.stages[src.stage].package, src.binding, "output")
            if b is None:
                raise PackageError(f"system package: {what}: stage {src.stage} has no output '{src.binding}'")
            shapes.add((b.shape, b.dtype))
            for d in dsts:
                db = feed(d, what)
                shapes.add((db.shape, db.dtype))
                if pod.stages[d.stage].chip != chip or d.stage <= src.stage:
                    raise PackageError(f"system package: {what}: feeds stage {d.stage} off chip {chip} or before it")
        if len(shapes) != 1:
            raise PackageError(f"system package: {what}: its members' shapes or dtypes differ")
    for s in pod.stages:
        for b in s.package.inputs:
            if (s.index, b.name) not in fed and 0 not in b.shape:
                raise PackageError(f"system package: stage {s.index}'s input '{b.name}' is fed by nothing")
    for name, r in pod.outputs.items():
        if not 0 <= r.stage < len(pod.stages) or _binding(pod.stages[r.stage].package, r.binding, "output") is None:
            raise PackageError(f"system package: model output '{name}' names no output of stage {r.stage}")


def _rows(data: bytes) -> np.ndarray | None:
    if not data:
        return None
    if len(data) % (8 * len(LINK_ROW)):
        raise PackageError(f"system package: link rows of {len(data)} bytes are not whole rows")
    return np.frombuffer(data, "<i8").reshape(-1, len(LINK_ROW)).astype(np.int64)


def _put_route(b: Any, r: Route) -> None:
    b.stage, b.binding = r.stage, r.binding


def pod_bytes(pod: Pod) -> bytes:
    """The file bytes of `pod`."""
    s = _schema()
    m = s.Pod.new_message()
    m.schemaVersion = POD_SCHEMA_VERSION
    m.compilerVersion = pod.compiler_version
    m.system = pod.system
    m.microbatches = pod.microbatches
    for b, st in zip(m.init("stages", len(pod.stages)), pod.stages, strict=True):
        data = package_bytes(st.package)
        b.index, b.chip, b.function = st.index, st.chip, st.function
        b.package = data
        b.sha256 = hashlib.sha256(data).digest()
    for b, t in zip(m.init("transfers", len(pod.transfers)), pod.transfers, strict=True):
        _put_route(b.src, t.src)
        _put_route(b.dst, t.dst)
        b.srcChip, b.dstChip, b.bytes = t.src_chip, t.dst_chip, t.nbytes
        b.rows = b"" if t.rows is None else np.ascontiguousarray(t.rows, "<i8").tobytes()
    for b, (name, routes) in zip(m.init("inputs", len(pod.inputs)), pod.inputs.items(), strict=True):
        b.name = name
        for rb, r in zip(b.init("routes", len(routes)), routes, strict=True):
            _put_route(rb, r)
    for b, (name, r) in zip(m.init("outputs", len(pod.outputs)), pod.outputs.items(), strict=True):
        b.name = name
        _put_route(b.init("routes", 1)[0], r)
    for b, c in zip(m.init("collectives", len(pod.collectives)), pod.collectives, strict=True):
        b.kind, b.bytes = c.kind, c.nbytes
        b.chips = list(c.chips)
        for rb, r in zip(b.init("inputs", len(c.inputs)), c.inputs, strict=True):
            _put_route(rb, r)
        lists = b.init("outputs", len(c.outputs))
        for i, dsts in enumerate(c.outputs):
            lst = lists.init(i, len(dsts))
            for rb, r in zip(lst, dsts, strict=True):
                _put_route(rb, r)
    body = m.to_bytes()
    return MAGIC + hashlib.sha256(body).digest() + body


def write_pod(pod: Pod, path: str | os.PathLike[str]) -> None:
    """Write `pod` whole (a temporary file renamed over the destination)."""
    data = pod_bytes(pod)
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)


def is_pod_file(path: str | os.PathLike[str]) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def read_pod(path: str | os.PathLike[str]) -> Pod:
    """Read and check a system package; a damaged, truncated or inconsistent file raises PackageError."""
    path = Path(path)
    try:
        buf = path.read_bytes()
    except OSError as e:
        raise PackageError(f"cannot read system package {path}: {e.strerror or e}") from None
    if len(buf) < 40 or buf[:8] != MAGIC:
        raise PackageError(f"{path}: not a system package (no {MAGIC.decode()} header)")
    body = buf[40:]
    if hashlib.sha256(body).digest() != buf[8:40] or len(body) % 8:
        raise PackageError(f"{path}: corrupt or truncated system package (its SHA-256 does not match)")
    try:
        with _schema().Pod.from_bytes(body, traversal_limit_in_words=4 * len(body) // 8 + (1 << 20)) as m:
            if int(m.schemaVersion) != POD_SCHEMA_VERSION:
                raise PackageError(
                    f"{path}: system package version {m.schemaVersion}, this reader supports {POD_SCHEMA_VERSION}"
                )
            stages = []
            for st in m.stages:
                data = bytes(st.package)
                if hashlib.sha256(data).digest() != bytes(st.sha256):
                    raise PackageError(f"{path}: stage {st.index}'s package does not match its SHA-256")
                pkg = read_package_bytes(data, f"{path} stage {st.index}")
                stages.append(PodStage(int(st.index), int(st.chip), str(st.function), pkg))

            def route(r: Any) -> Route:
                return Route(int(r.stage), str(r.binding))

            pod = Pod(
                system=str(m.system),
                microbatches=int(m.microbatches),
                stages=stages,
                transfers=[
                    PodTransfer(
                        route(t.src), route(t.dst), int(t.srcChip), int(t.dstChip), int(t.bytes), _rows(bytes(t.rows))
                    )
                    for t in m.transfers
                ],
                inputs={str(i.name): [route(r) for r in i.routes] for i in m.inputs},
                outputs={str(o.name): route(o.routes[0]) for o in m.outputs if len(o.routes) == 1},
                compiler_version=str(m.compilerVersion),
                collectives=[
                    PodCollective(
                        str(c.kind),
                        tuple(int(x) for x in c.chips),
                        tuple(route(r) for r in c.inputs),
                        tuple(tuple(route(r) for r in lst) for lst in c.outputs),
                        int(c.bytes),
                    )
                    for c in m.collectives
                ],
            )
            if len(pod.outputs) != len(m.outputs):
                raise PackageError(f"{path}: a model output must name exactly one route")
    except PackageError:
        raise
    except Exception as e:  # capnp's KjException for malformed data
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise PackageError(f"{path}: corrupt system package ({first})") from None
    validate_pod(pod)
    return pod


__all__ = [
    "Pod",
    "PodCollective",
    "PodStage",
    "PodTransfer",
    "Route",
    "is_pod_file",
    "pod_bytes",
    "read_pod",
    "validate_pod",
    "write_pod",
]
