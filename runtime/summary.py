"""A readable summary of a validated `.ipuexe` package (`ipu-translate --inspect`).

Per-tile memory is the union of the byte ranges a tile's code, kernel operands, bindings and
exchange destinations touch over the whole run: an upper bound on what is live at once (the
package's own `peak_*` metrics, when present, give the compiler's peak). Regions are split by
address; a buffer's memory class is not stored (a standard buffer may lie in either region).
"""

from __future__ import annotations

import numpy as np

from ipu.abi.isa import DTYPE_NAMES, DTYPE_SIZE, Opcode, unpack
from ipu.abi.kernels import KERNEL_NAMES, KERNELS, decode_call_params
from ipu.abi.package import Binding, HostCall, Package
from ipu.abi.tables import SLICE, TRANSFER
from ipu.abi.transfers import expand_members
from ipu.target import Target

LIST_LIMIT = 20  # lines per listed section before "... N more"

Ranges = tuple[np.ndarray, np.ndarray, np.ndarray]  # (tile or program, first byte, end byte)
_SIZE_BY_CODE = np.zeros(256, np.int64)
_SIZE_BY_CODE[[int(d) for d in DTYPE_SIZE]] = list(DTYPE_SIZE.values())


def _capped(lines: list[str], what: str, indent: str = "  ") -> list[str]:
    if len(lines) <= LIST_LIMIT:
        return lines
    return lines[:LIST_LIMIT] + [f"{indent}... {len(lines) - LIST_LIMIT} more {what}"]


def _cat(parts: list[Ranges]) -> Ranges:
    if not parts:
        return (np.zeros(0, np.int64),) * 3  # type: ignore[return-value]
    return tuple(np.concatenate([p[q] for p in parts]).astype(np.int64) for q in range(3))  # type: ignore[return-value]


def _merge(r: Ranges) -> Ranges:
    """Disjoint, sorted pieces covering the union of the ranges of each group."""
    g, lo, hi = r
    if not len(g):
        return r
    span = int(hi.max()) + 1  # addresses are non-negative (validated): one packed sort key
    o = np.argsort(g * span + lo, kind="stable")
    g, lo, hi = g[o], lo[o], hi[o]
    reach = np.maximum.accumulate(g * span + hi) - g * span  # furthest end so far within the group
    new = np.ones(len(g), bool)
    new[1:] = (g[1:] != g[:-1]) | (lo[1:] > reach[:-1])
    first = np.flatnonzero(new)
    return g[first], lo[first], np.maximum.reduceat(hi, first)


def _per_region(r: Ranges, groups: int, target: Target) -> np.ndarray:
    """Bytes of the union per group and region: [groups, len(target.regions)]."""
    g, lo, hi = _merge(r)
    out = np.zeros((groups, len(target.regions)), np.int64)
    for q, reg in enumerate(target.regions):
        n = np.clip(np.minimum(hi, reg.end) - np.maximum(lo, reg.start), 0, None)
        out[:, q] = np.bincount(g, weights=n, minlength=groups)
    return out


def _binding_ranges(b: Binding) -> Ranges:
    """Every (tile, byte range) a binding's slices occupy; contiguous rows become one range."""
    s = b.slices.reshape(-1, len(SLICE)).astype(np.int64)
    c = {name: s[:, q] for q, name in enumerate(SLICE.columns)}
    row_bytes = c["row_elements"] * DTYPE_SIZE[b.dtype]
    whole = (c["rows"] == 1) | (c["tile_stride"] == row_bytes)
    rows = np.where(whole, 1, c["rows"])
    length = np.where(whole, c["rows"] * row_bytes, row_bytes)
    per = rows * c["tile_count"]  # ranges per slice
    sl = np.repeat(np.arange(len(s)), per)
    k = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    m, r = k // rows[sl], k % rows[sl]
    lo = c["address"][sl] + r * c["tile_stride"][sl]
    return c["tile"][sl] + m * c["tile_step"][sl], lo, lo + length[sl]


def _program_ranges(pkg: Package) -> tuple[Ranges, Ranges]:
    """(code, kernel operand) ranges per program index."""
    start = np.array([p.code_address for p in pkg.programs], np.int64)
    code = (np.arange(len(start)), start, start + [len(p.code) for p in pkg.programs])
    operands = []
    for i, p in enumerate(pkg.programs):
        words, _ = unpack(p.code, f"program {i}")
        calls = words[words[:, 0] == Opcode.CALL]
        for k, name in enumerate(KERNEL_NAMES):
            cw = calls[calls[:, 1] == k]
            if not len(cw):
                continue
            out_el, in_els = KERNELS[name].operand_elements(decode_call_params(name, cw))
            out_dt, in_dts = KERNELS[name].operand_dtypes(cw[:, 2] & 0xFF, (cw[:, 2] >> 8) & 0xFF)
            for slot, (el, dt) in enumerate([(out_el, out_dt), *zip(in_els, in_dts, strict=True)]):
                nbytes = np.asarray(el, np.int64) * _SIZE_BY_CODE[np.broadcast_to(np.asarray(dt, np.int64), len(cw))]
                addr = cw[:, 3 + slot]
                operands.append((np.full(len(cw), i), addr, addr + nbytes))
    return code, _cat(operands)


def _to_tiles(pkg: Package, r: Ranges) -> Ranges:
    """Program-indexed ranges repeated on every tile of their program."""
    g, lo, hi = _merge(r)
    first = np.array([p.first_tile for p in pkg.programs], np.int64)[g]
    count = np.array([p.tile_count for p in pkg.programs], np.int64)[g]
    idx = np.repeat(np.arange(len(g)), count)
    k = np.arange(len(idx)) - np.repeat(np.cumsum(count) - count, count)
    return first[idx] + k, lo[idx], hi[idx]


def _exchange_ranges(pkg: Package) -> Ranges:
    """Destination bytes of every phase; a member's contiguous rows become one range."""
    parts = []
    for ph in pkg.phases:
        if len(ph.transfers):
            m = expand_members(ph.transfers)
            whole = (m.rows == 1) | (m.dst_stride == 4 * m.row_words)
            rows = np.where(whole, 1, m.rows)
            length = 4 * m.row_words * np.where(whole, m.rows, 1)
            i = np.repeat(np.arange(len(m)), rows)
            r = np.arange(len(i)) - np.repeat(np.cumsum(rows) - rows, rows)
            lo = m.dst_addr[i] + r * m.dst_stride[i]
            parts.append(_merge((m.dst[i], lo, lo + length[i])))
    return _cat(parts)


def _stats(label: str, per_tile: np.ndarray) -> str:
    lo, med, hi = int(per_tile.min()), int(np.median(per_tile)), int(per_tile.max())
    return f"  {label:<20} {lo:>10} {med:>10} {hi:>10}   tile {int(per_tile.argmax())}"


def _binding_line(kind: str, b: Binding, note: str = "") -> str:
    s = b.slices.reshape(-1, len(SLICE)).astype(np.int64)
    size = int(np.prod(b.shape, dtype=np.int64)) * DTYPE_SIZE[b.dtype]
    if b.perm or b.pads:  # rearranged by the host as it writes
        note += f" (host writes it as {list(b.device_shape())}" + (f", axes {list(b.perm)}" if b.perm else "") + ")"
    rows, row_elements, tile_count = (s[:, SLICE.columns.index(k)] for k in ("rows", "row_elements", "tile_count"))
    on_tiles = int((rows * row_elements * tile_count).sum()) * DTYPE_SIZE[b.dtype]
    return (
        f"  {kind} {b.name}{note} {DTYPE_NAMES[b.dtype]} {list(b.shape)}: {len(s)} slices, {size} bytes"
        f" ({on_tiles} on tiles)"
    )


def _host_call_lines(pkg: Package) -> list[str]:
    """Totals over the host calls, then each call's totals and its steps (capped)."""
    calls = pkg.host_calls
    nbytes, cycles = (sum(getattr(st, f) for c in calls for st in c.steps) for f in ("nbytes", "cycles"))
    out = [
        f"host calls: {len(calls)} ({sum(len(c.steps) for c in calls)} steps), "
        f"{nbytes} bytes over the host link, {cycles} host cycles"
    ]
    for c in calls:
        out.append(
            f"  {c.name}: {len(c.steps)} steps, {sum(st.nbytes for st in c.steps)} bytes, "
            f"{sum(st.cycles for st in c.steps)} cycles"
        )
        out += _capped([_step_line(c, j) for j in range(len(c.steps))], f"{c.name} steps", "    ")
    return out


def _step_line(call: HostCall, j: int) -> str:
    st = call.steps[j]
    if st.kind == "execute":
        return f"    step {j}: execute the programs"
    what = "weight" if call.name == "initialize" else "input" if st.kind == "write" else "output"
    return f"    step {j}: {st.kind} {what} {st.binding}, {st.nbytes} bytes, {st.cycles} cycles"


def _memory_classes(pkg: Package) -> list[tuple[str, Ranges]]:
    """Each memory class's byte ranges per tile: code, kernel operands, bindings, receive buffers."""
    kinds = (("weight", pkg.weights), ("input", pkg.inputs), ("output", pkg.outputs))
    code, operands = _program_ranges(pkg)
    classes: list[tuple[str, Ranges]] = [("code", _to_tiles(pkg, code)), ("kernel operands", _to_tiles(pkg, operands))]
    classes += [(f"{kind}s", _cat([_binding_ranges(b) for b in items])) for kind, items in kinds]
    classes += [("checkpoints", _cat([_binding_ranges(c.binding) for c in pkg.checkpoints]))]
    classes += [("exchange receive", _exchange_ranges(pkg))]
    return classes


def memory_per_tile(pkg: Package, target: Target) -> np.ndarray:
    """Bytes each tile touches over a run (the union of every class's ranges)."""
    return _per_region(_cat([r for _, r in _memory_classes(pkg)]), pkg.tiles, target).sum(axis=1)


def summarize_package(pkg: Package, target: Target) -> str:
    """The summary text (`pkg` must already have passed validate_package against `target`)."""
    out = [
        f"package: schema {pkg.schema_version}, target {pkg.target}, compiler {pkg.compiler_version}",
        f"tiles: {pkg.tiles}, memory [{pkg.memory_base:#x}, {pkg.memory_base + pkg.memory_size:#x}) "
        f"{pkg.memory_size} bytes per tile",
        f"programs: {len(pkg.programs)} ({len({p.code for p in pkg.programs})} distinct) "
        f"for {sum(p.tile_count for p in pkg.programs)} of {pkg.tiles} tiles",
    ]
    out += _capped(
        [
            f"  program {i}: tiles {p.first_tile}..{p.first_tile + p.tile_count - 1} ({p.tile_count}), "
            f"code {len(p.code)} bytes at {p.code_address:#x}"
            for i, p in enumerate(pkg.programs)
        ],
        "programs",
    )
    fams = [len(ph.transfers) for ph in pkg.phases]
    pc, mc = TRANSFER.columns.index("par_count"), TRANSFER.columns.index("mc_count")
    members = [int((ph.transfers[:, pc] * ph.transfers[:, mc]).sum()) if len(ph.transfers) else 0 for ph in pkg.phases]
    out.append(
        f"exchange: {len(pkg.phases)} phases, {sum(fams)} transfer families, {sum(members)} transfers, "
        f"tile mapping {pkg.tile_mapping}"
    )
    out += _capped(
        [
            f"  phase {ph.index}: lower_bound {ph.lower_bound} horizon {ph.horizon} scheduler {ph.scheduler} "
            f"families {f} transfers {m}"
            + (
                f", families {ph.trip_begin}..{ph.trip_end - 1} read by the trip ({ph.trip_stride} bytes a trip "
                f"of {ph.trips})"
                if ph.trip_stride
                else ""
            )
            for ph, f, m in zip(pkg.phases, fams, members, strict=True)
        ],
        "phases",
    )
    kinds = (("weight", pkg.weights), ("input", pkg.inputs), ("output", pkg.outputs))
    out.append(
        f"bindings: {len(pkg.weights)} weights, {len(pkg.inputs)} inputs, {len(pkg.outputs)} outputs, "
        f"{len(pkg.checkpoints)} checkpoints"
    )
    for kind, items in kinds:
        out += _capped([_binding_line(kind, b) for b in items], f"{kind}s")
    out += _capped(
        [_binding_line(f"checkpoint {c.index}", c.binding, f" (%{c.value}, {c.aspect})") for c in pkg.checkpoints],
        "checkpoints",
    )
    out += _host_call_lines(pkg)

    classes = _memory_classes(pkg)
    out.append("memory per tile (bytes touched over the run, the union of each class's ranges):")
    out.append(f"  {'':<20} {'min':>10} {'median':>10} {'max':>10}   busiest")
    for label, r in classes:
        out.append(_stats(label, _per_region(r, pkg.tiles, target).sum(axis=1)))
    every = _per_region(_cat([r for _, r in classes]), pkg.tiles, target)
    for q, reg in enumerate(target.regions):
        out.append(_stats(f"region {reg.name}", every[:, q]))
    total = every.sum(axis=1)
    out.append(_stats("all", total))
    t = int(total.argmax())
    out.append(
        f"busiest tile {t}: {int(total[t])} of {pkg.memory_size} bytes ({100 * total[t] / pkg.memory_size:.1f}%), "
        + ", ".join(f"{reg.name} {int(every[t, q])}" for q, reg in enumerate(target.regions))
    )
    out.append(f"metrics: {len(pkg.metrics)}")
    out += _capped([f"  {k} = {v}" for k, v in pkg.metrics.items()], "metrics")
    return "\n".join(out) + "\n"


def summarize_pod(pod, system) -> str:
    """A system package's summary: the system, each stage's chip, package and bindings, the
    transfers and their link cycles, then each chip's own package summary."""
    from ipu.abi.link_rows import link_schedule
    from ipu.abi.package_io import package_bytes

    out = [
        f"system package: system {pod.system} ({system.chips} x {system.chip.name}, {system.topology}, "
        f"{system.lanes} links of {system.link_bytes_per_cycle} B/cycle between neighbours), "
        f"compiler {pod.compiler_version or 'unknown'}",
        f"pipeline: {len(pod.stages)} stages, {pod.microbatches} micro-batches a run",
    ]
    for st in pod.stages:
        ins = ", ".join(b.name for b in st.package.inputs)
        outs = ", ".join(b.name for b in st.package.outputs)
        out.append(
            f"  stage {st.index} on chip {st.chip}: @{st.function}, {len(package_bytes(st.package)):,} bytes, "
            f"estimated {st.package.metrics.get('estimated_cycles', 0):,} cycles; in: {ins}; out: {outs}"
        )
    for t in pod.transfers:
        head = f"  transfer stage {t.src.stage}:{t.src.binding} -> stage {t.dst.stage}:{t.dst.binding}, "
        if t.rows is None:
            out.append(head + f"within chip {t.src_chip}, {t.nbytes:,} bytes")
            continue
        hops = len(system.route(t.src_chip, t.dst_chip))
        rate = system.lanes * system.link_bytes_per_cycle
        _, horizon, bound = link_schedule(t.rows, system.chip.rates["exchange_bytes_per_cycle"], rate)
        fixed = system.external_sync_cycles + hops * system.link_latency_cycles
        out.append(
            head + f"chip {t.src_chip} -> {t.dst_chip} ({hops} hop{'s' if hops != 1 else ''}), {t.nbytes:,} bytes "
            f"in {len(t.rows):,} rows from {len(set(t.rows[:, 0].tolist()))} tiles to "
            f"{len(set(t.rows[:, 2].tolist()))}: horizon {horizon:,} cycles (lower bound {bound:,}) + {fixed:,} sync "
            "and latency"
        )
    for name, routes in pod.inputs.items():
        out.append(f"  model input {name} -> " + ", ".join(f"stage {r.stage}:{r.binding}" for r in routes))
    for name, r in pod.outputs.items():
        out.append(f"  model output {name} <- stage {r.stage}:{r.binding}")
    for st in pod.stages:
        out.append(f"--- stage {st.index} (chip {st.chip}) ---")
        out.append(summarize_package(st.package, system.chip).rstrip("\n"))
    return "\n".join(out) + "\n"
