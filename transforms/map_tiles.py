"""`map-tiles`: place plan shards on tiles as `tilemap` IR, recording the tile mapping.

Every plan value becomes a per-tile buffer; every plan op becomes kernel runs over its tile
group, and every layout conversion a `tilemap.move` whose transfer families come from
`layout.conversion_transfers`. Host inputs, outputs, weights and checkpoints keep their
logical layouts so codegen can bind them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DictionaryAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
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


def _move(
    src: SSAValue,
    dst_t: tilemap.BufferType,
    src_l: Layout,
    dst_l: Layout,
    reason: str,
    perm: tuple[int, ...] | None = None,
    offset: tuple[int, ...] | None = None,
) -> tilemap.MoveOp:
    es = src.type.esize
    table = conversion_transfers(src_l, dst_l, es, es, perm, offset)
    # an exchange writes only real elements: a destination with padding (or a staging buffer
    # with partial slots) is zeroed first, so padding never carries stale bits into kernels
    zero = dst_l.has_padding or src_l.partial >= 0
    return tilemap.MoveOp.create(
        operands=[src],
        result_types=[dst_t],
        attributes={"transfers": tilemap.table_attr(table), "reason": StringAttr(reason)}
        | ({"zero_fill": builtin.UnitAttr()} if zero else {}),
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
        """Sample the value of `op`'s graph operation, if it has one."""
        value = plan.graph_value_of(op)
        if value is not None:
            self.emit_checkpoint(buf, value, value, t.tensor, t.layout_attr)

    def emit_checkpoint(
        self, buf: SSAValue, name: str, value: str, tensor: TensorType, layout: plan.LayoutAttr, aspect: str = ""
    ) -> None:
        attrs = {
            "sym_name": StringAttr(name),
            "index": IntegerAttr(self.checkpoints, 64),
            "value": StringAttr(value),
            "tensor": tensor,
            "layout": layout,
        }
        if aspect:
            attrs["aspect"] = StringAttr(aspect)
        self.emit(tilemap.CheckpointOp.create(operands=[buf], attributes=attrs))
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
    f.attributes[tilemap.MAPPING_ATTR] = f.attributes.pop(tilemap.PLAN_MAPPING_ATTR, None) or tilemap.MappingAttr(1, 1)
    return {"moves": mp.moves, "transfer_families": mp.families, "checkpoints": mp.checkpoints}


def _map_repeat(mp: _Mapper, op: plan.RepeatOp) -> None:
    """tilemap.repeat over the carried buffers; the body is mapped in place, once."""
    outer = mp.block
    body = Block(arg_types=[buffer_type(a.type) for a in op.body.block.args])
    for pa, ba in zip(op.body.block.args, body.args, strict=True):
        ba.name_hint = pa.name_hint
        mp.env[pa] = ba
    mp.block = body
    for inner in op.body.block.ops:
        if isinstance(inner, plan.YieldOp):
            body.add_op(tilemap.YieldOp.create(operands=[mp.env[v] for v in inner.values]))
        else:
            _map_op(mp, inner)
    mp.block = outer
    r = tilemap.RepeatOp(op.count.value.data, [mp.env[v] for v in op.inits], Region(body))
    mp.emit(r)
    for pv, tv in zip(op.results, r.results, strict=True):
        tv.name_hint = pv.name_hint
        mp.env[pv] = tv
    mp.checkpoint(op, r.results[0], op.results[0].type)


def _map_op(mp: _Mapper, op: Operation) -> None:
    if isinstance(op, plan.RepeatOp):
        _map_repeat(mp, op)
        return
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
    elif isinstance(op, plan.ReshapeOp | plan.CastOp):
        r = mp.emit(_run("copy", ins, out_t, elements=lay.block_elements), hint)
    elif isinstance(op, plan.RowwiseOp):
        r = mp.emit(_rowwise(op, ins, out_t), hint)
    elif isinstance(op, plan.SplitHeadsOp):
        a_l: Layout = op.input.type.layout
        view = plan.heads_view(a_l, lay.shape[2])
        r = mp.emit(_move(ins[0], out_t, view, lay, "split_heads", perm=(1, 0, 2)), hint)
        mp.moves += 1
    elif isinstance(op, plan.MergeHeadsOp):
        a_l = op.input.type.layout
        view = plan.heads_view(lay, a_l.shape[2])
        r = mp.emit(_move(ins[0], out_t, a_l, view, "merge_heads", perm=(1, 0, 2)), hint)
        mp.moves += 1
    elif isinstance(op, plan.AttentionOp):
        r = _attention(mp, op, ins, out_t)
    elif isinstance(op, plan.SerialGemmOp):
        r = _serial_gemm(mp, op, ins, out_t)
    elif isinstance(op, plan.AttentionCombineOp):
        src_l = op.input.type.layout
        full = Layout(
            src_l.shape, src_l.grid, (src_l.split[0], src_l.split[1] + (src_l.partial,), ()), -1, src_l.first_tile
        )
        stage = tilemap.BufferType((src_l.partials, *full.block), builtin.f32, lay.first_tile, lay.tiles, "standard")
        s = mp.emit(_move(ins[0], stage, src_l, full, "attention_combine"), f"{hint}_stage")
        mp.moves += 1
        r = mp.emit(_run("attention_combine", [s], out_t, parts=src_l.partials, qr=full.block[1], d=lay.shape[2]), hint)
    else:
        raise DiagnosticException(f"map-tiles: no tile mapping for {op.name}")
    assert r is not None
    mp.env[res] = r
    if not isinstance(op, plan.AttentionOp):
        mp.checkpoint(op, r, rt)


ROW_KERNELS = {"softmax": "softmax_rows", "layer_norm": "layer_norm_rows", "rms_norm": "rms_norm_rows"}
REDUCE_CODES = {"sum": 1, "max": 2, "mean": 3}


def _rowwise(op: plan.RowwiseOp, ins: list[SSAValue], out_t: tilemap.BufferType) -> tilemap.RunOp:
    a: Layout = op.input.type.layout
    rows, cols, valid = math.prod(a.block[:-1]), a.block[-1], a.shape[-1]
    k = op.kind.data
    if k in REDUCE_CODES:
        return _run("reduce_rows", ins, out_t, rows=rows, cols=cols, valid=valid, kind=REDUCE_CODES[k])
    if k == "softmax":
        return _run("softmax_rows", ins, out_t, rows=rows, cols=cols, valid=valid)
    eps = float_bits(op.epsilon.value.data if op.epsilon else 1e-5)
    return _run(ROW_KERNELS[k], ins, out_t, rows=rows, cols=cols, valid=valid, eps_bits=eps)


def float_bits(x: float) -> int:
    return int(np.array(x, np.float32).view(np.uint32))


def _layout_attr(lay: Layout, memory: str = "standard") -> plan.LayoutAttr:
    return plan.LayoutAttr(lay.grid, lay.split, lay.partial, lay.first_tile, lay.align, memory)


def attention_offsets(q: Layout, kv: Layout | None, sk: int) -> np.ndarray:
    """Per tile (first query row, first key, key end) for the attention kernels, as f32 [tiles, 4]."""
    c = q.coords()
    qr = q.block_size(1)
    out = np.zeros((q.tiles, 4), np.float32)
    out[:, 0] = c[:, 2] * qr
    if kv is None:  # streamed: keys arrive in windows, all keys count
        out[:, 2] = sk
    else:
        kr = kv.block_size(1)
        out[:, 1] = c[:, 3] * kr
        out[:, 2] = np.minimum(sk, (c[:, 3] + 1) * kr)
    return out


def _attention(mp: _Mapper, op: plan.AttentionOp, ins: list[SSAValue], out_t: tilemap.BufferType) -> SSAValue:
    q_l: Layout = op.q.type.layout
    k_l: Layout = op.k.type.layout
    st_l: Layout = op.result.type.layout
    hq, s, d = q_l.shape
    hkv, sk, _ = k_l.shape
    qr = st_l.block[1]
    grid_t = (st_l.first_tile, st_l.tiles)
    materialized = op.form.data == "materialized"
    name = op.result.name_hint or "attention"
    off = attention_offsets(q_l, k_l if materialized else None, sk)
    off_lay = Layout((st_l.tiles, 4), st_l.grid, (tuple(range(len(st_l.grid))), ()), -1, st_l.first_tile)
    off_tt = TensorType(builtin.f32, [st_l.tiles, 4])
    offsets = mp.emit(
        tilemap.WeightOp.create(
            result_types=[tilemap.BufferType(off_lay.block, builtin.f32, *grid_t, "standard")],
            attributes={
                "sym_name": StringAttr(f"{name}_offsets"),
                "init": DenseIntOrFPElementsAttr.from_list(off_tt, off.ravel().tolist()),
                "tensor": off_tt,
                "layout": plan.LayoutAttr(off_lay.grid, off_lay.split, -1, off_lay.first_tile),
            },
        ),
        f"{name}_offsets",
    )
    state = mp.emit(_run("attention_init", [], out_t, qr=qr, d=d), f"{name}_init")
    common = {"qr": qr, "d": d, "causal": int(op.causal is not None), "scale_bits": float_bits(op.scale.value.data)}
    if materialized:
        kr = k_l.block_size(1)
        sc_lay = Layout((hq, s, sk), st_l.grid, ((0, 1), (2,), (3,)), -1, st_l.first_tile, (1, qr, kr))
        if sc_lay.block != (1, qr, kr):
            raise DiagnosticException(f"map-tiles: score block {sc_lay.block} does not match [1, {qr}, {kr}]")
        scratch = mp.emit(
            tilemap.AllocOp.create(result_types=[tilemap.BufferType(sc_lay.block, builtin.f32, *grid_t, "standard")]),
            f"{name}_scores",
        )
        upd = _run("attention_update", [*ins, offsets, scratch, state], out_t, kr=kr, k_base=0, **common)
        upd.attributes["inplace"] = IntegerAttr(5, 64)
        state = mp.emit(upd, name)
        value = plan.graph_value_of(op)
        if value is not None:
            mp.emit_checkpoint(
                scratch, f"{name}_scores", value, TensorType(builtin.f32, [hq, s, sk]), _layout_attr(sc_lay), "scores"
            )
        return state
    kb = op.key_block.value.data
    scratch = mp.emit(
        tilemap.AllocOp.create(result_types=[tilemap.BufferType((1, qr, kb), builtin.f32, *grid_t, "standard")]),
        f"{name}_scores",
    )
    for t0 in range(0, sk, kb):
        wk = min(kb, sk - t0)
        win = Layout((hkv, wk, d), st_l.grid, ((0,), (), ()), -1, st_l.first_tile)
        wt = tilemap.BufferType(win.block, op.k.type.tensor.element_type, *grid_t, "interleaved")
        kw = mp.emit(_move(ins[1], wt, k_l, win, "attention window", offset=(0, t0, 0)), f"{name}_k{t0}")
        vw = mp.emit(_move(ins[2], wt, op.v.type.layout, win, "attention window", offset=(0, t0, 0)), f"{name}_v{t0}")
        mp.moves += 2
        upd = _run("attention_update", [ins[0], kw, vw, offsets, scratch, state], out_t, kr=wk, k_base=t0, **common)
        upd.attributes["inplace"] = IntegerAttr(5, 64)
        state = mp.emit(upd, name)
    # the scratch keeps the last window's scores: check them (aspect "scores@<first key>")
    t_last = (sk - 1) // kb * kb
    value = plan.graph_value_of(op)
    if value is not None and sk - t_last == kb and kb % 2 == 0:
        sc_lay = Layout((hq, s, kb), st_l.grid, ((0, 1), (2,), ()), -1, st_l.first_tile, (1, qr, 1))
        mp.emit_checkpoint(
            scratch,
            f"{name}_scores",
            value,
            TensorType(builtin.f32, [hq, s, kb]),
            _layout_attr(sc_lay),
            f"scores@{t_last}",
        )
    return state


def _serial_gemm(mp: _Mapper, op: plan.SerialGemmOp, ins: list[SSAValue], out_t: tilemap.BufferType) -> SSAValue:
    """Zero an fp32 accumulator, then per contraction step exchange the two windows and accumulate."""
    a_l: Layout = op.lhs.type.layout
    b_l: Layout = op.rhs.type.layout
    r_l: Layout = op.result.type.layout
    (m, k), n = a_l.shape, b_l.shape[1]
    bm, bn = r_l.block
    steps = op.k_steps.value.data
    kc = math.ceil(k / steps)
    kc += kc % 2
    name = op.result.name_hint or "gemm"
    grid_t = (r_l.first_tile, r_l.tiles)
    el = op.lhs.type.tensor.element_type
    acc_t = tilemap.BufferType((bm, bn), builtin.f32, *grid_t, "interleaved")
    acc = mp.emit(_run("zero", [], acc_t, elements=bm * bn), f"{name}_acc")
    for k0 in range(0, k, kc):
        kw = min(kc, k - k0)
        aw_l = Layout((m, kw), r_l.grid, ((0,), ()), -1, r_l.first_tile)
        bw_l = Layout((kw, n), r_l.grid, ((), (1,)), -1, r_l.first_tile, (aw_l.block[1], 1))
        aw = mp.emit(
            _move(
                ins[0],
                tilemap.BufferType(aw_l.block, el, *grid_t, "standard"),
                a_l,
                aw_l,
                "gemm window",
                offset=(0, k0),
            ),
            f"{name}_a{k0}",
        )
        bw = mp.emit(
            _move(
                ins[1],
                tilemap.BufferType(bw_l.block, el, *grid_t, "interleaved"),
                b_l,
                bw_l,
                "gemm window",
                offset=(k0, 0),
            ),
            f"{name}_b{k0}",
        )
        mp.moves += 2
        upd = _run("amp_matmul_acc", [aw, bw, acc], acc_t, m=bm, k=aw_l.block[1], n=bn)
        upd.attributes["inplace"] = IntegerAttr(2, 64)
        acc = mp.emit(upd, f"{name}_acc")
    return mp.emit(_run("copy", [acc], out_t, elements=bm * bn), name)


@dataclass(frozen=True)
class MapTilesPass(ModulePass):
    """Lower `plan` to `tilemap`; the function keeps the tile mapping select-finalist screened
    for it (`plan.tile_mapping`), else the identity."""

    name = "map-tiles"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and "ipu.inputs" in f.attributes and tilemap.MAPPING_ATTR not in f.attributes:
                figures = map_function(f)
                log_event("mapped tiles", function=f.sym_name.data, mapping=str(tilemap.mapping_of(f)), **figures)


__all__ = ["MapTilesPass", "buffer_type"]
