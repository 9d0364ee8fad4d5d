"""Encode a `tasm` module into a `Package`, and disassemble a package back into tasm.

Programs become instruction streams (runtime.isa) loaded at the base of the executable
region; phase tables, host streams, weights and checkpoints become package tables whose slice
families are derived from each value's layout by `layout.binding_slices`, or taken as written
from an explicit `slices` table. The host calls follow from the weights and the programs'
host_in/host_out order, so the disassembly is that explicit form with nothing added: it
re-encodes to the same package bytes.
"""

from __future__ import annotations

import math
import re

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float16Type, Float32Type
from xdsl.ir import Attribute
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import tasm, tilemap
from ipu.dialects.graph import initializer_values
from ipu.dialects.ipu import target_attr_of
from ipu.dialects.layout import binding_slices
from ipu.dialects.tilemap import table_of
from ipu.runtime import isa
from ipu.runtime.package import Binding, Checkpoint, HostCall, Package, Phase, Program, make_host_calls
from ipu.target import Target, load_target
from ipu.target.mapping import TileMapping
from ipu.version import __version__


def _dtype(t: Attribute) -> isa.DType:
    if isinstance(t, Float16Type):
        return isa.DType.F16
    if isinstance(t, Float32Type):
        return isa.DType.F32
    raise DiagnosticException(f"codegen: unsupported element type {t}")


def _binding(op: tasm._BoundValue, replicas: bool, data: bytes | None = None) -> Binding:
    t = op.tensor
    shape = tuple(t.get_shape())
    dt = _dtype(t.element_type)
    if op.slices is not None:
        slices = tasm.slice_table(op.slices)
    else:
        assert op.layout is not None and op.address is not None, "verified: a layout comes with an address"
        slices = binding_slices(op.layout.layout(shape), isa.DTYPE_SIZE[dt], op.address.value.data, replicas)
    return Binding(op.sym_name.data, dt, shape, slices, data)


def _weight_bytes(op: tasm.WeightOp) -> bytes:
    """Logical row-major bytes of a weight: a full dense initializer of the tensor's element type
    as stored (bit-exact), anything else materialized at the storage dtype."""
    init, t = op.init, op.tensor
    if (
        isinstance(init, DenseIntOrFPElementsAttr)
        and init.get_element_type() == t.element_type
        and len(init) == math.prod(t.get_shape())
    ):
        return init.data.data
    return np.ascontiguousarray(initializer_values(init, t)).tobytes()


def encode_program(p: tasm.ProgramOp) -> bytes:
    words = _encode_block(p.body.block)
    words.append(isa.encode_simple(isa.Opcode.END))
    return np.concatenate(words).astype("<u4").tobytes()


def _encode_block(block) -> list[np.ndarray]:
    words: list[np.ndarray] = []
    for op in block.ops:
        if isinstance(op, tasm.LoopOp):
            words.append(isa.encode_simple(isa.Opcode.LOOP_BEGIN, op.count.value.data))
            words.extend(_encode_block(op.body.block))
            words.append(isa.encode_simple(isa.Opcode.LOOP_END))
        if isinstance(op, tasm.KernelCallOp):
            names = isa.KERNELS[op.kernel.data][1]
            params = [op.params.data[n].value.data for n in names]  # type: ignore[union-attr]
            words.append(
                isa.encode_call(
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
        elif isinstance(op, tasm.ExchangeOp):
            words.append(isa.encode_simple(isa.Opcode.EXCHANGE, op.index.value.data))
        elif isinstance(op, tasm.HostInOp):
            words.append(isa.encode_simple(isa.Opcode.HOST_IN, op.index.value.data))
        elif isinstance(op, tasm.HostOutOp):
            words.append(isa.encode_simple(isa.Opcode.HOST_OUT, op.index.value.data))
        elif isinstance(op, tasm.CheckpointOp):
            words.append(isa.encode_simple(isa.Opcode.CHECKPOINT, op.index.value.data))
    return words


def build_package(module: builtin.ModuleOp, target: Target) -> Package:
    """The package for a module at tasm level, built for `target`."""
    tattr = target_attr_of(module)
    if tattr is None or not any(isinstance(op, tasm.ProgramOp) for op in module.body.block.ops):
        raise DiagnosticException("codegen: module is not at tasm level (run ipu-compile first)")
    if tattr.target_name.data != target.name:
        raise DiagnosticException(f"codegen: module was compiled for {tattr.target_name.data}, not {target.name}")
    code_start = next(r for r in target.regions if r.executable).start
    programs, phases, weights, inputs, outputs, checkpoints = [], [], [], [], [], []
    for op in module.body.block.ops:
        if isinstance(op, tasm.ProgramOp):
            code = encode_program(op)
            if len(code) > target.code_reserve_bytes:
                raise DiagnosticException(
                    f"codegen: program @{op.sym_name.data} needs {len(code)} code bytes, "
                    f"{target.code_reserve_bytes} are reserved"
                )
            at = op.code_address.value.data if op.code_address is not None else code_start
            programs.append(Program(op.first.value.data, op.count.value.data, at, code))
        elif isinstance(op, tasm.PhaseOp):
            phases.append(
                Phase(
                    op.index.value.data,
                    op.lower_bound.value.data,
                    op.horizon.value.data,
                    op.scheduler.data,
                    table_of(op.transfers),
                )
            )
        elif isinstance(op, tasm.WeightOp):
            weights.append(_binding(op, True, _weight_bytes(op)))
        elif isinstance(op, tasm.StreamInOp):
            inputs.append((op.index.value.data, _binding(op, True)))
        elif isinstance(op, tasm.StreamOutOp):
            outputs.append((op.index.value.data, _binding(op, False)))
        elif isinstance(op, tasm.CheckpointDefOp):
            checkpoints.append(
                Checkpoint(
                    op.index.value.data,
                    op.sym_name.data,
                    op.value.data,
                    _binding(op, False),
                    op.aspect.data if op.aspect else "value",
                )
            )
    version = module.attributes.get("tasm.compiler")
    host_calls = _host_calls(module, weights, dict(inputs), dict(outputs), target)
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
) -> list[HostCall]:
    """`initialize` writes the weights in module order; `run` writes the stream_in values in the
    order the first program's host_in ops run, executes, reads the stream_out values in host_out
    order (the programs share that order; validate_package checks it against every program)."""
    first = next((op for op in module.body.block.ops if isinstance(op, tasm.ProgramOp)), None)
    order: dict[type, list[int]] = {tasm.HostInOp: [], tasm.HostOutOp: []}
    for op in first.walk() if first is not None else ():
        if type(op) in order:
            order[type(op)].append(op.index.value.data)
    # an index without a value, or a value no program streams, is left to validate_package to name
    ins, outs = (
        [values[i] for i in indices if i in values] + [b for i, b in sorted(values.items()) if i not in indices]
        for values, indices in ((inputs, order[tasm.HostInOp]), (outputs, order[tasm.HostOutOp]))
    )
    return make_host_calls(weights, ins, outs, target)


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
        lines.extend(_disassemble_code(p.code))
        lines.append("  }")
    for ph in pkg.phases:
        lines.append(
            f"  tasm.phase {ph.index} lower_bound {ph.lower_bound} horizon {ph.horizon} "
            f"scheduler {_lit(ph.scheduler)} transfers = {_dense(_i32(ph.transfers, f'phase {ph.index}'), 'i32')}"
        )
    for b in pkg.weights:
        assert b.data is not None, "validated: weights carry their bytes"
        data = f'dense<"0x{bytes(b.data).hex().upper()}">' if b.data else "dense<>"
        lines.append(f"  tasm.weight {_lit(b.name)} {data} : {_tensor(b)} : {_tensor(b)} {_slices(b)}")
    for kind, bs in (("stream_in", pkg.inputs), ("stream_out", pkg.outputs)):
        for i, b in enumerate(bs):
            lines.append(f"  tasm.{kind} {i} {_lit(b.name)} : {_tensor(b)} {_slices(b)}")
    for c in pkg.checkpoints:
        aspect = f" aspect {_lit(c.aspect)}" if c.aspect != "value" else ""
        lines.append(
            f"  tasm.checkpoint_def {c.index} {_lit(c.name)} value {_lit(c.value)}{aspect} : "
            f"{_tensor(c.binding)} {_slices(c.binding)}"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _disassemble_code(code: bytes) -> list[str]:
    lines = []
    depth = 0
    for ins in np.frombuffer(code, "<u4").reshape(-1, isa.INSTRUCTION_WORDS):
        pad = "  " * (depth + 2)
        op = isa.Opcode(int(ins[0]))
        if op == isa.Opcode.END:
            break
        if op == isa.Opcode.CALL:
            kname = isa.KERNEL_NAMES[int(ins[1])]
            n_in, pn = isa.KERNELS[kname]
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
            lines.append(f"{pad}tasm.{mn} {int(ins[1])}")
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
    return f"tensor<{''.join(f'{d}x' for d in b.shape)}{isa.DTYPE_NAMES[b.dtype]}>"


def _dense(t: np.ndarray, element: str) -> str:
    body = "[" + ", ".join("[" + ", ".join(str(int(x)) for x in r) + "]" for r in t) + "]" if len(t) else ""
    return f"dense<{body}> : tensor<{t.shape[0]}x{t.shape[1]}x{element}>"


def _slices(b: Binding) -> str:
    return f"slices = {_dense(b.slices.reshape(-1, tasm.SLICE_COLUMNS), 'i64')}"


def _i32(t: np.ndarray, what: str) -> np.ndarray:
    """`t` as the i32 table `tasm.phase` holds, refused when a value does not fit."""
    t32 = t.astype(np.int32)
    if not np.array_equal(t32, t):
        raise DiagnosticException(f"codegen: {what}: a transfer table value does not fit in i32")
    return t32
