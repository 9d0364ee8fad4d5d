"""A functional + cycle emulator of a package on its target.

Memory is one uint8 array [tiles, memory_size]. Each program's code is decoded from the memory
of its first tile; CALLs run batched across the program's tiles (numpy ops on strided views of
a cache-sized chunk of tiles at a time, fp16 converted by `abi.halves`), control
instructions (SYNC, EXCHANGE, HOST_IN/OUT, CHECKPOINT) run once, in BSP order. What a CALL
computes, which operands it reads and writes, and its cycles come from its kernel's one
definition in `ipu.abi.kernels` (the cycle models call the Target's cost formulas, shared with
the compiler's estimates).

The host drives the package through its host calls: `initialize` writes the weights, `run`
writes the inputs, executes the programs, reads the outputs. Each write or read is a
host-exchange phase costing host cycles (the package's figures, recomputed from the target);
`total_cycles` stays the device's (compute, exchange, sync), `host_cycles` sums the phases.
"""

from __future__ import annotations

import contextlib
import mmap
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ipu.abi.exchange_rules import ScheduleError, check_counts, check_ports, check_tiles, check_writes
from ipu.abi.halves import narrow_rows, widen_rows
from ipu.abi.isa import CALL_DTYPES, DTYPE_SIZE, NUMPY_DTYPE, DType, IsaError, Opcode, unpack
from ipu.abi.kernels import KERNEL_NAMES, KERNELS, Kernel, KernelError, Role, decode_call_params
from ipu.abi.package import DEVICE_WORK, Binding, HostStep, Package, Phase, Program, binding_bytes, slice_bytes
from ipu.abi.tables import SLICE, TRANSFER
from ipu.abi.transfers import MC, PC, expand_members, expand_rows, member_tiles
from ipu.runtime.copy_rows import (
    any_double_write,
    buffer_sources,
    copy_ordered,
    first_bad_slice,
    first_unwritten,
    gather_slices,
    mark_written,
    read_written,
    scatter_slices,
)
from ipu.runtime.limits import DEFAULT_MAX_CYCLES
from ipu.runtime.phase_fast import expand_checked, route_pairs
from ipu.runtime.workers import background, emulator_threads, run_pieces
from ipu.target import Target
from ipu.target.mapping import TileMapping

PREPARED_MEMBERS = 1 << 24  # exchange members whose checked copies an emulator keeps (about 1 GB at most)
KERNEL_CHUNK_BYTES = 4 << 20  # a CALL runs this many bytes of float32 operands' tiles at a time


@dataclass(frozen=True)
class _Prepared:
    """A phase after its static checks: measurements and its members as strided word copies."""

    measures: dict[str, int]
    copies: tuple[np.ndarray, ...]  # copy_ordered's member arrays
    buffered: np.ndarray  # per member: its source may be written by the phase (read first, into a buffer)
    parts: list[np.ndarray]  # the order members are copied in, cut into parts copied side by side
    fam: np.ndarray  # per member: its transfer family and busy cycles, for messages
    start: np.ndarray
    end: np.ndarray
    trip_words: np.ndarray | None = None  # per member: source words it moves on a trip (phases read by the trip)


class EmulatorError(RuntimeError):
    """A package that misbehaves at run time (bad access, exchange rule violation, bad inputs)."""


@dataclass
class RunResult:
    """A run's outputs and checkpoints; `total_cycles` are device cycles (compute, exchange,
    sync), `host_cycles` those of the host-exchange phases (profile kinds host_write/host_read;
    the first run includes the `initialize` call that loading performed)."""

    outputs: dict[str, np.ndarray]
    checkpoints: dict[int, np.ndarray]
    total_cycles: int
    profile: list[dict[str, Any]] = field(default_factory=list)
    host_cycles: int = 0


def _dtype(code: int, what: str) -> DType:
    """A CALL dtype word's in or out dtype: a float, or INT32 for the kernels marked `ints`."""
    if code not in CALL_DTYPES:
        raise EmulatorError(f"{what}: invalid dtype {code}")
    return DType(code)


def narrow_int32(name: str, a: np.ndarray) -> np.ndarray:
    """An integer input as int32 (the device's integer type), checked: integral values only (an
    int64 array from an ONNX model is narrowed here), each within int32's range."""
    if a.dtype.kind == "b":
        a = a.astype(np.int64)
    if a.dtype.kind == "f":
        if a.size and not (np.isfinite(a).all() and (a == np.round(a)).all()):
            raise EmulatorError(f"input '{name}': integer input holds non-integral values")
    elif a.dtype.kind not in "iu":
        raise EmulatorError(f"input '{name}': dtype {a.dtype} is not an integer type")
    info = np.iinfo(np.int32)
    if a.size and (a.min() < info.min or a.max() > info.max):
        bad = a.reshape(-1)[np.flatnonzero((a.reshape(-1) < info.min) | (a.reshape(-1) > info.max))[0]]
        raise EmulatorError(f"input '{name}': value {int(bad)} does not fit int32 (the device's integer type)")
    return a.astype(np.int32)


def narrow_float(name: str, a: np.ndarray, dtype: DType) -> np.ndarray:
    """A float input at the binding's dtype; a wider one (an ONNX model's DOUBLE, computed in
    float32) is narrowed only when every finite value stays finite."""
    np_dtype = NUMPY_DTYPE[dtype]
    if a.dtype.kind == "f" and a.dtype.itemsize > np.dtype(np_dtype).itemsize and a.size:
        finite = a[np.isfinite(a)]
        big = np.flatnonzero(np.abs(finite) > np.finfo(np_dtype).max)
        if big.size:
            raise EmulatorError(
                f"input '{name}': value {float(finite[big[0]])} does not fit {np.dtype(np_dtype).name} "
                "(the device's float type for it)"
            )
    return a.astype(np_dtype)


def _route(t: np.ndarray, target: Target, mapping: TileMapping) -> int:
    """Phase table `t`'s longest send-to-mux route between the physical tiles its members join
    (members' source and destination tiles: one for each pair of columns, `route_pairs`)."""
    perm = mapping.permutation(target.tiles)
    pairs = route_pairs(t, perm, target.exchange["tiles_per_column"])
    src, dst = member_tiles(t)[:2] if pairs is None else pairs  # (a bad table: fails as it always did)
    return target.longest_route(perm[src], perm[dst])


def _timing(ph: Phase, target: Target, mapping: TileMapping) -> dict[str, int]:
    """A phase's horizon and route from its table alone (what `exchange` measures, without moving data)."""
    t = np.asarray(ph.transfers, np.int64).reshape(-1, len(TRANSFER))
    if not len(t):
        return {"horizon": 0, "route_cycles": 0, "lower_bound": ph.lower_bound, "transfers": 0, "families": 0}
    c = {name: t[:, q] for q, name in enumerate(TRANSFER.columns)}
    end = c["start"] + (c["par_count"] - 1) * c["par_time_step"] + c["rows"] * c["row_words"]
    members = int((c["par_count"] * c["mc_count"]).sum())
    return {
        "horizon": int(end.max()),
        "route_cycles": _route(t, target, mapping),
        "lower_bound": ph.lower_bound,
        "transfers": members,
        "families": len(t),
    }


HUGE_PAGE_ORDER = 9  # a transparent huge page (2 MB) is 2^9 pages of 4 KB
MADV_POPULATE_WRITE = 23  # (Linux 5.14; Python 3.11's mmap does not name it)


def _free_huge_blocks() -> int:
    """Bytes the kernel holds free in blocks of a huge page or more (/proc/buddyinfo: per zone,
    free blocks of 2^k pages), 0 where unknown."""
    try:
        zones = Path("/proc/buddyinfo").read_text().splitlines()
    except OSError:
        return 0
    if mmap.PAGESIZE != 4096:
        return 0
    blocks = (int(c) << k for z in zones for k, c in enumerate(z.split()[4:]) if k >= HUGE_PAGE_ORDER)
    return sum(blocks) * mmap.PAGESIZE


def tile_memory(tiles: int, size: int, dtype: type, populate: bool = True) -> np.ndarray:
    """Zeroed [tiles, size] memory, all mapped at once (Linux: MAP_POPULATE, or
    MADV_POPULATE_WRITE), in transparent huge pages when the kernel holds free blocks for twice
    the mapping, else in ordinary pages. Huge pages map mk2's 919 MB in ~0.15 s against ~0.27 s
    (mk2 transformer block: 2.32 -> 2.14 s a run, medians of 5); but where the kernel must compact
    memory to find them (NumPy asked for them on large arrays) they cost 3.8 s of the first run
    in a process (7.6 s; later runs, on huge pages the first freed, 3.0 s), hence the free blocks'
    check. Without `populate` ordinary pages are mapped when first touched, so memory a program
    never uses costs nothing (a system's many stage emulators)."""
    n = tiles * size * np.dtype(dtype).itemsize
    if n == 0 or not hasattr(mmap, "MAP_ANONYMOUS"):  # (a platform without anonymous mappings)
        return np.zeros((tiles, size), dtype)
    huge = populate and hasattr(mmap, "MADV_HUGEPAGE") and _free_huge_blocks() >= 2 * n
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    if populate and not huge:
        flags |= getattr(mmap, "MAP_POPULATE", 0)
    mem = mmap.mmap(-1, n, flags=flags)  # zero pages
    if huge:
        mem.madvise(mmap.MADV_HUGEPAGE)
        with contextlib.suppress(OSError):  # (an older kernel: a huge page is mapped when first touched)
            mem.madvise(MADV_POPULATE_WRITE)
    return np.frombuffer(mem, dtype).reshape(tiles, size)


PARALLEL_COPY_WORDS = 1 << 18  # a phase moving fewer words (1 MB) copies on one thread


def _parts(order: np.ndarray, member_words: np.ndarray, threads: int) -> list[np.ndarray]:
    """`order` cut into up to `threads` consecutive parts moving about equal words each."""
    if threads <= 1 or len(order) < 2:
        return [order]
    done = np.cumsum(member_words[order])
    if done[-1] < PARALLEL_COPY_WORDS:
        return [order]
    cuts = np.searchsorted(done, done[-1] * np.arange(1, threads) // threads, side="right")
    return [part for part in np.split(order, cuts) if len(part)]


def _as_f32(v: np.ndarray) -> np.ndarray:
    """A kernel input that is not fp16 (those are widened by `Emulator._widen`) as the kernel
    takes it: int32 (an "i32" ABI dtype) as it is, float32 as the view."""
    return v if v.dtype == np.int32 else v.astype(np.float32, copy=False)


class Emulator:
    """Runs `package` on a model of `target`; `load()` then `run(inputs)`."""

    def __init__(
        self,
        package: Package,
        target: Target,
        execute: bool = True,
        checked: bool = False,
        poison: bool = False,
        max_cycles: int | None = DEFAULT_MAX_CYCLES,
        populate: bool = True,
        threads: int | None = None,
    ) -> None:
        """`execute=False` counts cycles only (kernels and exchange timing are data-independent):
        no tile memory is allocated and no data moves. `checked` also tracks which bytes have
        been written (one flag per byte) and stops at the first read of a byte never written.
        `poison` starts every byte of tile memory as 0xFF (NaN in f16 and f32) instead of 0, as
        memory the hardware never wrote holds anything: a result that leans on it shows.
        `max_cycles` is the run's budget of device cycles (None: unbounded): a package whose
        run would take more (counted before anything runs, each loop body timed once) is
        refused, so a loop of 2^31 trips is a diagnostic rather than a hang. `populate=False`
        maps tile memory a page at a time as the run touches it (`tile_memory`). `threads`: how
        many threads run its CALLs and phases (`runtime.workers`; None: `emulator_threads()`)."""
        if (package.target, package.tiles, package.memory_base, package.memory_size) != (
            target.name,
            target.tiles,
            target.memory_base,
            target.memory_size,
        ):
            raise EmulatorError(
                f"package is for target {package.target} ({package.tiles} tiles), "
                f"not {target.name} ({target.tiles} tiles) or memory differs"
            )
        self.package, self.target = package, target
        self.base, self.size = target.memory_base, target.memory_size
        self.execute = execute
        self.max_cycles = max_cycles
        self._fast_forward = False  # count_device_cycles: a loop's body is timed once, then multiplied
        self.loaded = False
        self._loading_profile: list[dict[str, Any]] = []  # the initialize call's, for the next run
        self._phases = {ph.index: ph for ph in package.phases}
        self._checkpoints = {c.index: c for c in package.checkpoints}
        self.checked = checked and execute
        self.written = tile_memory(target.tiles, target.memory_size, np.bool_, populate) if self.checked else None
        # region boundaries as offsets, and each program's code as (first, end tile, start, end offset)
        self._region_starts = np.array([r.start - self.base for r in target.regions], np.int64)
        self._code = [
            (
                p.first_tile,
                p.first_tile + p.tile_count,
                p.code_address - self.base,
                p.code_address - self.base + len(p.code),
            )
            for p in package.programs
        ]
        self._code_table = np.array(self._code, np.int64).reshape(-1, 4)
        self.cycle = 0  # device cycle at the start of the instruction being executed
        self._prepared: dict[int, _Prepared] = {}
        self._local = threading.local()  # each thread's scratch: widened fp16 inputs, the double-write bits
        self.threads = emulator_threads() if threads is None else max(1, threads)
        self._ahead: dict[int, Future[_Prepared]] = {}
        if execute and self.threads > 1:
            self._prepare_ahead()  # beside the mapping of tile memory and the run
        self.mem = tile_memory(target.tiles if execute else 0, target.memory_size, np.uint8, populate)
        if poison:
            self.mem.fill(0xFF)
        self._mem16 = self.mem.reshape(-1).view(np.uint16)  # all tiles' memory, flat, for the fp16 loops
        self._cached_members = 0

    # ---------------------------------------------------------------- memory helpers

    def _offset(self, addr: int, nbytes: int, what: str) -> int:
        off = addr - self.base
        if off < 0 or nbytes < 0 or off + nbytes > self.size:
            raise EmulatorError(
                f"{what}: [{addr:#x}, {addr + nbytes:#x}) outside memory [{self.base:#x}, {self.base + self.size:#x})"
            )
        return off

    def _view(
        self,
        first: int,
        count: int,
        addr: int,
        elements: int,
        dtype: DType,
        what: str,
        access: str = "r",
        interleaved: bool = False,
    ) -> np.ndarray:
        """[count, elements] view of `elements` values at `addr` on tiles first..first+count, after
        the access rules: inside memory, wholly in one interleaved region when `interleaved` (an
        operand streamed by 128-bit loads), no write to code, and (checked mode) no read of a
        byte never written. `access` is "r", "w" or "rw"."""
        nbytes = elements * DTYPE_SIZE[dtype]
        off = self._offset(addr, nbytes, what)
        self._check_access(first, count, off, nbytes, what, access, interleaved)
        return self.mem[first : first + count, off : off + nbytes].view(NUMPY_DTYPE[dtype])

    def _check_access(
        self, first: int, count: int, off: int, nbytes: int, what: str, access: str, interleaved: bool = False
    ) -> None:
        if nbytes <= 0:
            return
        if interleaved:  # streamed with 128-bit loads: only interleaved memory serves them (MF 1.3)
            lo, hi = (int(x) for x in np.searchsorted(self._region_starts, [off, off + nbytes - 1], side="right"))
            r0, r1 = self.target.regions[lo - 1], self.target.regions[hi - 1]
            if lo != hi or not r0.interleaved:
                where = (
                    f"crosses from region {r0.name} into region {r1.name}" if lo != hi else f"lies in region {r0.name}"
                )
                raise EmulatorError(
                    f"{what}: bytes [{off + self.base:#x}, {off + nbytes + self.base:#x}) are streamed with 128-bit "
                    f"loads but the operand {where} (it must lie in one interleaved region) on tile {first}"
                )
        if "w" in access:
            for t0, t1, c0, c1 in self._code:
                if t0 < first + count and first < t1 and c0 < off + nbytes and off < c1:
                    raise EmulatorError(
                        f"{what}: writes [{off + self.base:#x}, {off + nbytes + self.base:#x}) over the code at "
                        f"[{c0 + self.base:#x}, {c1 + self.base:#x}) on tile {max(first, t0)}"
                    )
        if self.written is not None:
            block = self.written[first : first + count, off : off + nbytes]
            if "r" in access and not block.all():
                t, b = (int(x) for x in np.argwhere(~block)[0])
                raise EmulatorError(
                    f"{what}: reads uninitialized memory at {off + b + self.base:#x} on tile {first + t} (checked mode)"
                )
            if "w" in access:
                block[...] = True

    def _slice_indices(self, b: Binding, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(member tiles [M], logical byte index [R, B], tile byte offset [R, B]) of one slice."""
        es = DTYPE_SIZE[b.dtype]
        tiles, logical, offs = slice_bytes(s, es, self.base)
        tile, tc, ts, rows = (int(s[SLICE.index(c)]) for c in ("tile", "tile_count", "tile_step", "rows"))
        if tc <= 0 or rows <= 0 or tiles.min() < 0 or tiles.max() >= self.target.tiles:
            raise EmulatorError(f"binding '{b.name}': slice tiles {tile}+{ts}*[0,{tc}) out of range")
        size = int(np.prod(b.device_shape(), dtype=np.int64)) * es
        if logical.min() < 0 or logical.max() >= size or offs.min() < 0 or offs.max() >= self.size:
            raise EmulatorError(f"binding '{b.name}': slice {s.tolist()} out of range")
        return tiles, logical, offs

    def _checked_slices(self, b: Binding) -> np.ndarray:
        """`b`'s slice table, every slice inside its tensor, the tiles and tile memory (the first
        that is not is reported by the general path's checks)."""
        sl = np.ascontiguousarray(b.slices.reshape(-1, len(SLICE)), np.int64)
        es = DTYPE_SIZE[b.dtype]
        size = int(np.prod(b.device_shape(), dtype=np.int64)) * es
        k = first_bad_slice(sl, es, self.target.tiles, size, self.size, self.base)
        if k >= 0:
            self._slice_indices(b, sl[k])  # raises with the slice named
            raise EmulatorError(f"binding '{b.name}': slice {sl[k].tolist()} out of range")
        return sl

    def _contiguous(self, b: Binding, s: np.ndarray) -> tuple[Any, int, int, int] | None:
        """(tile index, logical byte start, tile byte offset, bytes) when a slice is one block."""
        lo, ls, rows, re, tile, tc, ts, addr, tstride = (int(x) for x in s)
        es = DTYPE_SIZE[b.dtype]
        if rows != 1 and (ls != re or tstride != re * es):
            return None
        nbytes, off, last = rows * re * es, addr - self.base, tile + (tc - 1) * ts
        size = int(np.prod(b.device_shape(), dtype=np.int64)) * es
        if (
            tc <= 0
            or rows <= 0
            or re <= 0
            or ts < 0
            or (ts == 0 and tc > 1)
            or tile < 0
            or last >= self.target.tiles
            or lo < 0
            or lo * es + nbytes > size
            or off < 0
            or off + nbytes > self.size
        ):
            return None  # rare or bad: the general path handles (and reports) it
        return slice(tile, last + 1, max(ts, 1)), lo * es, off, nbytes

    def scatter(self, binding: Binding, array: np.ndarray) -> None:
        """Write a logical array into every replica of every slice of `binding` (rearranged
        first when the binding says so: `Binding.perm`)."""
        flat = np.ascontiguousarray(binding.device_array(array), dtype=NUMPY_DTYPE[binding.dtype]).reshape(-1)
        if flat.size != int(np.prod(binding.device_shape(), dtype=np.int64)):
            raise EmulatorError(f"binding '{binding.name}': {flat.size} elements for shape {binding.device_shape()}")
        raw = flat.view(np.uint8)
        if self.written is None:  # the compiled path (checked mode also marks what it writes)
            scatter_slices(self.mem, raw, self._checked_slices(binding), DTYPE_SIZE[binding.dtype], self.base)
            return
        for s in binding.slices.reshape(-1, len(SLICE)):
            block = self._contiguous(binding, s)
            if block is not None:
                tiles, lb, off, n = block
                self.mem[tiles, off : off + n] = raw[lb : lb + n]
                if self.written is not None:
                    self.written[tiles, off : off + n] = True
                continue
            tiles, logical, offs = self._slice_indices(binding, s)
            self.mem[tiles[:, None, None], offs[None]] = raw[logical][None]
            if self.written is not None:
                self.written[tiles[:, None, None], offs[None]] = True

    def gather(self, binding: Binding) -> np.ndarray:
        """Read a logical array from the first replica (m = 0) of each slice of `binding`."""
        es = DTYPE_SIZE[binding.dtype]
        raw = np.zeros(int(np.prod(binding.shape, dtype=np.int64)) * es, np.uint8)
        if self.written is None:  # the compiled path (checked mode also checks what it reads)
            gather_slices(self.mem, raw, self._checked_slices(binding), es, self.base)
            return raw.view(NUMPY_DTYPE[binding.dtype]).reshape(binding.shape)
        for s in binding.slices.reshape(-1, len(SLICE)):
            block = self._contiguous(binding, s)
            if block is not None:
                tiles, lb, off, n = block
                raw[lb : lb + n] = self.mem[tiles.start, off : off + n]
                if self.written is not None and not self.written[tiles.start, off : off + n].all():
                    self._unwritten(
                        binding, tiles.start, off + int(np.argmin(self.written[tiles.start, off : off + n]))
                    )
                continue
            tiles, logical, offs = self._slice_indices(binding, s)
            raw[logical] = self.mem[tiles[0], offs]
            if self.written is not None and not self.written[tiles[0], offs].all():
                self._unwritten(binding, int(tiles[0]), int(offs.reshape(-1)[np.argmin(self.written[tiles[0], offs])]))
        return raw.view(NUMPY_DTYPE[binding.dtype]).reshape(binding.shape).copy()

    def _unwritten(self, binding: Binding, tile: int, off: int) -> None:
        raise EmulatorError(
            f"reading '{binding.name}': byte {off + self.base:#x} on tile {tile} was never written (checked mode)"
        )

    # ---------------------------------------------------------------- loading

    def load(self) -> None:
        """Write each program's code into its tiles, then run the `initialize` host call (its
        profile records go to the next run's result)."""
        for i, p in enumerate(self.package.programs):
            code = np.frombuffer(p.code, np.uint8)
            off = self._offset(p.code_address, code.size, f"program {i} code")
            if p.first_tile < 0 or p.tile_count <= 0 or p.first_tile + p.tile_count > self.target.tiles:
                raise EmulatorError(f"program {i}: tiles out of range")
            if self.execute:
                self.mem[p.first_tile : p.first_tile + p.tile_count, off : off + code.size] = code
            if self.written is not None:
                self.written[p.first_tile : p.first_tile + p.tile_count, off : off + code.size] = True
        self._loading_profile = self.initialize()
        self.loaded = True

    def initialize(self) -> list[dict[str, Any]]:
        """Execute the `initialize` host call: scatter each weight's data into tile memory (all
        replicas). Returns one host_write profile record per step."""
        records = []
        for j, step in enumerate(self._host_steps("initialize")):
            if step.kind != "write":
                raise EmulatorError(f"host call 'initialize': step {j} is a {step.kind} step, not a write")
            w, rec = self._host_transfer("initialize", j, step, self.package.weights, "weight")
            if self.execute:
                if w.data is None:
                    raise EmulatorError(f"weight '{w.name}' has no data")
                self.scatter(w, np.frombuffer(w.data, NUMPY_DTYPE[w.dtype]).reshape(w.shape))
            records.append(rec)
        return records

    def _host_steps(self, name: str) -> list[HostStep]:
        calls = [c for c in self.package.host_calls if c.name == name]
        if len(calls) != 1:
            raise EmulatorError(f"package has {len(calls)} host calls named '{name}', expected 1")
        return calls[0].steps

    def _host_transfer(
        self, call: str, j: int, step: HostStep, bindings: list[Binding], what: str
    ) -> tuple[Binding, dict[str, Any]]:
        """The binding a write or read step moves and the step's profile record, once the step's
        bytes and cycles agree with the binding and the target (the compiler's figures, recomputed)."""
        where = f"host call '{call}': step {j}"
        b = next((x for x in bindings if x.name == step.binding), None)
        if b is None:
            raise EmulatorError(f"{where} {step.kind}s '{step.binding}': no {what} of that name")
        n = binding_bytes(b)
        cycles = self.target.host_transfer_cycles(n)
        if (step.nbytes, step.cycles) != (n, cycles):
            raise EmulatorError(
                f"{where} ({step.kind} {what} '{b.name}'): the package says {step.nbytes} bytes, {step.cycles} "
                f"cycles; the binding and target {self.target.name} give {n} bytes, {cycles} cycles"
            )
        rec = {"kind": f"host_{step.kind}", "call": call, "step": j, "binding": b.name, "bytes": n, "cycles": cycles}
        return b, rec

    def _decode(self, i: int, p: Program) -> np.ndarray:
        """The program's unpacked instruction words [n, 16], read from its first tile's memory up
        to END."""
        limit = self.base + self.size
        for r in self.target.regions:
            if r.executable and r.start <= p.code_address < r.end:
                limit = r.end
                break
        else:
            raise EmulatorError(f"program {i}: code address {p.code_address:#x} is not executable")
        off = self._offset(p.code_address, 0, f"program {i} code")
        n = limit - p.code_address
        if self.execute:
            raw = self.mem[p.first_tile, off : off + n]
        else:  # cycle counting only: the package's code bytes, as they would be loaded
            raw = np.frombuffer(p.code, np.uint8)[:n]
        try:
            return unpack(raw, f"program {i}")[0]
        except IsaError as e:
            raise EmulatorError(f"{e} (the executable region ends at {limit:#x})") from None

    # ---------------------------------------------------------------- kernels

    def _call(self, first: int, count: int, w: np.ndarray, where: str, loop: tuple[int, int] | None = None) -> int:
        """Run (or only time) one CALL; `loop` is the innermost loop's (trips, current iteration)."""
        if not 0 <= int(w[1]) < len(KERNEL_NAMES):
            raise EmulatorError(f"{where}: invalid kernel index {int(w[1])}")
        kernel = KERNELS[KERNEL_NAMES[int(w[1])]]
        p = {pn: int(v) for pn, v in decode_call_params(kernel.name, w).items()}
        if kernel.iterated:
            if loop is None or loop[0] != p["iterations"]:
                around = "outside any loop" if loop is None else f"in a loop of {loop[0]} trips"
                raise EmulatorError(f"{where}: {kernel.name} of {p['iterations']} iterations runs {around}")
            p["iteration"] = loop[1]
        in_dt = _dtype(int(w[2]) & 0xFF, where)
        out_dt = _dtype((int(w[2]) >> 8) & 0xFF, where)
        if kernel.reads_in_dtype:
            p["in_esize"] = DTYPE_SIZE[in_dt]
        if self.execute:
            # padding and uninitialised memory may hold any bit pattern: like the hardware, compute
            # on it silently (only valid elements are ever checked or read back)
            with np.errstate(all="ignore"):
                out_dt = self._call_kernel(kernel, p, first, count, w, where)
        return kernel.cycles(self.target, p, DTYPE_SIZE[out_dt], DTYPE_SIZE[in_dt])

    def _call_kernel(
        self, kernel: Kernel, p: dict[str, int], first: int, count: int, w: np.ndarray, where: str
    ) -> DType:
        """Execute one CALL on tiles [first, first+count) by the kernel's own semantics, its
        operands accessed by their roles; returns the output's dtype."""
        name = kernel.name
        in_dt = _dtype(int(w[2]) & 0xFF, where)
        out_dt = _dtype((int(w[2]) >> 8) & 0xFF, where)
        if kernel.invalid(p):
            raise EmulatorError(f"{where}: {name} with invalid parameters {p}")
        if DType.INT32 in (in_dt, out_dt) and not kernel.ints:
            raise EmulatorError(f"{where}: {name} computes on floats only; its dtype word names i32")
        out_el, in_els = kernel.operand_elements(p)
        out_dt, in_dts = kernel.operand_dtypes(in_dt, out_dt)
        # each input's address and elements as the call reads it (a stacked one: this trip's block)
        reads = []
        for j in kernel.reads():
            skip, n = kernel.read_block(p, j, in_els[j])
            reads.append((j, int(w[4 + j]) + skip * DTYPE_SIZE[in_dts[j]], n))
        raw = [
            self._view(
                first,
                count,
                addr,
                n,
                in_dts[j],
                f"{where} {name} input {j}",
                interleaved=kernel.amp and j == kernel.amp_weights,
            )
            for j, addr, n in reads
        ]
        acc = kernel.out.role is Role.ACCUMULATOR
        out = self._view(first, count, int(w[3]), out_el, out_dt, f"{where} {name} output", "rw" if acc else "w")
        written = [(out, out_el)] + [
            (self._view(first, count, int(w[4 + j]), in_els[j], in_dts[j], f"{where} {name} scratch", "w"), in_els[j])
            for j in kernel.scratches()
        ]
        # tiles are independent: run the call a chunk of tiles at a time, so its float32
        # operands and the kernel's temporaries stay in cache and their buffers are reused
        scratch = sum(in_els[j] for j in kernel.scratches())
        per_tile = 4 * (out_el * (2 if acc else 1) + sum(n for _, _, n in reads) + scratch)
        step = max(1, min(count, KERNEL_CHUNK_BYTES // max(per_tile, 1)))
        addrs = [addr - self.base for _, addr, _ in reads]
        stores = [int(w[3]) - self.base] + [int(w[4 + j]) - self.base for j in kernel.scratches()]

        def chunk(c0: int) -> None:
            c = min(step, count - c0)
            with np.errstate(all="ignore"):  # (a worker thread starts with NumPy's default state)
                ins = [
                    self._widen(first + c0, c, off, v.shape[1], slot)
                    if v.dtype == np.float16
                    else _as_f32(v[c0 : c0 + c])
                    for slot, (v, off) in enumerate(zip(raw, addrs, strict=True))
                ]
                try:
                    res = kernel.run(p, c, ins, out[c0 : c0 + c].astype(np.float32) if acc else None)
                except KernelError as e:
                    raise EmulatorError(f"{where}: {e}") from None
                values = res if isinstance(res, tuple) else (res,)
                for (view, elements), off, v in zip(written, stores, values, strict=True):
                    self._store(first + c0, off, view[c0 : c0 + c], v.reshape(c, elements))  # rounds to the dtype

        run_pieces(chunk, range(0, count, step), self.threads)  # chunks touch disjoint tiles
        return out_dt

    def _widen(self, tile: int, count: int, off: int, n: int, slot: int) -> np.ndarray:
        """The fp16 operand of `n` elements at byte offset `off` on tiles tile..tile+count as a
        float32 [count, n] array, in this thread's reusable buffer of input `slot` (sized for one
        chunk of tiles, so it stays in cache and is not page-faulted afresh)."""
        buffers = getattr(self._local, "widened", None)
        if buffers is None:
            buffers = self._local.widened = [np.empty(0, np.float32) for _ in range(8)]
        if buffers[slot].size < count * n:
            buffers[slot] = np.empty(count * n, np.float32)
        out = buffers[slot][: count * n].reshape(count, n)
        if off % 2:  # not on an fp16 boundary: NumPy's cast of the unaligned view
            out[...] = self.mem[tile : tile + count, off : off + 2 * n].view(np.float16)
        else:
            widen_rows(self._mem16, (tile * self.size + off) // 2, self.size // 2, out)
        return out

    def _store(self, tile: int, off: int, view: np.ndarray, values: np.ndarray) -> None:
        """view[...] = values (the [count, n] operand at byte offset `off` on tiles from `tile`),
        rounded as NumPy rounds to the view's dtype: fp32 narrowed to fp16 by the compiled loop
        (bit-identical, 5x NumPy's cast), a broadcast constant (`zero`) cast once and filled."""
        if values.size and not any(values.strides):  # every element is the first
            view[...] = values[(slice(0, 1),) * values.ndim].astype(view.dtype)
        elif view.dtype == np.float16 and values.dtype == np.float32 and off % 2 == 0:
            if np.may_share_memory(values, self.mem):  # a view of an input (a copy kernel): read it first
                values = values.copy()
            narrow_rows(np.ascontiguousarray(values), self._mem16, (tile * self.size + off) // 2, self.size // 2)
        else:
            with np.errstate(over="ignore"):
                view[...] = values

    # ---------------------------------------------------------------- exchange

    def _prepare(self, ph: Phase, t: np.ndarray) -> _Prepared:
        """`_prepare_exact`'s result, by one compiled pass when the phase passes its checks (the
        exact path runs, and names the fault, whenever the pass finds one may be broken; and for a
        phase read by the trip, whose later trips' sources the pass does not bound)."""
        fast = None if ph.trip_stride else expand_checked(t, self.base, self.size, self.target.tiles, self._code_table)
        if fast is None:
            return self._prepare_exact(ph, t)
        fam, start, end, *copies, sender = fast
        args = tuple(copies)
        by_dst = self._by_tile(args[3])
        if any_double_write(self._write_bits(), by_dst, *args[3:]):
            return self._prepare_exact(ph, t)  # finds and names the two transfers
        dur = end - start
        sent = np.bincount(args[0][sender], weights=dur[sender], minlength=self.target.tiles)
        recv = np.bincount(args[3], weights=dur, minlength=self.target.tiles)
        measures = {
            "horizon": int(end.max()),
            "route_cycles": _route(t, self.target, self.package.tile_mapping),
            "lower_bound": int(max(sent.max(), recv.max())),
            "transfers": len(fam),
            "families": len(t),
        }
        return self._prepared_phase(measures, args, by_dst, None, fam, start, end)

    def _write_bits(self) -> np.ndarray:
        """This thread's scratch for the double-write check: one bit per memory word, zeroed."""
        bits = getattr(self._local, "bits", None)
        if bits is None:
            bits = self._local.bits = np.zeros((self.target.tiles, self.size // 256 + 1), np.uint64)
        return bits

    def _prepare_ahead(self) -> None:
        """Check the package's phases on a background thread while the run goes on, in index
        order, as many as the cache of prepared members holds (`PREPARED_MEMBERS`; the rest are
        prepared when they run). A phase's fault is raised when the run reaches it, as before."""
        budget = PREPARED_MEMBERS
        for ph in self.package.phases:
            t = np.asarray(ph.transfers, np.int64).reshape(-1, len(TRANSFER))
            if not len(t):
                continue
            members = float(np.clip(t[:, PC + 1], 0, None).astype(float) @ np.clip(t[:, MC + 1], 0, None))
            if members > budget:
                continue
            budget -= int(members)
            self._ahead[ph.index] = background().submit(self._prepare, ph, t)

    def _by_tile(self, tiles: np.ndarray) -> np.ndarray:
        """Members by tile (stable: a tile's in table order), by radix sort of 16-bit tiles."""
        return np.argsort(tiles.astype(np.uint16 if self.target.tiles <= 1 << 16 else np.int64), kind="stable")

    def _prepared_phase(
        self,
        measures: dict[str, int],
        args: tuple[np.ndarray, ...],
        by_dst: np.ndarray,
        trip_words: np.ndarray | None,
        *where: np.ndarray,
    ) -> _Prepared:
        """A checked phase's copy plan from its members in destination tile order (`by_dst`): which
        members read through a buffer (`read_written`, and every member whose source moves with
        the loop's trip, `trip_words` a trip: its overlap with the writes differs by trip), and
        the order members are copied in (no
        word is written twice, so any order gives the same memory; it decides locality): by
        destination tile when some member writes strided rows (stripes of a tile's block then
        complete while it is in cache), else by source tile (a multicast source is read once for
        all its destinations). `where`: each member's family, start and end, for messages."""
        strided = bool(((args[6] > 1) & (args[5] != args[7])).any())
        order = by_dst if strided else self._by_tile(args[0])
        parts = _parts(order, args[6] * args[7], self.threads)
        buffered = read_written(by_dst, *args)
        if trip_words is not None:
            buffered |= trip_words != 0
        return _Prepared(measures, args, buffered, parts, *where, trip_words=trip_words)

    def _prepare_exact(self, ph: Phase, t: np.ndarray) -> _Prepared:
        """Everything about a phase that does not depend on the data, checked once: counts, tile
        ranges, the port rule, memory bounds, word alignment, no byte written twice, no write
        over code; then its members as strided word copies and its measurements. Rows stay
        implicit (a member's rows are evenly strided), so no per-row arrays are built."""
        try:
            check_counts(t, ph.index)
            m = expand_members(t)
            check_tiles(m, self.target.tiles, ph.index)
            check_ports(m, ph.index)
        except ScheduleError as e:
            raise EmulatorError(str(e)) from None

        def fail(k: int, text: str) -> None:
            raise EmulatorError(f"phase {ph.index}: transfer {m.fam[k]} (cycles {m.start[k]}..{m.end[k]}) {text}")

        nb, last = 4 * m.row_words, m.rows - 1
        s_off, d_off = m.src_addr - self.base, m.dst_addr - self.base
        spans = {}
        # the members read by the trip move their sources a stride a trip, to the last trip's
        trip_bytes = ((m.fam >= ph.trip_begin) & (m.fam < ph.trip_end)) * ph.trip_stride
        reach = {"source": trip_bytes * max(ph.trips - 1, 0), "destination": 0}
        for what, off, stride in (("source", s_off, m.src_stride), ("destination", d_off, m.dst_stride)):
            lo, hi = off + np.minimum(0, last * stride), off + np.maximum(0, last * stride) + nb + reach[what]
            bad = np.flatnonzero((lo < 0) | (hi > self.size))
            if bad.size:
                k = int(bad[0])
                fail(k, f"{what} bytes [{lo[k] + self.base:#x}, {hi[k] + self.base:#x}) outside memory")
            spans[what] = (lo, hi)
        # data moves in 32-bit words: transfers are whole words at word-aligned addresses
        if ((s_off | d_off | m.src_stride | m.dst_stride) & 3).any() or ph.trip_stride & 3:
            raise EmulatorError(f"phase {ph.index}: a transfer address is not word aligned")
        i64 = np.int64
        args = (
            m.src.astype(i64),
            (s_off >> 2).astype(i64),
            (m.src_stride >> 2).astype(i64),
            m.dst.astype(i64),
            (d_off >> 2).astype(i64),
            (m.dst_stride >> 2).astype(i64),
            m.rows.astype(i64),
            m.row_words.astype(i64),
        )
        order = self._by_tile(m.dst)  # the bitset then works on one tile's bits at a time
        if any_double_write(self._write_bits(), order, *args[3:]):
            try:
                check_writes(expand_rows(m), ph.index)  # finds and names the two transfers
            except ScheduleError as e:
                raise EmulatorError(str(e)) from None
        d_lo, d_hi = spans["destination"]
        for t0, t1, c0, c1 in self._code:
            near = np.flatnonzero((m.dst >= t0) & (m.dst < t1) & (d_lo < c1) & (d_hi > c0))
            if near.size:  # a member whose span meets the code: look at its rows
                r = expand_rows(m)
                a = r.dst_addr - self.base
                hit = np.flatnonzero(np.isin(r.member, near) & (a < c1) & (a + 4 * r.words > c0))
                if hit.size:
                    j = int(hit[0])
                    fail(
                        int(r.member[j]),
                        f"writes [{a[j] + self.base:#x}, {a[j] + 4 * r.words[j] + self.base:#x}) over the code on "
                        f"tile {r.dst[j]}",
                    )
        dur = m.end - m.start
        sent = np.bincount(m.src[m.sender], weights=dur[m.sender], minlength=self.target.tiles)
        recv = np.bincount(m.dst, weights=dur, minlength=self.target.tiles)
        measures = {
            "horizon": int(m.end.max()),
            "route_cycles": _route(t, self.target, self.package.tile_mapping),
            "lower_bound": int(max(sent.max(), recv.max())),
            "transfers": len(m),
            "families": len(t),
        }
        trip_words = (trip_bytes >> 2).astype(np.int64) if ph.trip_stride else None
        return self._prepared_phase(measures, args, order, trip_words, m.fam, m.start, m.end)

    def exchange(self, ph: Phase, loop: tuple[int, int] | None = None) -> dict[str, int]:
        """Execute one phase: its static rules are checked on its first execution (and the result
        kept for later ones while members fit the cache); then, in checked mode, every source
        byte must have been written; then the rows move. A phase read by the trip must run in a
        loop of its `trips` (`loop`: the innermost loop's trips and current trip); its sources are
        the trip's. Returns the phase's measurements."""
        t = np.asarray(ph.transfers, np.int64).reshape(-1, len(TRANSFER))
        if ph.trip_stride and (loop is None or loop[0] != ph.trips):
            around = f"in a loop of {loop[0]} trips" if loop else "outside any loop"
            raise EmulatorError(
                f"phase {ph.index}: it reads by the trip of a loop of {ph.trips} trips, and runs {around}"
            )
        if len(t) == 0:
            return {"horizon": 0, "route_cycles": 0, "lower_bound": 0, "transfers": 0, "families": 0}
        prep = self._prepared.get(ph.index)
        if prep is None:
            ahead = self._ahead.pop(ph.index, None)
            prep = self._prepare(ph, t) if ahead is None else ahead.result()  # (raises the phase's fault)
            if self._cached_members + len(prep.fam) <= PREPARED_MEMBERS:
                self._prepared[ph.index] = prep
                self._cached_members += len(prep.fam)
        a = prep.copies
        if prep.trip_words is not None:  # this trip's sources (checked for every trip when prepared)
            assert loop is not None
            a = (a[0], a[1] + loop[1] * prep.trip_words, *a[2:])
        if self.written is not None:
            k, byte = first_unwritten(self.written, a[0], a[1], a[2], a[6], a[7])
            if k >= 0:
                raise EmulatorError(
                    f"phase {ph.index}: transfer {prep.fam[k]} (cycles {prep.start[k]}..{prep.end[k]}) reads "
                    f"uninitialized memory at {byte + self.base:#x} on tile {a[0][k]} (checked mode)"
                )
            mark_written(self.written, a[3], a[4], a[5], a[6], a[7])
        # every source row is read before any is written (runtime.copy_rows); then the members
        # copy in parts of their order side by side (no word is written twice)
        mem32 = self.mem.view(np.uint32)
        flat, tile_words = mem32.reshape(-1), mem32.shape[1]
        buf, start = buffer_sources(flat, tile_words, prep.buffered, a[0], a[1], a[2], a[6], a[7])
        run_pieces(
            lambda part: copy_ordered(flat, tile_words, prep.buffered, buf, start, part, *a),
            prep.parts,
            self.threads,
        )
        return dict(prep.measures)

    # ---------------------------------------------------------------- run

    def _check_inputs(
        self, inputs: dict[str, np.ndarray], preloaded: frozenset[str] = frozenset()
    ) -> dict[str, np.ndarray]:
        want = {b.name: b for b in self.package.inputs if b.name not in preloaded}
        missing, extra = sorted(set(want) - set(inputs)), sorted(set(inputs) - set(want))
        if missing or extra:
            raise EmulatorError(f"inputs: missing {missing}, unexpected {extra}")
        out = {}
        for name, b in want.items():
            a = np.asarray(inputs[name])
            if tuple(a.shape) != tuple(b.shape):
                raise EmulatorError(f"input '{name}': shape {tuple(a.shape)}, expected {tuple(b.shape)}")
            out[name] = narrow_int32(name, a) if b.dtype == DType.INT32 else narrow_float(name, a, b.dtype)
        return out

    def run(self, inputs: dict[str, np.ndarray], preloaded: frozenset[str] = frozenset()) -> RunResult:
        """Execute the `run` host call: write the inputs, execute the programs, read the outputs;
        returns outputs, checkpoints, device cycles and host cycles. The inputs in `preloaded`
        are already in tile memory (a system's link transfers wrote them): the host does not."""
        try:
            return self._run(inputs, frozenset(preloaded))
        finally:  # checks of phases the run did not reach (or a refused run) are not wanted
            for ahead in self._ahead.values():
                ahead.cancel()
            self._ahead.clear()

    def _run(self, inputs: dict[str, np.ndarray], preloaded: frozenset[str]) -> RunResult:
        unknown = sorted(preloaded - {b.name for b in self.package.inputs})
        if unknown:
            raise EmulatorError(f"preloaded inputs {unknown} are no inputs of the package")
        arrays = self._check_inputs(inputs, preloaded) if self.execute else {}
        if self.max_cycles is not None and self.execute:
            need = self.count_device_cycles()
            if need > self.max_cycles:
                raise EmulatorError(
                    f"the run takes {need:,} device cycles, more than the budget of {self.max_cycles:,} "
                    "(--max-cycles; raise it to emulate this package)"
                )
        if not self.loaded:
            self.load()
        pkg = self.package
        steps = self._host_steps("run")
        if [st.kind for st in steps].count("execute") != 1:
            raise EmulatorError("host call 'run' must have exactly one execute step")
        result = RunResult({}, {}, 0, self._loading_profile)
        self._loading_profile = []
        streams = {kind: [st.binding for st in steps if st.kind == kind] for kind in ("write", "read")}
        for j, step in enumerate(steps):
            if step.kind == "execute":
                with threadpool_limits(limits=1, user_api="blas"):  # (runtime.workers: one a call)
                    self._execute(result, streams)
                continue
            if step.kind not in ("write", "read"):
                raise EmulatorError(f"host call 'run': step {j} has invalid kind '{step.kind}'")
            what, bindings = ("input", pkg.inputs) if step.kind == "write" else ("output", pkg.outputs)
            if step.kind == "write" and step.binding in preloaded:
                continue  # written by a link transfer, not the host
            b, rec = self._host_transfer("run", j, step, bindings, what)
            if self.execute and step.kind == "write":
                self.scatter(b, arrays[b.name])
            elif self.execute:
                result.outputs[b.name] = self.gather(b)
            result.profile.append(rec)
        result.host_cycles = sum(r["cycles"] for r in result.profile if r["kind"] in ("host_write", "host_read"))
        return result

    def read_rows(self, rows: np.ndarray) -> bytes:
        """The bytes of `rows` (abi.link_rows.LINK_ROW: a link transfer's source side), in row order."""
        parts = []
        for st, so, _, _, nb in rows.tolist():
            if not 0 <= st < self.target.tiles or so < 0 or so + nb > self.size:
                raise EmulatorError(f"link row from tile {st} offset {so} ({nb} bytes) is outside tile memory")
            parts.append(self.mem[st, so : so + nb].tobytes())
        return b"".join(parts)

    def write_rows(self, rows: np.ndarray, blob: bytes) -> None:
        """Write `blob` (what `read_rows` gave on the source chip) to the destination side of `rows`."""
        if len(blob) != int(rows[:, 4].sum()) if len(rows) else len(blob) != 0:
            raise EmulatorError(f"link transfer: {len(blob)} bytes for rows of {int(rows[:, 4].sum())}")
        view = np.frombuffer(blob, np.uint8)
        at = 0
        for _, _, dt, do, nb in rows.tolist():
            if not 0 <= dt < self.target.tiles or do < 0 or do + nb > self.size:
                raise EmulatorError(f"link row to tile {dt} offset {do} ({nb} bytes) is outside tile memory")
            self.mem[dt, do : do + nb] = view[at : at + nb]
            if self.written is not None:
                self.written[dt, do : do + nb] = True
            at += nb

    def count_device_cycles(self) -> int:
        """The run's device cycles, counted without executing anything: every control instruction
        timed as the emulator times it, each loop body once, multiplied by its trips (cycles do
        not depend on data or on the iteration). Raises EmulatorError as a run would."""
        counter = Emulator(self.package, self.target, execute=False, max_cycles=None)
        counter._fast_forward = True
        steps = counter._host_steps("run")
        streams = {kind: [st.binding for st in steps if st.kind == kind] for kind in ("write", "read")}
        result = RunResult({}, {}, 0)
        counter._execute(result, streams)
        return result.total_cycles

    def _execute(self, result: RunResult, streams: dict[str, list[str]]) -> None:
        """Run all programs to END in BSP lock-step (the run call's execute step), adding device
        cycles and profile records to `result`. HOST_IN/HOST_OUT are the device's side of the
        call's writes and reads: they must stream `streams` in order, before and after all
        device work."""
        pkg = self.package
        streamed: dict[str, list[str]] = {"write": [], "read": []}
        worked = False  # device work has run
        # per program: segments of CALLs, each followed by one control instruction
        split: list[tuple[list[np.ndarray], np.ndarray]] = []
        seg_start: list[np.ndarray] = []  # per program: instruction index of each segment's first word
        for i, p in enumerate(pkg.programs):
            words = self._decode(i, p)
            ctrl = np.flatnonzero(words[:, 0] != Opcode.CALL)
            segs = np.split(words, ctrl + 1)[:-1]
            split.append(([s[:-1] for s in segs], words[ctrl]))
            seg_start.append(np.concatenate([[0], ctrl[:-1] + 1]))
        skeleton = split[0][1]
        for i, (_, ctrl) in enumerate(split):
            if not np.array_equal(ctrl, skeleton):
                raise EmulatorError(f"program {i}: control skeleton differs from program 0")
        ex = self.target.exchange
        loops: list[list[int]] = []  # [index of LOOP_BEGIN, iterations left, trips, cycles at its start]
        j = -1
        while j + 1 < len(skeleton):
            j += 1
            cw = skeleton[j]
            seg = 0
            calls: list[tuple[int, str, int, int, int]] = []  # (program, kernel, first tile, tiles, cycles)
            self.cycle = result.total_cycles
            loop = (loops[-1][2], loops[-1][2] - loops[-1][1]) if loops else None
            for i, p in enumerate(pkg.programs):
                cyc = 0
                for n, w in enumerate(split[i][0][j]):
                    where = (
                        f"program {i} instruction {int(seg_start[i][j]) + n} (CALL) on tiles "
                        f"{p.first_tile}..{p.first_tile + p.tile_count - 1} at cycle {self.cycle + cyc}"
                    )
                    c = self._call(p.first_tile, p.tile_count, w, where, loop)
                    calls.append((i, KERNEL_NAMES[int(w[1])], p.first_tile, p.tile_count, c))
                    cyc += c
                seg = max(seg, cyc)
            op, arg = int(cw[0]), int(cw[1])
            if calls:
                result.profile.append({"kind": "compute", "index": j, "cycles": seg, "calls": calls})
            if op == Opcode.HOST_IN and (worked or calls):
                raise EmulatorError(f"control instruction {j}: HOST_IN after device work (the run call writes first)")
            work = calls or op in DEVICE_WORK
            worked = worked or work
            if work and streamed["read"]:
                raise EmulatorError(f"control instruction {j}: device work after HOST_OUT (the run call reads last)")
            rec: dict[str, Any]
            if op == Opcode.END:
                result.total_cycles += seg
                break
            if op in (Opcode.LOOP_BEGIN, Opcode.LOOP_END):
                result.total_cycles += seg
                if op == Opcode.LOOP_BEGIN:
                    loops.append([j, arg, arg, result.total_cycles])
                else:
                    if not loops:
                        raise EmulatorError(f"control instruction {j}: LOOP_END without LOOP_BEGIN")
                    loops[-1][1] -= 1
                    if self._fast_forward and loops[-1][1] > 0:  # the other trips cost what this one did
                        result.total_cycles += (result.total_cycles - loops[-1][3]) * loops[-1][1]
                        loops.pop()
                    elif loops[-1][1] > 0:
                        j = loops[-1][0]  # the body again (its first segment follows LOOP_BEGIN)
                    else:
                        loops.pop()
                continue
            if op == Opcode.SYNC:
                rec = {"kind": "sync", "index": j, "cycles": ex["sync_cycles"]}
            elif op == Opcode.EXCHANGE:
                if arg not in self._phases:
                    raise EmulatorError(f"control instruction {j}: no exchange phase {arg}")
                ph = self._phases[arg]
                try:
                    m = self.exchange(ph, loop) if self.execute else _timing(ph, self.target, self.package.tile_mapping)
                except EmulatorError as e:
                    raise EmulatorError(
                        f"control instruction {j} (EXCHANGE {arg}) at cycle {result.total_cycles + seg}: {e}"
                    ) from None
                rec = {
                    "kind": "exchange",
                    "index": arg,
                    "cycles": m["horizon"] + m["route_cycles"],
                    **m,
                    "scheduled_horizon": ph.horizon,
                    "scheduled_lower_bound": ph.lower_bound,
                }
            elif op in (Opcode.HOST_IN, Opcode.HOST_OUT):
                rec = self._stream(j, Opcode(op), arg, streams, streamed)
            elif op == Opcode.CHECKPOINT:
                if arg not in self._checkpoints:
                    raise EmulatorError(f"control instruction {j}: no checkpoint {arg}")
                if self.execute:
                    result.checkpoints[arg] = self.gather(self._checkpoints[arg].binding)
                rec = {"kind": "checkpoint", "index": arg, "cycles": 0}
            else:
                raise EmulatorError(f"control instruction {j}: invalid opcode {op}")
            result.total_cycles += seg + rec["cycles"]
            result.profile.append(rec)
            if self.max_cycles is not None and result.total_cycles > self.max_cycles:  # a net under the count
                raise EmulatorError(
                    f"control instruction {j}: the run passed its budget of {self.max_cycles:,} device cycles"
                )
        for kind, names in streams.items():
            if len(streamed[kind]) < len(names):
                op_name = "HOST_IN" if kind == "write" else "HOST_OUT"
                raise EmulatorError(f"host call 'run' {kind}s '{names[len(streamed[kind])]}', no {op_name} streams it")

    def _stream(
        self, j: int, op: Opcode, arg: int, streams: dict[str, list[str]], streamed: dict[str, list[str]]
    ) -> dict[str, Any]:
        """HOST_IN/HOST_OUT `arg` at control instruction `j`: the device side of the run call's
        next write/read (which moves the data and costs the host cycles), checked against it."""
        kind, what, bindings = ("write", "input", self.package.inputs)
        if op == Opcode.HOST_OUT:
            kind, what, bindings = ("read", "output", self.package.outputs)
        if arg >= len(bindings):
            raise EmulatorError(f"control instruction {j}: no {what} {arg}")
        k, name = len(streamed[kind]), bindings[arg].name
        want = streams[kind][k] if k < len(streams[kind]) else None
        if name != want:
            raise EmulatorError(
                f"control instruction {j}: {op.name} {arg} streams {what} '{name}', "
                f"the run call's {kind} step number {k} moves {want!r}"
            )
        streamed[kind].append(name)
        return {"kind": op.name.lower(), "index": arg, "cycles": 0}
