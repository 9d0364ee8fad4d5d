"""The `.ipuexe` package as an in-memory model: programs, phases, bindings, checkpoints, host calls.

Its file format is `runtime.package_io`, its validation against a target `runtime.package_check`.

Tables are NumPy int64 arrays whose columns are named in `ipu.abi.tables` (SLICE, TRANSFER);
all addresses are absolute tile byte addresses, strides are in bytes unless named otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ipu.abi.isa import DTYPE_SIZE, DType, Opcode, unpack
from ipu.abi.kernels import KERNEL_NAMES
from ipu.target import Target
from ipu.target.mapping import TileMapping

SCHEMA_VERSION = 8  # 2: contentDigest; 3: hostCalls; 4: tileMapping; 5: checkpoints name their graph value;
# 6: variable-length instructions (ipu.abi.isa); 7: an input's host-side axis permutation (Binding.perm);
# 8: a phase's sources may advance by the loop's trip (Phase.trip_stride, trips)

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
    data: bytes | bytearray | None = None  # logical row-major bytes, weights only (as the compiler wrote them)
    # an input the host rearranges as it writes (Poplar's `rearrangeOnHost`): the slices index the
    # row-major elements of `array.transpose(perm)` with `pads` zeros around it (the low pads of
    # each axis, then the high ones); `shape` stays the array's own. Empty: none.
    perm: tuple[int, ...] = ()
    pads: tuple[int, ...] = ()

    def device_shape(self) -> tuple[int, ...]:
        """The shape the slices index: `shape` with its axes in `perm` order, padded by `pads`."""
        shape = tuple(self.shape[a] for a in self.perm) if self.perm else tuple(self.shape)
        if self.pads:
            r = len(shape)
            shape = tuple(d + self.pads[i] + self.pads[r + i] for i, d in enumerate(shape))
        return shape

    @staticmethod
    def host_shape_of(device: tuple[int, ...], perm: tuple[int, ...], pads: tuple[int, ...]) -> tuple[int, ...]:
        """The array shape whose `device_shape()` under `perm` and `pads` is `device`."""
        r = len(device)
        inner = tuple(d - pads[i] - pads[r + i] for i, d in enumerate(device)) if pads else device
        p = perm or tuple(range(r))
        return tuple(inner[p.index(a)] for a in range(r))

    def device_array(self, array: np.ndarray) -> np.ndarray:
        """`array` (of `shape`) as the slices index it."""
        a = np.transpose(array, self.perm) if self.perm else array
        if self.pads:
            r = a.ndim
            a = np.pad(a, [(self.pads[i], self.pads[r + i]) for i in range(r)])
        return a


@dataclass
class Program:
    """Code shared by tiles [first_tile, first_tile + tile_count), loaded at code_address."""

    first_tile: int
    tile_count: int
    code_address: int
    code: bytes  # INSTRUCTION_BYTES per instruction, see ipu.abi.isa


@dataclass
class Phase:
    """One scheduled exchange phase. With a `trip_stride`, every EXCHANGE of it sits in a loop of
    `trips` trips, and on trip i the source addresses of families [trip_begin, trip_end) are
    i x trip_stride bytes further on (a stacked value's block for the trip, read where it lies)."""

    index: int
    lower_bound: int
    horizon: int
    scheduler: str
    transfers: np.ndarray  # int64 [n, len(TRANSFER)]
    trip_stride: int = 0  # source bytes a trip (0: the same sources every time)
    trips: int = 0  # the loop's trips, with a trip_stride
    trip_begin: int = 0  # the families read by the trip: [trip_begin, trip_end)
    trip_end: int = 0


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


def kernels_called(pkg: Package) -> set[str]:
    """The kernels the package's programs CALL (word 1 of a CALL is the kernel's ABI index)."""
    out: set[str] = set()
    for prog in pkg.programs:
        words, _ = unpack(prog.code)
        out |= {KERNEL_NAMES[int(w[1])] for w in words if w[0] == Opcode.CALL}
    return out


def slice_bytes(s: np.ndarray, esize: int, base: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(member tiles [M], logical byte index [R, B], tile byte offset from `base` [R, B]) of one
    binding slice (a `SLICE` row), unchecked."""
    lo, ls, rows, re, tile, tc, ts, addr, tstride = (int(x) for x in s)
    r = np.arange(max(rows, 0))
    cols = np.arange(re * esize)
    logical = (lo + ls * r)[:, None] * esize + cols
    offs = (addr - base + tstride * r)[:, None] + cols
    return tile + ts * np.arange(max(tc, 0)), logical, offs


def binding_bytes(b: Binding) -> int:
    """Bytes of a binding as the device holds it (an input the host rearranged: with its padding):
    what a host step moves over the host link."""
    return math.prod(int(d) for d in b.device_shape()) * DTYPE_SIZE[DType(int(b.dtype))]


def host_stream_order(programs: list[Program]) -> tuple[list[int], list[int]]:
    """(HOST_IN, HOST_OUT) indices in the order program 0 executes them, up to its END (the
    programs share one control skeleton)."""
    words, _ = unpack(programs[0].code, "program 0")
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
