"""`lower-to-tasm`: emit tile programs shared by tiles that run identical code.

The tile range is cut at every kernel group boundary; each segment gets one `tasm.program`.
All programs carry the same control skeleton (host streams, syncs, exchanges, checkpoints)
in the same order, which is what makes the machine bulk-synchronous.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import exchange, tasm, tilemap
from ipu.runtime.isa import KERNELS
from ipu.target import Target, load_target
from ipu.transforms.exchange_schedule import D_OFF, S_OFF
from ipu.transforms.log import log_event
from ipu.transforms.place_storage import slot

# the kernel ABI (parameter names in encoding order) is the ISA's
KERNEL_PARAMS = {name: params for name, (_, params) in KERNELS.items()}


def _i(v: int) -> IntegerAttr:
    return IntegerAttr(v, 64)


def lower_function(f: func.FuncOp, target: Target) -> tuple[list[Operation], dict[str, int]]:
    ops = list(f.body.block.ops)
    bounds = {0, target.tiles}
    for op in ops:
        if isinstance(op, tilemap.RunOp):
            t = op.result.type
            bounds |= {t.first.data, t.first.data + t.count.data}
    edges = sorted(b for b in bounds if 0 <= b <= target.tiles)
    segments = list(zip(edges[:-1], edges[1:], strict=True))
    bodies = [Block() for _ in segments]
    defs: list[Operation] = []

    def control(make) -> None:
        for b in bodies:
            b.add_op(make())

    phases = 0
    calls = 0
    for op in ops:
        if isinstance(op, tilemap.HostWriteOp):
            idx = op.index.value.data
            control(lambda idx=idx: tasm.HostInOp.create(properties={"index": _i(idx)}))
            defs.append(_bound(tasm.StreamInOp, op, {"index": _i(idx)}, slot(op.result).address.data))
        elif isinstance(op, tilemap.WeightOp):
            defs.append(_bound(tasm.WeightOp, op, {"init": op.init}, slot(op.result).address.data))
        elif isinstance(op, tilemap.RunOp):
            t = op.result.type
            lo, hi = t.first.data, t.first.data + t.count.data
            kernel = op.kernel.data
            if kernel not in KERNEL_PARAMS:
                raise DiagnosticException(f"lower-to-tasm: unknown kernel '{kernel}'")
            ins = [v for j, v in enumerate(op.inputs) if j != op.inplace_operand()]
            props = {
                "kernel": op.kernel,
                "out": _i(slot(op.result).address.data),
                "ins": DenseArrayBase.from_list(i64, [slot(v).address.data for v in ins]),
                "params": DictionaryAttr({k: _i(op.param(k)) for k in KERNEL_PARAMS[kernel]}),
                "in_type": ins[0].type.element_type if ins else t.element_type,
                "out_type": t.element_type,
            }
            for (s0, s1), b in zip(segments, bodies, strict=True):
                if lo <= s0 and s1 <= hi:
                    b.add_op(tasm.KernelCallOp.create(properties=dict(props)))
            calls += 1
        elif isinstance(op, exchange.PhaseOp):
            idx = op.index.value.data
            control(tasm.SyncOp.create)
            control(lambda idx=idx: tasm.ExchangeOp.create(properties={"index": _i(idx)}))
            table = tilemap.table_of(op.transfers).copy()
            table[:, 1 + S_OFF] += slot(op.input).address.data
            table[:, 1 + D_OFF] += slot(op.result).address.data
            defs.append(
                tasm.PhaseOp.create(
                    properties={
                        "index": _i(idx),
                        "lower_bound": op.lower_bound,
                        "horizon": op.horizon,
                        "scheduler": op.scheduler,
                        "transfers": tilemap.table_attr(table.astype(np.int64)),
                    }
                )
            )
            phases += 1
        elif isinstance(op, tilemap.CheckpointOp):
            idx = op.index.value.data
            control(lambda idx=idx: tasm.CheckpointOp.create(properties={"index": _i(idx)}))
            extra = {"index": op.index, "op": op.op} | ({"aspect": op.aspect} if op.aspect else {})
            defs.append(_bound(tasm.CheckpointDefOp, op, extra, slot(op.input).address.data))
        elif isinstance(op, tilemap.HostReadOp):
            idx = op.index.value.data
            control(lambda idx=idx: tasm.HostOutOp.create(properties={"index": _i(idx)}))
            defs.append(_bound(tasm.StreamOutOp, op, {"index": _i(idx)}, slot(op.input).address.data))
        elif isinstance(op, func.ReturnOp | tilemap.AllocOp):
            continue
        else:
            raise DiagnosticException(f"lower-to-tasm: unexpected operation {op.name}")
    programs: list[Operation] = []
    for n, ((s0, s1), b) in enumerate(zip(segments, bodies, strict=True)):
        programs.append(
            tasm.ProgramOp.create(
                properties={"sym_name": StringAttr(f"p{n}"), "first": _i(s0), "count": _i(s1 - s0)},
                regions=[Region(b)],
            )
        )
    return programs + defs, {"programs": len(programs), "phases": phases, "calls": calls}


def _bound(cls: type, op: Operation, extra: dict, address: int) -> Operation:
    props = {"sym_name": op.sym_name, "tensor": op.tensor, "layout": op.layout, "address": _i(address)}
    props.update(extra)
    return cls.create(properties=props)


@dataclass(frozen=True)
class LowerToTasmPass(ModulePass):
    """Replace the placed exchange-level function by tile programs and tables."""

    name = "lower-to-tasm"
    target: str = "mk2"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        t = load_target(self.target)
        for f in list(op.body.block.ops):
            if isinstance(f, func.FuncOp) and "exchange.memory" in f.attributes:
                new_ops, figures = lower_function(f, t)
                for n in new_ops:
                    op.body.block.insert_op_before(n, f)
                op.body.block.erase_op(f)
                op.attributes["tasm.target"] = StringAttr(t.name)
                op.attributes["tasm.memory"] = f.attributes["exchange.memory"]
                log_event("lowered to tile programs", target=t.name, **figures)
