"""A system package as IR, and back: the lowered system module.

`pod_module(pod)` writes a `.ipupod` as one module: each stage's chip program is a nested
`builtin.module @stage<k>` (the tasm its package disassembles to), and the `system.pipeline`
runs them, every value crossing chips a `system.link` with its rows (`#table.links`: which bytes
of which source tile go to which destination tile, and when each row starts), its lower bound
and its horizon; values handed on within a chip and all-reduces as in the partitioned module.
`module_pod(module)` packages such a module (`ipu-translate --to-ipuexe`): each nested module
encoded as its chip's package, the manifest read from the pipeline's ops, the link rows checked
against the bindings. The two round-trip: `--from-ipuexe | --to-ipuexe` gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.isa import DType
from ipu.abi.link_rows import link_schedule
from ipu.abi.package import Binding, PackageError
from ipu.abi.pod import Pod, PodCollective, PodStage, PodTransfer, Route, validate_pod
from ipu.codegen.ipuexe import build_package, disassemble
from ipu.context import make_context
from ipu.dialects.ipu import SYSTEM_ATTR, SystemAttr, system_attr_of
from ipu.dialects.system import (
    STAGE_ATTR,
    AllReduceOp,
    LinkOp,
    OutputOp,
    PipelineOp,
    StageOp,
    TransferOp,
    pipeline_of,
)
from ipu.ir_text import parse_text
from ipu.target.system import System, load_system

_ELEMENT = {DType.F16: builtin.f16, DType.F32: builtin.f32, DType.INT32: builtin.i32}


def _type(b: Binding) -> TensorType:
    return TensorType(_ELEMENT[b.dtype], list(b.shape))


def link_op_rows(rows: np.ndarray, system: System) -> tuple[np.ndarray, int, int]:
    """A transfer's rows with their start cycles (`LINK`'s columns), its horizon and lower bound."""
    starts, horizon, bound = link_schedule(
        rows, system.chip.rates["exchange_bytes_per_cycle"], system.lanes * system.link_bytes_per_cycle
    )
    return np.concatenate([starts[:, None], rows], axis=1), horizon, bound


def pod_module(pod: Pod) -> builtin.ModuleOp:
    """The lowered system module of `pod` (see the module docstring)."""
    system = load_system(pod.system)
    ctx = make_context()
    nested = []
    for st in pod.stages:
        m = parse_text(ctx, disassemble(st.package, system.chip), f"stage {st.index}")
        m.properties["sym_name"] = StringAttr(f"stage{st.index}")
        m.attributes[STAGE_ATTR] = IntegerAttr(st.index, 64)
        m.attributes["ipu.function"] = StringAttr(st.function)
        nested.append(m)
    model_in = list(pod.inputs)
    first: dict[str, Binding] = {}
    for name, routes in pod.inputs.items():
        r = routes[0]
        first[name] = next(b for b in pod.stages[r.stage].package.inputs if b.name == r.binding)
    block = Block(arg_types=[_type(first[n]) for n in model_in])
    for a, n in zip(block.args, model_in, strict=True):
        a.name_hint = n
    value: dict[tuple[int, str], SSAValue] = {}  # (stage, output binding) -> its pipeline value
    fed: dict[tuple[int, str], SSAValue] = {}  # (stage, input binding) -> what feeds it
    for name, routes in pod.inputs.items():
        for r in routes:
            fed[(r.stage, r.binding)] = block.args[model_in.index(name)]
    pending = list(enumerate(pod.collectives))
    reduced: dict[tuple[int, str], SSAValue] = {}  # a member's partial -> the sum left in its place
    for st in pod.stages:
        for j, c in list(pending):
            if all((r.stage, r.binding) in value for r in c.inputs):
                ar = AllReduceOp([value[(r.stage, r.binding)] for r in c.inputs], list(c.chips))
                block.add_op(ar)
                for r, res, dsts in zip(c.inputs, ar.outputs, c.outputs, strict=True):
                    reduced[(r.stage, r.binding)] = res
                    for d in dsts:
                        fed[(d.stage, d.binding)] = res
                pending.remove((j, c))
        for t in pod.transfers:
            if t.dst.stage != st.index:
                continue
            src = (t.src.stage, t.src.binding)
            v = reduced.get(src, value[src])
            if t.rows is None:
                fed[(t.dst.stage, t.dst.binding)] = v  # within its chip
                continue
            rows, horizon, bound = link_op_rows(t.rows, system)
            op = LinkOp(v, t.src_chip, t.dst_chip, rows, bound, horizon)
            op.result.name_hint = t.dst.binding
            block.add_op(op)
            fed[(t.dst.stage, t.dst.binding)] = op.result
        pkg = st.package
        ins = [fed[(st.index, b.name)] for b in pkg.inputs]
        op = StageOp(f"stage{st.index}", st.chip, ins, [_type(b) for b in pkg.outputs])
        for b, r in zip(pkg.outputs, op.outputs, strict=True):
            r.name_hint = b.name
            value[(st.index, b.name)] = r
        block.add_op(op)
    block.add_op(OutputOp([value[(r.stage, r.binding)] for r in pod.outputs.values()]))
    pipe = PipelineOp("main", pod.microbatches, Region(block))
    pipe.attributes["ipu.inputs"] = ArrayAttr([StringAttr(n) for n in model_in])
    pipe.attributes["ipu.outputs"] = ArrayAttr([StringAttr(n) for n in pod.outputs])
    module = builtin.ModuleOp([pipe, *nested])
    module.attributes[SYSTEM_ATTR] = SystemAttr(pod.system)
    if pod.compiler_version:
        module.attributes["ipu.compiler"] = StringAttr(pod.compiler_version)
    return module


def _nbytes(v: SSAValue) -> int:
    return int(np.prod(v.type.get_shape())) * v.type.element_type.bitwidth // 8  # type: ignore[attr-defined]


def _names(op, key: str) -> list[str]:
    a = op.attributes.get(key)
    return [x.data for x in a.data] if isinstance(a, ArrayAttr) else []  # type: ignore[union-attr]


def read_routes(
    pipe: PipelineOp,
    index: dict[StageOp, int],
    inputs_of: Callable[[int], list[str]],
    outputs_of: Callable[[int], list[str]],
    pod: Pod,
) -> None:
    """The pod's transfers, collectives and model inputs and outputs, read from the pipeline's
    ops (stage i's input and output binding names from `inputs_of(i)` / `outputs_of(i)`): a
    `system.transfer` is a transfer whose rows the caller adds, a `system.link` one with its rows,
    a stage reading another stage's value on its own chip (a tensor-parallel segment's carried
    values) a transfer from the chip to itself (a hand-off in the chip's memory). An all-reduce
    leaves its sum in place of each member's partial: a transfer of its result is a transfer from
    the partial's binding."""
    args = list(pipe.body.block.args)
    model_in = _names(pipe, "ipu.inputs") or [a.name_hint or f"arg{i}" for i, a in enumerate(args)]
    model_out = _names(pipe, "ipu.outputs")

    def produced(v: SSAValue) -> Route:
        op = v.owner
        if isinstance(op, AllReduceOp):  # the sum, left in place of the member's partial
            return produced(op.inputs[list(op.outputs).index(v)])
        if not isinstance(op, StageOp):
            raise DiagnosticException("system: a transfer, link, all-reduce or output reads no stage's value")
        s = index[op]
        return Route(s, outputs_of(s)[list(op.outputs).index(v)])

    fed: dict[AllReduceOp, list[list[Route]]] = {  # every all-reduce, in order, even one read only by transfers
        op: [[] for _ in op.outputs] for op in pipe.body.block.ops if isinstance(op, AllReduceOp)
    }
    for st, i in index.items():
        ins = inputs_of(i)
        for j, v in enumerate(st.inputs):
            dst, op = Route(i, ins[j]), v.owner
            if v in args:
                pod.inputs.setdefault(model_in[args.index(v)], []).append(dst)
            elif isinstance(op, TransferOp | LinkOp):
                rows = np.asarray(op.rows.table)[:, 1:].copy() if isinstance(op, LinkOp) else None
                pod.transfers.append(
                    PodTransfer(produced(op.input), dst, op.src.value.data, op.dst.value.data, _nbytes(v), rows)
                )
            elif isinstance(op, AllReduceOp):
                fed[op][list(op.outputs).index(v)].append(dst)
            elif isinstance(op, StageOp):
                c = st.chip.value.data
                pod.transfers.append(PodTransfer(produced(v), dst, c, c, _nbytes(v)))
            else:
                raise DiagnosticException(f"system: stage {i} input {j} comes from {op.name}")  # type: ignore[union-attr]
    for ar, dsts in fed.items():
        pod.collectives.append(
            PodCollective(
                "all_reduce",
                tuple(ar.chip_list()),
                tuple(produced(v) for v in ar.inputs),
                tuple(tuple(d) for d in dsts),
                _nbytes(ar.inputs[0]),
            )
        )
    for j, v in enumerate(pipe.body.block.last_op.operands):  # type: ignore[union-attr]
        if not isinstance(v.owner, StageOp):
            raise DiagnosticException("system: a model output that is a model input unchanged is not supported yet")
        pod.outputs[model_out[j] if j < len(model_out) else f"output{j}"] = produced(v)


def module_pod(module: builtin.ModuleOp) -> Pod:
    """The system package of a lowered system module; DiagnosticException naming what is wrong."""
    sa = system_attr_of(module)
    pipe = pipeline_of(module)
    if sa is None or pipe is None:
        raise DiagnosticException("--to-ipuexe: a lowered system module has an #ipu.system and a system.pipeline")
    system = sa.system
    stages: list[PodStage] = []
    index: dict[StageOp, int] = {}
    for i, st in enumerate(pipe.stages):
        m = st.function()
        if not isinstance(m, builtin.ModuleOp):
            raise DiagnosticException(
                f"--to-ipuexe: stage @{st.callee.root_reference.data} is not lowered (a nested tasm module): "
                "compile the partitioned module first (ipu-run MODULE --package m.ipupod)"
            )
        try:
            pkg = build_package(m, system.chip)
        except (ValueError, PackageError) as e:
            raise DiagnosticException(f"--to-ipuexe: stage {i}: {e}") from None
        fn = m.attributes.get("ipu.function")
        stages.append(PodStage(i, st.chip.value.data, fn.data if isinstance(fn, StringAttr) else f"stage{i}", pkg))
        index[st] = i
    version = module.attributes.get("ipu.compiler")
    pod = Pod(
        system.name,
        pipe.microbatches.value.data,
        stages,
        compiler_version=version.data if isinstance(version, StringAttr) else "",
    )

    read_routes(
        pipe,
        index,
        lambda i: [b.name for b in stages[i].package.inputs],
        lambda i: [b.name for b in stages[i].package.outputs],
        pod,
    )
    try:
        validate_pod(pod)
    except PackageError as e:
        raise DiagnosticException(f"--to-ipuexe: {e}") from None
    return pod


__all__ = ["link_op_rows", "module_pod", "pod_module", "read_routes"]
