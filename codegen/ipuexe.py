"""Encode a `tasm` module into a `Package` (and back into readable tasm).

Programs become instruction streams (runtime.isa) loaded at the base of the executable
region; phase tables, host streams, weights and checkpoints become package tables whose slice
families are derived from each value's layout by `layout.binding_slices`.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import Float16Type, Float32Type
from xdsl.ir import Attribute
from xdsl.utils.exceptions import DiagnosticException

import ipu
from ipu.dialects import tasm
from ipu.dialects.graph import initializer_values
from ipu.dialects.layout import binding_slices
from ipu.dialects.tilemap import table_of
from ipu.runtime import isa
from ipu.runtime.package import Binding, Checkpoint, Package, Phase, Program
from ipu.target import Target


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
    lay = op.layout.layout(shape)
    slices = binding_slices(lay, isa.DTYPE_SIZE[dt], op.address.value.data, replicas)
    return Binding(op.sym_name.data, dt, shape, slices, data)


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
    tname = module.attributes.get("tasm.target")
    if not isinstance(tname, builtin.StringAttr):
        raise DiagnosticException("codegen: module is not at tasm level (run ipu-compile first)")
    if tname.data != target.name:
        raise DiagnosticException(f"codegen: module was compiled for {tname.data}, not {target.name}")
    code_region = next(r for r in target.regions if r.executable)
    programs, phases, weights, inputs, outputs, checkpoints = [], [], [], [], [], []
    for op in module.body.block.ops:
        if isinstance(op, tasm.ProgramOp):
            code = encode_program(op)
            if len(code) > target.code_reserve_bytes:
                raise DiagnosticException(
                    f"codegen: program @{op.sym_name.data} needs {len(code)} code bytes, "
                    f"{target.code_reserve_bytes} are reserved"
                )
            programs.append(Program(op.first.value.data, op.count.value.data, code_region.start, code))
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
            vals = initializer_values(op.init, op.tensor)
            weights.append(_binding(op, True, np.ascontiguousarray(vals).tobytes()))
        elif isinstance(op, tasm.StreamInOp):
            inputs.append((op.index.value.data, _binding(op, True)))
        elif isinstance(op, tasm.StreamOutOp):
            outputs.append((op.index.value.data, _binding(op, False)))
        elif isinstance(op, tasm.CheckpointDefOp):
            checkpoints.append(
                Checkpoint(
                    op.index.value.data,
                    op.sym_name.data,
                    op.op.value.data,
                    _binding(op, False),
                    op.aspect.data if op.aspect else "value",
                )
            )
    metrics = {"programs": len(programs), "phases": len(phases)}
    mem = module.attributes.get("tasm.memory")
    if isinstance(mem, builtin.DictionaryAttr):
        metrics.update({k: v.value.data for k, v in mem.data.items() if isinstance(v, builtin.IntegerAttr)})
    return Package(
        compiler_version=ipu.__version__,
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
        metrics=metrics,
    )


def disassemble(pkg: Package) -> str:
    """Readable tasm for a package: programs and phase tables parse back as tasm ops;
    bindings, whose layouts the package does not keep, are listed as comments."""
    lines = [
        f"// package: target={pkg.target} tiles={pkg.tiles} compiler={pkg.compiler_version} schema={pkg.schema_version}"
    ]
    lines.append(f'builtin.module attributes {{tasm.target = "{pkg.target}"}} {{')
    names = {isa.DType.F16: "f16", isa.DType.F32: "f32"}
    for i, p in enumerate(pkg.programs):
        lines.append(f"  tasm.program @p{i} tiles({p.first_tile}, {p.tile_count}) {{")
        w = np.frombuffer(p.code, "<u4").reshape(-1, isa.INSTRUCTION_WORDS)
        depth = 0
        for ins in w:
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
                lines.append(
                    f'{pad}tasm.call "{kname}" out({int(ins[3])}) in({arr}) {{{params}}} : '
                    f"{names[isa.DType(int(ins[2]) & 0xFF)]} -> {names[isa.DType(int(ins[2]) >> 8)]}"
                )
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
        lines.append("  }")
    for ph in pkg.phases:
        t = ph.transfers.astype(np.int32)
        body = "[" + ", ".join("[" + ", ".join(str(int(x)) for x in r) + "]" for r in t) + "]" if len(t) else ""
        lines.append(
            f'  tasm.phase {ph.index} lower_bound {ph.lower_bound} horizon {ph.horizon} scheduler "{ph.scheduler}" '
            f"transfers = dense<{body}> : tensor<{len(t)}x{t.shape[1] if t.ndim == 2 else 14}xi32>"
        )
    for kind, bs in (("weight", pkg.weights), ("input", pkg.inputs), ("output", pkg.outputs)):
        for b in bs:
            lines.append(f'  // {kind} "{b.name}" {names[b.dtype]} {list(b.shape)} slice_families={len(b.slices)}')
    for c in pkg.checkpoints:
        lines.append(f'  // checkpoint {c.index} "{c.name}" op {c.operation} slice_families={len(c.binding.slices)}')
    lines.append("}")
    return "\n".join(lines) + "\n"
