"""Validation of a package against its target, before the emulator allocates anything: every
program, call, transfer table, binding and host call is checked, vectorized (mk2 packages hold
about 100k expanded transfers); the first problem raises `PackageError` naming it."""

from __future__ import annotations

import math
import re

import numpy as np

from ipu.abi.isa import CALL_DTYPES, DTYPE_SIZE, MAX_TRIPS, DType, IsaError, Opcode, unpack
from ipu.abi.kernels import KERNEL_NAMES, KERNELS, decode_call_params
from ipu.abi.package import (
    DEVICE_WORK,
    HOST_CALLS,
    HOST_STEP_KINDS,
    SCHEMA_VERSION,
    Binding,
    Checkpoint,
    HostCall,
    Package,
    PackageError,
    Phase,
    Program,
    binding_bytes,
    host_stream_order,
)
from ipu.abi.tables import SLICE, TRANSFER
from ipu.target import Target
from ipu.target.mapping import MappingError

_DTYPE_SIZE_BY_CODE = np.zeros(256, np.int64)
for _d, _s in DTYPE_SIZE.items():
    _DTYPE_SIZE_BY_CODE[int(_d)] = _s
_CALL_DTYPE_SIZE = np.zeros(256, np.int64)  # the codes a CALL's dtype word may hold
for _d in CALL_DTYPES:
    _CALL_DTYPE_SIZE[int(_d)] = DTYPE_SIZE[_d]


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
    for c in pkg.checkpoints:
        _validate_aspect(c)
    for ph in pkg.phases:  # before the programs, whose EXCHANGEs read a phase's trips
        _validate_transfers(ph, target)
    _validate_programs(pkg, target)
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
    # the code region the compiler left below the data: measured when the programs outgrow the
    # target's reserve (the `code_bytes` metric), never smaller than the reserve
    reserve = max(target.code_reserve_bytes, int(pkg.metrics.get("code_bytes", 0)))
    for i, p in enumerate(pkg.programs):
        n = len(p.code)
        try:
            words, lengths = unpack(p.code, f"program {i}")
        except IsaError as e:
            raise PackageError(str(e)) from None
        if 4 * int(lengths.sum()) != n:
            raise PackageError(f"program {i}: code length {n} bytes runs past its END ({4 * int(lengths.sum())} bytes)")
        if (
            not any(r.executable and r.start <= p.code_address and p.code_address + n <= r.end for r in target.regions)
            or p.code_address < base
            or p.code_address + n > end
        ):
            raise PackageError(
                f"program {i}: code_address: code [{p.code_address:#x}, {p.code_address + n:#x}) "
                "is not inside an executable region"
            )
        if p.code_address + n > base + reserve:
            raise PackageError(
                f"program {i}: code_address: code [{p.code_address:#x}, {p.code_address + n:#x}) leaves the "
                f"code region [{base:#x}, {base + reserve:#x}) and overlaps data memory"
            )
        op = words[:, 0]
        _validate_calls(i, words, lengths, op, base, end, target.memory_size)
        _check_iterated(i, words, op)
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
    strided = {ph.index: ph.trips for ph in pkg.phases if ph.trip_stride}  # phases read by the trip
    loops: list[int] = []  # the open loops' trips
    for j, w in enumerate(skeleton):
        if int(w[0]) == Opcode.LOOP_BEGIN:
            loops.append(int(w[1]))
            if not 1 <= int(w[1]) <= MAX_TRIPS:
                raise PackageError(f"control instruction {j}: loop count {w[1]} is not between 1 and {MAX_TRIPS}")
        elif int(w[0]) == Opcode.LOOP_END:
            if not loops:
                raise PackageError(f"control instruction {j}: LOOP_END without LOOP_BEGIN")
            loops.pop()
        elif int(w[0]) == Opcode.END and loops:
            raise PackageError(f"control instruction {j}: END inside a loop")
        if int(w[0]) in limits:
            what, valid = limits[Opcode(int(w[0]))]
            if int(w[1]) not in valid:
                raise PackageError(f"control instruction {j} ({Opcode(int(w[0])).name}): no {what} {w[1]}")
        if int(w[0]) == Opcode.EXCHANGE and int(w[1]) in strided and strided[int(w[1])] != (loops or [0])[-1]:
            inner = f"in a loop of {loops[-1]} trips" if loops else "outside any loop"
            raise PackageError(
                f"control instruction {j} (EXCHANGE {w[1]}): the phase reads by the trip of a loop of "
                f"{strided[int(w[1])]} trips, and runs {inner}"
            )
    # every checkpoint record is sampled by exactly one CHECKPOINT (the check reads each once)
    sampled = [int(w[1]) for w in skeleton if int(w[0]) == Opcode.CHECKPOINT]
    for c in pkg.checkpoints:
        n = sampled.count(c.index)
        if n != 1:
            raise PackageError(
                f"checkpoint {c.index} ({c.name}) is sampled by {n} CHECKPOINT instructions, not exactly one"
            )


_ASPECT = re.compile(r"value|scores|scores@(0|[1-9][0-9]{0,9})")


def _validate_aspect(c: Checkpoint) -> None:
    """A checkpoint's aspect is one the check knows: the value, or an attention's [heads, rows,
    keys] scores (whole, or a window from key `k`)."""
    if not _ASPECT.fullmatch(c.aspect):
        raise PackageError(f"checkpoint {c.index} ({c.name}): unknown aspect {c.aspect!r} (value, scores, scores@K)")
    if c.aspect.startswith("scores@") and len(c.binding.shape) != 3:  # a window of the keys axis
        raise PackageError(
            f"checkpoint {c.index} ({c.name}): aspect {c.aspect!r} samples [heads, rows, keys] scores, "
            f"its binding has shape {tuple(c.binding.shape)}"
        )


_ITERATED = [KERNEL_NAMES.index(k.name) for k in KERNELS.values() if k.iterated]


def _check_iterated(i: int, words: np.ndarray, op: np.ndarray) -> None:
    """Every CALL of an `iterated` kernel sits in a loop of as many trips as it has iterations."""
    calls = np.flatnonzero((op == Opcode.CALL) & np.isin(words[:, 1], _ITERATED))
    if not calls.size:
        return
    ctrl = np.flatnonzero(op != Opcode.CALL)
    trips: list[int] = []  # the open loops' counts
    after = np.zeros(len(ctrl), np.int64)  # the innermost open loop's trips after each control word
    for n, j in enumerate(ctrl):
        if op[j] == Opcode.LOOP_BEGIN:
            trips.append(int(words[j, 1]))
        elif op[j] == Opcode.LOOP_END and trips:
            trips.pop()
        after[n] = trips[-1] if trips else 0
    before = np.searchsorted(ctrl, calls) - 1  # the last control word before each call
    innermost = np.where(before >= 0, after[np.maximum(before, 0)], 0)
    for j, inner in zip(calls, innermost, strict=True):
        name = KERNEL_NAMES[int(words[j, 1])]
        n = int(decode_call_params(name, words[j])["iterations"])
        if inner != n:
            where = f"a loop of {inner} trips" if inner else "outside any loop"
            raise PackageError(f"program {i}: instruction {j} ({name} of {n} iterations) is {where}")


def _validate_calls(
    i: int, words: np.ndarray, lengths: np.ndarray, op: np.ndarray, base: int, end: int, memory_size: int
) -> None:
    idx = np.flatnonzero(op == Opcode.CALL)
    calls = words[idx]
    kern = calls[:, 1]
    bad = kern >= len(KERNEL_NAMES)
    if bad.any():
        j = _first(bad)
        raise PackageError(f"program {i}: instruction {idx[j]} calls invalid kernel index {kern[j]}")
    in_dt, out_dt = calls[:, 2] & 0xFF, (calls[:, 2] >> 8) & 0xFF
    bad = (_CALL_DTYPE_SIZE[in_dt] == 0) | (_CALL_DTYPE_SIZE[out_dt] == 0) | (calls[:, 2] >> 16 != 0)
    if bad.any():
        j = _first(bad)
        raise PackageError(f"program {i}: instruction {idx[j]} has invalid dtype word {calls[j, 2]:#x}")
    for k, name in enumerate(KERNEL_NAMES):
        sel = kern == k
        if not sel.any():
            continue
        c, at = calls[sel], idx[sel]
        kernel = KERNELS[name]
        bad = lengths[at] != kernel.call_words
        if bad.any():
            j = _first(bad)
            raise PackageError(
                f"program {i}: instruction {at[j]} ({name}) is {lengths[at][j]} words; a {name} CALL is "
                f"{kernel.call_words}"
            )
        if not kernel.ints:
            bad = ((c[:, 2] & 0xFF) == DType.INT32) | (((c[:, 2] >> 8) & 0xFF) == DType.INT32)
            if bad.any():
                j = _first(bad)
                raise PackageError(
                    f"program {i}: instruction {at[j]} ({name}) names i32 in its dtype word; the kernel computes on "
                    "floats only"
                )
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
    stride, trips, begin, end = ph.trip_stride, ph.trips, ph.trip_begin, ph.trip_end
    if stride < 0 or stride % 4 or (stride == 0) != (trips == 0) or trips > MAX_TRIPS:
        raise PackageError(
            f"phase {ph.index}: trip_stride {stride} and trips {trips}: a stride is a whole number of words, "
            f"given with the loop's trips (1..{MAX_TRIPS}), or both are 0"
        )
    if (stride and not 0 <= begin < end <= len(t)) or (not stride and (begin, end) != (0, 0)):
        raise PackageError(
            f"phase {ph.index}: families {begin} to {end} read by the trip with trip_stride {stride}: a stride "
            f"moves a range of the {len(t)} families, and no stride none"
        )
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
            *lo_hi(
                c["src_address"],
                re_ * c["src_stride"],
                pe * c["par_src_offset_step"],
                _trip_reach(ph, len(t)),  # the last trip's sources
            ),
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


def _trip_reach(ph: Phase, n: int) -> np.ndarray:
    """Per family of `ph`'s n, the bytes past its scheduled source its last trip reads."""
    out = np.zeros(n, np.int64)
    out[ph.trip_begin : ph.trip_end] = max(ph.trips - 1, 0) * ph.trip_stride
    return out


def _validate_binding(b: Binding, what: str, target: Target, need_data: bool, need_cover: bool) -> None:
    label = f"{what} '{b.name}'"
    try:
        dtype = DType(int(b.dtype))
    except ValueError:
        raise PackageError(f"{label}: invalid dtype {b.dtype}") from None
    if any(int(d) < 0 for d in b.shape):
        raise PackageError(f"{label}: negative dimension in shape {b.shape}")
    if (b.perm or b.pads) and what != "input":
        raise PackageError(f"{label}: a host permutation or padding: only an input is rearranged on the host")
    if b.perm and sorted(b.perm) != list(range(len(b.shape))):
        raise PackageError(f"{label}: host permutation {list(b.perm)}: not a permutation of {len(b.shape)} axes")
    if b.pads and (len(b.pads) != 2 * len(b.shape) or min(b.pads) < 0):  # large ones: the capacity check
        raise PackageError(
            f"{label}: host padding {list(b.pads)}: not a low and a high pad for each of {len(b.shape)} axes"
        )
    size, esize = math.prod(int(d) for d in b.device_shape()), DTYPE_SIZE[dtype]
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
    op = unpack(p.code)[0][:-1, 0]  # validated: it decodes, up to its END
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
