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
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import exchange, tasm, tilemap
from ipu.runtime.isa import KERNELS
from ipu.target import Target
from ipu.transforms.exchange_schedule import D_OFF, S_OFF
from ipu.transforms.log import log_event
from ipu.transforms.place_storage import slot
from ipu.transforms.select_finalist import refined_cycles
from ipu.transforms.target_of import module_target

# the kernel ABI (parameter names in encoding order) is the ISA's
KERNEL_PARAMS = {name: params for name, (_, params) in KERNELS.items()}


def _i(v: int) -> IntegerAttr:
    return IntegerAttr(v, 64)


def _run_props(kernel: str, out: int, ins: list[int], params: dict[str, int], in_t, out_t) -> dict:
    return {
        "kernel": StringAttr(kernel),
        "out": _i(out),
        "ins": DenseArrayBase.from_list(i64, ins),
        "params": DictionaryAttr({k: _i(params[k]) for k in KERNEL_PARAMS[kernel]}),
        "in_type": in_t,
        "out_type": out_t,
    }


class _Emitter:
    """Appends to every program's current block; loops nest a block per program."""

    def __init__(self, segments: list[tuple[int, int]]):
        self.segments = segments
        self.blocks = [Block() for _ in segments]
        self.roots = list(self.blocks)
        self.defs: list[Operation] = []
        self.phases = 0
        self.calls = 0

    def control(self, make) -> None:
        for b in self.blocks:
            b.add_op(make())

    def call(self, lo: int, hi: int, props: dict) -> None:
        covered = 0
        for (s0, s1), b in zip(self.segments, self.blocks, strict=True):
            if lo <= s0 and s1 <= hi:
                b.add_op(tasm.KernelCallOp.create(properties=dict(props)))
                covered += s1 - s0
        if covered != hi - lo:  # a group that is no union of programs would silently skip tiles
            raise DiagnosticException(f"lower-to-tasm: tiles [{lo}, {hi}) of a call are not a union of programs")
        self.calls += 1

    def copy(self, src: SSAValue, dst_slot: int) -> None:
        """Copy a buffer into another slot of its group (carried values of loops)."""
        if slot(src).address.data == dst_slot:
            return
        t: tilemap.BufferType = src.type
        n = int(np.prod(t.shape))
        props = _run_props("copy", dst_slot, [slot(src).address.data], {"elements": n}, t.element_type, t.element_type)
        self.call(t.first.data, t.first.data + t.count.data, props)

    def parallel_copy(self, values: list[SSAValue], dsts: list[int]) -> None:
        """Copy every value into its slot as if all were read first (a loop's carried values):
        a copy waits while its destination is still to be read by another; a cycle (a swap)
        would need a temporary buffer, and is refused rather than computed wrong."""
        todo = [(v, d) for v, d in zip(values, dsts, strict=True) if slot(v).address.data != d]
        while todo:
            ready = [(v, d) for v, d in todo if all(slot(w).address.data != d for w, e in todo if e != d)]
            if not ready:
                raise DiagnosticException(
                    "lower-to-tasm: a repeat passes its carried values around in a cycle (e.g. yields them "
                    "swapped); that needs a temporary buffer, which is not supported yet"
                )
            for v, d in ready[:1]:
                self.copy(v, d)
            todo = [(v, d) for v, d in todo if d != ready[0][1]]

    def emit(self, ops: list[Operation]) -> None:
        for op in ops:
            self.emit_op(op)

    def emit_op(self, op: Operation) -> None:
        if isinstance(op, tilemap.HostWriteOp):
            idx = op.index.value.data
            self.control(lambda: tasm.HostInOp.create(properties={"index": _i(idx)}))
            self.defs.append(_bound(tasm.StreamInOp, op, {"index": _i(idx)}, slot(op.result).address.data))
        elif isinstance(op, tilemap.WeightOp):
            self.defs.append(_bound(tasm.WeightOp, op, {"init": op.init}, slot(op.result).address.data))
        elif isinstance(op, tilemap.RunOp):
            t = op.result.type
            kernel = op.kernel.data
            if kernel not in KERNEL_PARAMS:
                raise DiagnosticException(f"lower-to-tasm: unknown kernel '{kernel}'")
            ins = [v for j, v in enumerate(op.inputs) if j != op.inplace_operand()]
            params = {k: op.param(k) for k in KERNEL_PARAMS[kernel]}
            in_t = ins[0].type.element_type if ins else t.element_type
            props = _run_props(
                kernel, slot(op.result).address.data, [slot(v).address.data for v in ins], params, in_t, t.element_type
            )
            self.call(t.first.data, t.first.data + t.count.data, props)
        elif isinstance(op, exchange.PhaseOp):
            idx = op.index.value.data
            if op.zero_fill is not None:
                t: tilemap.BufferType = op.result.type
                n = int(np.prod(t.shape))
                props = _run_props(
                    "zero", slot(op.result).address.data, [], {"elements": n}, t.element_type, t.element_type
                )
                self.call(t.first.data, t.first.data + t.count.data, props)
            self.control(tasm.SyncOp.create)
            self.control(lambda: tasm.ExchangeOp.create(properties={"index": _i(idx)}))
            table = tilemap.table_of(op.transfers).copy()
            table[:, 1 + S_OFF] += slot(op.input).address.data
            table[:, 1 + D_OFF] += slot(op.result).address.data
            self.defs.append(
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
            self.phases += 1
        elif isinstance(op, tilemap.CheckpointOp):
            idx = op.index.value.data
            self.control(lambda: tasm.CheckpointOp.create(properties={"index": _i(idx)}))
            extra = {"index": op.index, "value": op.value} | ({"aspect": op.aspect} if op.aspect else {})
            self.defs.append(_bound(tasm.CheckpointDefOp, op, extra, slot(op.input).address.data))
        elif isinstance(op, tilemap.HostReadOp):
            idx = op.index.value.data
            self.control(lambda: tasm.HostOutOp.create(properties={"index": _i(idx)}))
            self.defs.append(_bound(tasm.StreamOutOp, op, {"index": _i(idx)}, slot(op.input).address.data))
        elif isinstance(op, tilemap.RepeatOp):
            carried = [slot(a).address.data for a in op.body.block.args]
            self.parallel_copy(list(op.inits), carried)
            outer = self.blocks
            loops = [
                tasm.LoopOp.create(properties={"count": _i(op.count.value.data)}, regions=[Region(Block())])
                for _ in outer
            ]
            for b, lp in zip(outer, loops, strict=True):
                b.add_op(lp)
            self.blocks = [lp.body.block for lp in loops]
            for inner in op.body.block.ops:
                if isinstance(inner, tilemap.YieldOp):
                    self.parallel_copy(list(inner.values), carried)
                else:
                    self.emit_op(inner)
            self.blocks = outer
        elif isinstance(op, func.ReturnOp | tilemap.AllocOp):
            return
        else:
            raise DiagnosticException(f"lower-to-tasm: unexpected operation {op.name}")


def lower_function(f: func.FuncOp, target: Target) -> tuple[list[Operation], dict[str, int]]:
    bounds = {0, target.tiles}
    for op in f.body.walk():
        # every group that runs code (kernels, and zero fills before exchanges) starts a program
        if isinstance(op, tilemap.RunOp) or (isinstance(op, exchange.PhaseOp) and op.zero_fill is not None):
            t = op.result.type
            bounds |= {t.first.data, t.first.data + t.count.data}
        elif isinstance(op, tilemap.RepeatOp):  # groups that copy carried values (`_Emitter.copy`)
            for a in op.body.block.args:
                t = a.type
                bounds |= {t.first.data, t.first.data + t.count.data}
    edges = sorted(b for b in bounds if 0 <= b <= target.tiles)
    em = _Emitter(list(zip(edges[:-1], edges[1:], strict=True)))
    em.emit(list(f.body.block.ops))
    programs: list[Operation] = []
    for n, ((s0, s1), b) in enumerate(zip(em.segments, em.roots, strict=True)):
        programs.append(
            tasm.ProgramOp.create(
                properties={"sym_name": StringAttr(f"p{n}"), "first": _i(s0), "count": _i(s1 - s0)},
                regions=[Region(b)],
            )
        )
    return programs + em.defs, {"programs": len(programs), "phases": em.phases, "calls": em.calls}


def _bound(cls: type, op: Operation, extra: dict, address: int) -> Operation:
    props = {"sym_name": op.sym_name, "tensor": op.tensor, "layout": op.layout, "address": _i(address)}
    props.update(extra)
    return cls.create(properties=props)


@dataclass(frozen=True)
class LowerToTasmPass(ModulePass):
    """Replace the placed exchange-level function by tile programs and tables."""

    name = "lower-to-tasm"
    target: str | None = None  # unset: the module's #ipu.target

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        t = module_target(op, self.target, self.name)
        funcs = [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]
        if funcs and not any("exchange.memory" in f.attributes for f in funcs):
            raise DiagnosticException(
                "lower-to-tasm: no placed exchange-level function (run schedule-exchange and place-storage first)"
            )
        for f in list(op.body.block.ops):
            if isinstance(f, func.FuncOp) and "exchange.memory" in f.attributes:
                estimate, exch = refined_cycles(f, t)
                new_ops, figures = lower_function(f, t)
                for n in new_ops:
                    op.body.block.insert_op_before(n, f)
                op.body.block.erase_op(f)
                memory = dict(f.attributes["exchange.memory"].data)  # type: ignore[union-attr]
                memory["estimated_cycles"] = IntegerAttr(estimate, 64)
                memory["estimated_exchange_cycles"] = IntegerAttr(exch, 64)
                op.attributes["tasm.memory"] = DictionaryAttr(memory)
                m = f.attributes.get(tilemap.MAPPING_ATTR)
                if isinstance(m, tilemap.MappingAttr) and not m.mapping.identity:
                    op.attributes["tasm.tile_mapping"] = m
                log_event("lowered to tile programs", target=t.name, estimated_cycles=estimate, **figures)
