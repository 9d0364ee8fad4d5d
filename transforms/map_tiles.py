"""`map-tiles`: place plan shards on physical tiles (identity mapping) as `tilemap` IR.

Every plan value becomes a per-tile buffer; every plan op becomes kernel runs over its tile
group, and every layout conversion a `tilemap.move` whose transfer families come from
`layout.conversion_transfers`. Host inputs, outputs, weights and checkpoints keep their
logical layouts so codegen can bind them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import plan, tilemap
from ipu.dialects.layout import Layout, as_2d, conversion_transfers
from ipu.transforms.log import log_event


def buffer_type(t: plan.PlanTensorType) -> tilemap.BufferType:
    lay = t.layout
    return tilemap.BufferType(lay.block, t.tensor.element_type, lay.first_tile, lay.tiles, t.layout_attr.memory.data)


def _i64(**kw: int) -> DictionaryAttr:
    return DictionaryAttr({k: IntegerAttr(v, 64) for k, v in kw.items()})


def _run(kernel: str, inputs: list[SSAValue], out: tilemap.BufferType, **params: int) -> tilemap.RunOp:
    return tilemap.RunOp.create(
        operands=inputs,
        result_types=[out],
        attributes={"kernel": StringAttr(kernel), "params": _i64(**params)},
    )


def _move(src: SSAValue, dst_t: tilemap.BufferType, src_l: Layout, dst_l: Layout, reason: str) -> tilemap.MoveOp:
    es = src.type.esize
    table = conversion_transfers(src_l, dst_l, es, es)
    return tilemap.MoveOp.create(
        operands=[src],
        result_types=[dst_t],
        attributes={"transfers": tilemap.table_attr(table), "reason": StringAttr(reason)},
    )


@dataclass
class _Mapper:
    block: Block
    env: dict[SSAValue, SSAValue]
    checkpoints: int = 0
    moves: int = 0
    families: int = 0

    def emit(self, op: Operation, hint: str | None = None) -> SSAValue | None:
        self.block.add_op(op)
        if op.results and hint:
            op.results[0].name_hint = hint
        return op.results[0] if op.results else None

    def checkpoint(self, op: Operation, buf: SSAValue, t: plan.PlanTensorType) -> None:
        idx = plan.op_index_of(op)
        if idx is None:
            return
        self.emit(
            tilemap.CheckpointOp.create(
                operands=[buf],
                attributes={
                    "sym_name": StringAttr(op.results[0].name_hint or f"op{idx}"),
                    "index": IntegerAttr(self.checkpoints, 64),
                    "op": IntegerAttr(idx, 64),
                    "tensor": t.tensor,
                    "layout": t.layout_attr,
                },
            )
        )
        self.checkpoints += 1


def map_function(f: func.FuncOp) -> dict[str, int]:
    old = f.body.block
    new = Block()
    mp = _Mapper(new, {})
    names = [s.data for s in f.attributes["ipu.inputs"].data]  # type: ignore[union-attr]
    for i, a in enumerate(old.args):
        t: plan.PlanTensorType = a.type
        mp.env[a] = mp.emit(
            tilemap.HostWriteOp.create(
                result_types=[buffer_type(t)],
                attributes={
                    "sym_name": StringAttr(names[i]),
                    "index": IntegerAttr(i, 64),
                    "tensor": t.tensor,
                    "layout": t.layout_attr,
                },
            ),
            a.name_hint,
        )
    for op in list(old.ops):
        if isinstance(op, func.ReturnOp):
            outs = [s.data for s in f.attributes["ipu.outputs"].data]  # type: ignore[union-attr]
            for i, v in enumerate(op.arguments):
                t = v.type
                mp.emit(
                    tilemap.HostReadOp.create(
                        operands=[mp.env[v]],
                        attributes={
                            "sym_name": StringAttr(outs[i]),
                            "index": IntegerAttr(i, 64),
                            "tensor": t.tensor,
                            "layout": t.layout_attr,
                        },
                    )
                )
            mp.emit(func.ReturnOp())
            continue
        _map_op(mp, op)
    f.body.detach_block(old)
    old.erase(safe_erase=False)
    f.body.add_block(new)
    f.function_type = builtin.FunctionType.from_lists([], [])
    f.attributes["tilemap.mapping"] = StringAttr("identity")
    return {"moves": mp.moves, "transfer_families": mp.families, "checkpoints": mp.checkpoints}


def _map_op(mp: _Mapper, op: Operation) -> None:
    res = op.results[0]
    rt: plan.PlanTensorType = res.type
    out_t = buffer_type(rt)
    hint = res.name_hint
    ins = [mp.env[v] for v in op.operands]
    lay = rt.layout
    if isinstance(op, plan.ParameterOp):
        r = mp.emit(
            tilemap.WeightOp.create(
                result_types=[out_t],
                attributes={
                    "sym_name": op.sym_name,
                    "init": op.init,
                    "tensor": rt.tensor,
                    "layout": rt.layout_attr,
                },
            ),
            hint,
        )
    elif isinstance(op, plan.GemmOp):
        a_l = op.lhs.type.layout
        b_l = op.rhs.type.layout
        r = mp.emit(_run("amp_matmul", ins, out_t, m=a_l.block[0], k=a_l.block[1], n=b_l.block[1]), hint)
    elif isinstance(op, plan.ReduceOp):
        src_l: Layout = op.input.type.layout
        stage = tilemap.BufferType((src_l.partials, *lay.block), builtin.f32, lay.first_tile, lay.tiles, "standard")
        s = mp.emit(_move(ins[0], stage, src_l, lay, "reduce"), f"{hint}_stage")
        mp.moves += 1
        mp.families += len(tilemap.table_of(s.owner.transfers))
        r = mp.emit(_run("reduce_sum", [s], out_t, parts=src_l.partials, elements=lay.block_elements), hint)
    elif isinstance(op, plan.RearrangeOp):
        r = mp.emit(
            _move(ins[0], out_t, op.input.type.layout, lay, op.reason.data if op.reason else "rearrange"),
            hint,
        )
        mp.moves += 1
        mp.families += len(tilemap.table_of(r.owner.transfers))
    elif isinstance(op, plan.UnaryOp):
        r = mp.emit(_run(op.kind.data, ins, out_t, elements=lay.block_elements), hint)
    elif isinstance(op, plan.BinaryOp):
        m, n = as_2d(lay.block)
        b_l: Layout = op.rhs.type.layout
        if b_l.shape == lay.shape:
            br, bc = m, n
        else:
            br, bc = 1, n
        r = mp.emit(_run(op.kind.data, ins, out_t, m=m, n=n, b_rows=br, b_cols=bc), hint)
    elif isinstance(op, plan.TransposeOp):
        m, n = op.input.type.layout.block
        r = mp.emit(_run("transpose", ins, out_t, m=m, n=n), hint)
    elif isinstance(op, plan.ReshapeOp):
        r = mp.emit(_run("copy", ins, out_t, elements=lay.block_elements), hint)
    else:
        raise DiagnosticException(f"map-tiles: no tile mapping for {op.name}")
    assert r is not None
    mp.env[res] = r
    mp.checkpoint(op, r, rt)


@dataclass(frozen=True)
class MapTilesPass(ModulePass):
    """Lower `plan` to `tilemap` with the identity logical-to-physical tile mapping."""

    name = "map-tiles"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and "ipu.inputs" in f.attributes and "tilemap.mapping" not in f.attributes:
                figures = map_function(f)
                log_event("mapped tiles", function=f.sym_name.data, mapping="identity", **figures)


__all__ = ["MapTilesPass", "TensorType"]
