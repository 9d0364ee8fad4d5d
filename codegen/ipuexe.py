"""Encode a `tasm` module into a `Package`, and disassemble a package back into tasm.

Programs become instruction streams (ipu.abi.isa) loaded at the base of the executable
region; phase tables, host streams, weights and checkpoints become package tables whose slice
families are derived from each value's layout by `layout.binding_slices`, or taken as written
from an explicit `slices` table. Phases, streams and checkpoints are numbered in module order
(per kind), and the program's references to them (`tasm.exchange @phase0`) become those
numbers. The host calls follow from the weights and the programs' host_in/host_out order, so
the disassembly is that explicit form with nothing added: it re-encodes to the same package
bytes.
"""

from __future__ import annotations

import contextvars
import io
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float16Type, Float32Type
from xdsl.ir import Attribute
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi import isa
from ipu.abi.kernels import KERNEL_NAMES, KERNELS, encode_call
from ipu.abi.package import Binding, Checkpoint, HostCall, Package, Phase, Program, make_host_calls
from ipu.abi.tables import SLICE, TRANSFER, Schema
from ipu.dialects import tasm, tilemap
from ipu.dialects.graph import initializer_values, is_index_type
from ipu.dialects.ipu import target_attr_of
from ipu.dialects.layout import binding_slices
from ipu.dialects.table import OffsetsAttr, table_attr, table_of
from ipu.target import Target, load_target
from ipu.target.mapping import TileMapping
from ipu.version import __version__


def _dtype(t: Attribute) -> isa.DType:
    if isinstance(t, Float16Type):
        return isa.DType.F16
    if isinstance(t, Float32Type):
        return isa.DType.F32
    if is_index_type(t):
        return isa.DType.INT32
    raise DiagnosticException(f"codegen: unsupported element type {t}")


def _binding(op: tasm._BoundValue, replicas: bool, data: bytes | None = None) -> Binding:
    t = op.tensor
    shape = tuple(t.get_shape())
    dt = _dtype(t.element_type)
    if op.slices is not None:
        slices = table_of(op.slices)
    else:
        assert op.layout is not None and op.address is not None, "verified: a layout comes with an address"
        slices = binding_slices(op.layout.layout(shape), isa.DTYPE_SIZE[dt], op.address.value.data, replicas)
    host = getattr(op, "host_shape", None)  # a stream's declared shape (a scalar carried as [1])
    perm, pads = getattr(op, "host_perm", None), getattr(op, "host_pads", None)  # an input rearranged on the host
    if perm is not None or pads is not None:
        p = tuple(perm.get_values()) if perm is not None else ()
        q = tuple(pads.get_values()) if pads is not None else ()
        return Binding(op.sym_name.data, dt, Binding.host_shape_of(shape, p, q), slices, data, p, q)
    return Binding(op.sym_name.data, dt, tuple(host.get_values()) if host is not None else shape, slices, data)


def _weight_bindings(ops: list[tasm.WeightOp]) -> list[Binding]:
    """Every weight's binding, in order, built on up to two threads: materializing a weight (its
    cast to the storage dtype, its padding) is NumPy work that releases the GIL, and a model's
    weights are most of its package (GPT-2 small: 250 MB at f16)."""
    workers = min(2, len(ops), os.cpu_count() or 1)
    if workers < 2:
        return [_weight_binding(op) for op in ops]
    with ThreadPoolExecutor(workers, thread_name_prefix="ipu-package") as pool:
        # each in the caller's context: seeded weights drawn ahead (`prefetched_gaussians`) are
        # found there, not drawn again
        done = [pool.submit(contextvars.copy_context().run, _weight_binding, op) for op in ops]
        return [f.result() for f in done]


def _weight_binding(op: tasm.WeightOp) -> Binding:
    """A weight's binding; with `zero_padding` over its whole padded blocks, the padding written
    as zeros (the host otherwise writes real elements only, and memory holds anything)."""
    if op.zero_padding is None:
        return _binding(op, True, _weight_bytes(op))
    assert op.layout is not None and op.address is not None, "verified: zero_padding comes with a layout"
    shape = tuple(op.tensor.get_shape())
    dt = _dtype(op.tensor.element_type)
    lay = op.layout.layout(shape)
    ext = lay.padded_shape
    data = bytearray(math.prod(ext) * isa.DTYPE_SIZE[dt])  # zeros
    _write_weight(op, np.frombuffer(data, isa.NUMPY_DTYPE[dt]).reshape(ext)[tuple(slice(0, n) for n in shape)])
    slices = binding_slices(replace(lay, shape=ext), isa.DTYPE_SIZE[dt], op.address.value.data, True)
    return Binding(op.sym_name.data, dt, ext, slices, data)


def _weight_bytes(op: tasm.WeightOp) -> bytes | bytearray:
    """Logical row-major bytes of a weight: a full dense initializer of the tensor's element type
    as stored (bit-exact, not copied), anything else materialized at the storage dtype straight
    into the package's buffer (GPT-2 small's weights are 250 MB at f16: each copy counts)."""
    stored, t = _stored_bytes(op), op.tensor
    if stored is not None:
        return stored
    dt = _dtype(t.element_type)
    data = bytearray(math.prod(t.get_shape()) * isa.DTYPE_SIZE[dt])
    _write_weight(op, np.frombuffer(data, isa.NUMPY_DTYPE[dt]).reshape(tuple(t.get_shape())))
    return data


def _write_weight(op: tasm.WeightOp, out: np.ndarray) -> None:
    """Write a weight's logical values into `out` (its shape, its storage dtype): a compiler
    table, a dense initializer (its bytes as stored where its type is the tensor's) or a seeded one."""
    init, stored = op.init, _stored_bytes(op)
    if isinstance(init, OffsetsAttr):  # a compiler table stored at the tensor's element type
        np.copyto(out, table_of(init).reshape(out.shape), casting="unsafe")
    elif stored is not None:
        out[...] = np.frombuffer(stored, out.dtype).reshape(out.shape)
    else:
        initializer_values(init, op.tensor, out)


def _stored_bytes(op: tasm.WeightOp) -> bytes | None:
    """A weight's bytes as its initializer stores them, where that is the whole tensor at its
    element type (a full dense initializer), else None."""
    init, t = op.init, op.tensor
    if (
        isinstance(init, DenseIntOrFPElementsAttr)
        and init.get_element_type() == t.element_type
        and len(init) == math.prod(t.get_shape())
    ):
        return init.data.data
    return None


Numbers = dict[type, dict[str, int]]  # per definition kind (tasm.PhaseOp, ...): name -> package index


def numbering(module: builtin.ModuleOp) -> Numbers:
    """The package index of every phase, stream and checkpoint: its position among the module's
    definitions of its kind."""
    return {k: {n: i for i, n in enumerate(names)} for k, names in tasm.definitions(module).items()}


def encode_program(p: tasm.ProgramOp, numbers: Numbers) -> bytes:
    words = _encode_block(p.body.block, numbers)
    words.append(isa.encode_simple(isa.Opcode.END))
    return np.concatenate(words).astype("<u4").tobytes()


_REF_OPCODES = {
    tasm.ExchangeOp: isa.Opcode.EXCHANGE,
    tasm.HostInOp: isa.Opcode.HOST_IN,
    tasm.HostOutOp: isa.Opcode.HOST_OUT,
    tasm.CheckpointOp: isa.Opcode.CHECKPOINT,
}


def _encode_block(block, numbers: Numbers) -> list[np.ndarray]:
    words: list[np.ndarray] = []
    for op in block.ops:
        if isinstance(op, tasm.LoopOp):
            words.append(isa.encode_simple(isa.Opcode.LOOP_BEGIN, op.count.value.data))
            words.extend(_encode_block(op.body.block, numbers))
            words.append(isa.encode_simple(isa.Opcode.LOOP_END))
        if isinstance(op, tasm.KernelCallOp):
            names = KERNELS[op.kernel.data].param_names
            params = [op.params.data[n].value.data for n in names]  # type: ignore[union-attr]
            words.append(
                encode_call(
                    op.kernel.data,
                    _dtype(op.in_type),
                    _dtype(op.out_type),
                    op.out.value.data,
                    list(op.ins.get_values()),
                    params,
                )
            )
        elif isinstance(op, tasm.SyncOp):
            words.append(isa.encode_simple(isa.Opcode.SYNC))
        elif isinstance(op, tasm._RefOp):
            words.append(isa.encode_simple(_REF_OPCODES[type(op)], _number(op, numbers)))
    return words


def _number(op: tasm._RefOp, numbers: Numbers) -> int:
    """The package index a reference names (verified to exist)."""
    name = op.ref.string_value()
    n = numbers[op.DEFINITION].get(name)
    if n is None:
        raise DiagnosticException(f"codegen: {op.name} @{name} names no {op.DEFINITION.name}")
    return n


def build_package(module: builtin.ModuleOp, target: Target) -> Package:
    """The package for a module at tasm level, built for `target`."""
    tattr = target_attr_of(module)
    if tattr is None or not any(isinstance(op, tasm.ProgramOp) for op in module.body.block.ops):
        raise DiagnosticException("codegen: module is not at tasm level (run ipu-compile first)")
    if tattr.target_name.data != target.name:
        raise DiagnosticException(f"codegen: module was compiled for {tattr.target_name.data}, not {target.name}")
    code_start = next(r for r in target.regions if r.executable).start
    numbers = numbering(module)
    programs, phases, weight_ops, inputs, outputs, checkpoints = [], [], [], [], [], []
    reserve = code_region_bytes(module, target)
    for op in module.body.block.ops:
        if isinstance(op, tasm.ProgramOp):
            code = encode_program(op, numbers)
            assert len(code) == op.code_bytes(), "tasm.ProgramOp.code_bytes disagrees with the encoder"
            if len(code) > reserve:
                raise DiagnosticException(
                    f"codegen: program @{op.sym_name.data} needs {len(code)} code bytes, {reserve} are reserved"
                )
            at = op.code_address.value.data if op.code_address is not None else code_start
            programs.append(Program(op.first.value.data, op.count.value.data, at, code))
        elif isinstance(op, tasm.PhaseOp):
            phases.append(
                Phase(
                    numbers[tasm.PhaseOp][op.sym_name.data],
                    op.lower_bound.value.data,
                    op.horizon.value.data,
                    op.scheduler.data,
                    table_of(op.transfers),
                    *(
                        x.value.data if x is not None else 0
                        for x in (op.trip_stride, op.trips, op.trip_begin, op.trip_end)
                    ),
                )
            )
        elif isinstance(op, tasm.WeightOp):
            weight_ops.append(op)
        elif isinstance(op, tasm.StreamInOp):
            inputs.append((numbers[tasm.StreamInOp][op.sym_name.data], _binding(op, True)))
        elif isinstance(op, tasm.StreamOutOp):
            outputs.append((numbers[tasm.StreamOutOp][op.sym_name.data], _binding(op, False)))
        elif isinstance(op, tasm.CheckpointDefOp):
            checkpoints.append(
                Checkpoint(
                    numbers[tasm.CheckpointDefOp][op.sym_name.data],
                    op.sym_name.data,
                    op.value.data,
                    _binding(op, False),
                    op.aspect.data if op.aspect else "value",
                )
            )
    weights = _weight_bindings(weight_ops)
    version = module.attributes.get("tasm.compiler")
    host_calls = _host_calls(module, weights, dict(inputs), dict(outputs), target, numbers)
    return Package(
        compiler_version=version.data if isinstance(version, builtin.StringAttr) else __version__,
        target=target.name,
        tiles=target.tiles,
        memory_base=target.memory_base,
        memory_size=target.memory_size,
        programs=programs,
        phases=phases,
        weights=weights,
        inputs=[b for _, b in sorted(inputs, key=lambda x: x[0])],
        outputs=[b for _, b in sorted(outputs, key=lambda x: x[0])],
        checkpoints=sorted(checkpoints, key=lambda c: c.index),
        host_calls=host_calls,
        metrics=_metrics(module, len(programs), len(phases)),
        tile_mapping=_tile_mapping(module),
    )


def _tile_mapping(module: builtin.ModuleOp) -> TileMapping:
    a = module.attributes.get("tasm.tile_mapping")
    if a is None:
        return TileMapping()
    if not isinstance(a, tilemap.MappingAttr):
        raise DiagnosticException("codegen: tasm.tile_mapping must be a #tilemap.mapping attribute")
    return a.mapping


def _host_calls(
    module: builtin.ModuleOp,
    weights: list[Binding],
    inputs: dict[int, Binding],
    outputs: dict[int, Binding],
    target: Target,
    numbers: Numbers,
) -> list[HostCall]:
    """`initialize` writes the weights in module order; `run` writes the stream_in values in the
    order the first program's host_in ops run, executes, reads the stream_out values in host_out
    order (the programs share that order; validate_package checks it against every program)."""
    first = next((op for op in module.body.block.ops if isinstance(op, tasm.ProgramOp)), None)
    order: dict[type, list[int]] = {tasm.HostInOp: [], tasm.HostOutOp: []}
    for op in first.walk() if first is not None else ():
        if type(op) in order:
            order[type(op)].append(_number(op, numbers))
    # an index without a value, or a value no program streams, is left to validate_package to name
    ins, outs = (
        [values[i] for i in indices if i in values] + [b for i, b in sorted(values.items()) if i not in indices]
        for values, indices in ((inputs, order[tasm.HostInOp]), (outputs, order[tasm.HostOutOp]))
    )
    return make_host_calls(weights, ins, outs, target)


def code_region_bytes(module: builtin.ModuleOp, target: Target) -> int:
    """The code region place-storage left below the data (`tasm.memory`'s `code_bytes`: the
    measured programs when they outgrow the target's `code_reserve_bytes`, else that reserve)."""
    d = module.attributes.get("tasm.memory")
    v = d.data.get("code_bytes") if isinstance(d, builtin.DictionaryAttr) else None
    return v.value.data if isinstance(v, builtin.IntegerAttr) else target.code_reserve_bytes


def _metrics(module: builtin.ModuleOp, programs: int, phases: int) -> dict[str, int]:
    """`tasm.metrics` as written (a disassembly), else the program and phase counts followed by
    the integer entries of `tasm.memory` (compiler output)."""

    def ints(name: str) -> dict[str, int] | None:
        d = module.attributes.get(name)
        if not isinstance(d, builtin.DictionaryAttr):
            return None
        return {k: v.value.data for k, v in d.data.items() if isinstance(v, builtin.IntegerAttr)}

    explicit = ints("tasm.metrics")
    if explicit is not None:
        return explicit
    return {"programs": programs, "phases": phases} | (ints("tasm.memory") or {})


def disassemble(pkg: Package, target: Target | None = None) -> str:
    """A tasm module that re-encodes (`build_package`) to the bytes of `pkg`: programs, phase
    tables, and the bindings in their explicit form (slice tables; weight bytes as hex)."""
    tg = target or load_target(pkg.target)
    code_start = next(r for r in tg.regions if r.executable).start
    lines = [
        f"// package: target={pkg.target} tiles={pkg.tiles} compiler={_lit(pkg.compiler_version)} "
        f"schema={pkg.schema_version}"
    ]
    attrs = [f"ipu.target = #ipu.target<{_lit(pkg.target)}>", f"tasm.compiler = {_lit(pkg.compiler_version)}"]
    tm = pkg.tile_mapping
    if tm != TileMapping():
        attrs.append(f"tasm.tile_mapping = #tilemap.mapping<block = {tm.block}, width = {tm.width}>")
    derived = [("programs", len(pkg.programs)), ("phases", len(pkg.phases))]
    items = list(pkg.metrics.items())
    if items[:2] == derived:
        if items[2:]:
            attrs.append(f"tasm.memory = {_dict(items[2:])}")
    else:
        attrs.append(f"tasm.metrics = {_dict(items)}")
    lines.append(f"builtin.module attributes {{{', '.join(attrs)}}} {{")
    for i, p in enumerate(pkg.programs):
        at = f" at {p.code_address}" if p.code_address != code_start else ""
        lines.append(f"  tasm.program @p{i} tiles({p.first_tile}, {p.tile_count}){at} {{")
        lines.extend(_disassemble_code(p.code, pkg))
        lines.append("  }")
    for ph in pkg.phases:
        lines.append(
            f"  tasm.phase @{_phase(ph.index)} lower_bound {ph.lower_bound} horizon {ph.horizon} "
            f"scheduler {_lit(ph.scheduler)} "
            + (
                f"trip_stride {ph.trip_stride} trips {ph.trips} families {ph.trip_begin} to {ph.trip_end} "
                if ph.trip_stride
                else ""
            )
            + f"transfers = {_table(ph.transfers, TRANSFER)}"
        )
    for b in pkg.weights:
        assert b.data is not None, "validated: weights carry their bytes"
        data = f'dense<"0x{bytes(b.data).hex().upper()}">' if b.data else "dense<>"
        lines.append(f"  tasm.weight {_sym(b.name)} {data} : {_tensor(b)} : {_tensor(b)} {_slices(b)}")
    for kind, bs in (("stream_in", pkg.inputs), ("stream_out", pkg.outputs)):
        for b in bs:
            perm = f" host_perm array<i64: {', '.join(map(str, b.perm))}>" if b.perm else ""
            perm += f" host_pads array<i64: {', '.join(map(str, b.pads))}>" if b.pads else ""
            lines.append(f"  tasm.{kind} {_sym(b.name)} : {_tensor(b)}{perm} {_slices(b)}")
    for c in pkg.checkpoints:
        aspect = f" aspect {_lit(c.aspect)}" if c.aspect != "value" else ""
        lines.append(
            f"  tasm.checkpoint_def {_sym(c.name)} value {_lit(c.value)}{aspect} : "
            f"{_tensor(c.binding)} {_slices(c.binding)}"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _disassemble_code(code: bytes, pkg: Package) -> list[str]:
    """The program's instructions as tasm; an exchange, stream or checkpoint operand as the
    symbol its definition gets (`@phase3`, `@x`), or `@"#N"` when the package lacks it (which
    validation refuses)."""
    names = {
        isa.Opcode.EXCHANGE: {ph.index: _phase(ph.index) for ph in pkg.phases},
        isa.Opcode.HOST_IN: dict(enumerate(b.name for b in pkg.inputs)),
        isa.Opcode.HOST_OUT: dict(enumerate(b.name for b in pkg.outputs)),
        isa.Opcode.CHECKPOINT: {c.index: c.name for c in pkg.checkpoints},
    }
    lines = []
    depth = 0
    for ins in isa.unpack(code)[0]:
        pad = "  " * (depth + 2)
        op = isa.Opcode(int(ins[0]))
        if op == isa.Opcode.END:
            break
        if op == isa.Opcode.CALL:
            kname = KERNEL_NAMES[int(ins[1])]
            n_in, pn = KERNELS[kname].n_in, KERNELS[kname].param_names
            ins_s = ", ".join(str(int(a)) for a in ins[4 : 4 + n_in])
            params = ", ".join(
                f"{n} = {int(v)} : i64" for n, v in zip(pn, ins[4 + n_in : 4 + n_in + len(pn)], strict=True)
            )
            arr = f"array<i64: {ins_s}>" if ins_s else "array<i64>"
            in_t, out_t = (isa.DTYPE_NAMES[isa.DType(int(ins[2]) >> k & 0xFF)] for k in (0, 8))
            lines.append(f"{pad}tasm.call {_lit(kname)} out({int(ins[3])}) in({arr}) {{{params}}} : {in_t} -> {out_t}")
        elif op == isa.Opcode.SYNC:
            lines.append(f"{pad}tasm.sync")
        elif op == isa.Opcode.LOOP_BEGIN:
            lines.append(f"{pad}tasm.loop {int(ins[1])} {{")
            depth += 1
        elif op == isa.Opcode.LOOP_END:
            depth -= 1
            lines.append(f"{'  ' * (depth + 2)}}}")
        else:
            mn = {
                isa.Opcode.EXCHANGE: "exchange",
                isa.Opcode.HOST_IN: "host_in",
                isa.Opcode.HOST_OUT: "host_out",
                isa.Opcode.CHECKPOINT: "checkpoint",
            }[op]
            lines.append(f"{pad}tasm.{mn} {_sym(names[op].get(int(ins[1]), f'#{int(ins[1])}'))}")
    return lines


def _lit(s: str) -> str:
    """`s` as an MLIR string literal: quote, backslash and control characters escaped, other
    characters as they are (xDSL reads an escaped non-ASCII byte as a bytes literal)."""
    return '"' + "".join(c if c >= " " and c not in '"\\\x7f' else f"\\{ord(c):02X}" for c in s) + '"'


def _dict(items: list[tuple[str, int]]) -> str:
    """An MLIR dictionary of i64 values."""
    keys = [k if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", k) else _lit(k) for k, _ in items]
    return "{" + ", ".join(f"{k} = {int(v)} : i64" for k, (_, v) in zip(keys, items, strict=True)) + "}"


def _tensor(b: Binding) -> str:
    """The device tensor of `b` (the shape its slices index)."""
    return f"tensor<{''.join(f'{d}x' for d in b.device_shape())}{isa.DTYPE_NAMES[b.dtype]}>"


def _phase(index: int) -> str:
    return f"phase{index}"


def _sym(name: str) -> str:
    """`name` as a symbol: bare when it is an identifier, else quoted."""
    return "@" + (name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name) else _lit(name))


def _table(t: np.ndarray, schema: Schema) -> str:
    """A table attribute of a module-level op as the printer writes it (rows on their own lines)."""
    text = io.StringIO()
    Printer(stream=text).print_attribute(table_attr(t, schema))
    return text.getvalue().replace("\n", "\n  ")


def _slices(b: Binding) -> str:
    return f"slices = {_table(b.slices.reshape(-1, len(SLICE)), SLICE)}"
