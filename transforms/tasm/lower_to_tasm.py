"""`lower-to-tasm`: emit tile programs shared by tiles that run identical code.

Two steps. First each tilemap/exchange op is rewritten in place by the pattern of its kind
(`Lower<Op>`) into the tasm ops the machine runs for it, with absolute addresses from the
storage slots: control that every tile takes part in (host streams, syncs, exchanges,
checkpoints), kernel calls tagged with the tile group that runs them (`tiles = array<i64: first,
end>`), and the module-level bindings and tables (streams, weights, phases, checkpoints). The
sweep runs in reverse, so every op is lowered while the ops defining its operands, and their
slots, still exist. Then `split_programs` cuts the tile range at every kernel group boundary
(`program_segments`) and gives each segment one `tasm.program`: control in every program, a
call in the programs of its group, bindings after the programs. All programs carry the same
control skeleton in the same order, which is what makes the machine bulk-synchronous.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import KERNELS
from ipu.abi.tables import SLICE, TRANSFER
from ipu.dialects import exchange, tasm, tilemap
from ipu.dialects.table import table_attr, table_of
from ipu.dialects.tilemap import zero_span
from ipu.log import log_event
from ipu.target import Target
from ipu.transforms.exchange.join_phases import group_of, group_route
from ipu.transforms.exchange.refined_cycles import refined_cycles
from ipu.transforms.exchange.slots import address, slot
from ipu.transforms.levels import expect_level
from ipu.transforms.target_of import module_target

# the kernel ABI (parameter names in encoding order) is the ISA's
KERNEL_PARAMS = {name: k.param_names for name, k in KERNELS.items()}

GROUP_ATTR = "tiles"  # a call's tile group [first, end) between the two steps


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


def _call(group: tilemap.BufferType, props: dict) -> tasm.KernelCallOp:
    """A kernel call run by the tiles of `group`'s buffers."""
    op = tasm.KernelCallOp.create(properties=props)
    first = group.first.data
    op.attributes[GROUP_ATTR] = DenseArrayBase.from_list(i64, [first, first + group.count.data])
    return op


def _fill_call(
    kernel: str, dst_slot: int, srcs: list[SSAValue], t: tilemap.BufferType, first: int = 0, n: int | None = None
) -> tasm.KernelCallOp:
    """`zero` or `copy` over a buffer of type `t` into `dst_slot`: the whole buffer, or its `n`
    elements from element `first`."""
    n = int(np.prod(t.shape)) - first if n is None else n
    dst = dst_slot + first * t.esize
    return _call(
        t, _run_props(kernel, dst, [address(v) for v in srcs], {"elements": n}, t.element_type, t.element_type)
    )


def _bound(cls: type, op: Operation, extra: dict, addr: int) -> Operation:
    props = {"sym_name": op.sym_name, "tensor": op.tensor, "layout": op.layout, "address": _i(addr)}
    if getattr(op, "host_shape", None) is not None:  # a host stream's declared shape
        props["host_shape"] = op.host_shape
    for key in ("host_perm", "host_pads"):  # an input rearranged on the host
        if getattr(op, key, None) is not None:
            props[key] = getattr(op, key)
    props.update(extra)
    return cls.create(properties=props)


def parallel_copy(values: list[SSAValue], dsts: list[int]) -> list[tasm.KernelCallOp]:
    """Copies of every value into its slot as if all were read first (a loop's carried values):
    a copy waits while its destination is still to be read by another; a cycle (a swap) would
    need a temporary buffer, and is refused rather than computed wrong."""
    calls = []
    todo = [(v, d) for v, d in zip(values, dsts, strict=True) if address(v) != d]
    while todo:
        ready = [(v, d) for v, d in todo if all(address(w) != d for w, e in todo if e != d)]
        if not ready:
            raise DiagnosticException(
                "lower-to-tasm: a repeat passes its carried values around in a cycle (e.g. yields them "
                "swapped); that needs a temporary buffer, which is not supported yet"
            )
        v, d = ready[0]
        calls.append(_fill_call("copy", d, [v], v.type))
        todo = [(w, e) for w, e in todo if e != d]
    return calls


def _carried_slots(rep: tilemap.RepeatOp) -> list[int]:
    return [address(a) for a in rep.body.block.args]


# --- patterns: one per op kind ------------------------------------------------------------------


class LowerHostWrite(RewritePattern):
    """A run input: the host streams it in (control) into the stream's binding."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tilemap.HostWriteOp, rewriter: PatternRewriter) -> None:
        host_in = tasm.HostInOp.create(properties={"ref": SymbolRefAttr(op.sym_name)})
        rewriter.replace(op, [host_in, _bound(tasm.StreamInOp, op, {}, address(op.result))], [None])


class LowerWeight(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tilemap.WeightOp, rewriter: PatternRewriter) -> None:
        extra = {"init": op.init} | ({"zero_padding": op.zero_padding} if op.zero_padding is not None else {})
        rewriter.replace(op, [_bound(tasm.WeightOp, op, extra, address(op.result))], [None])


class LowerRun(RewritePattern):
    """A kernel run: one call, its parameters in the kernel's ABI order; an in-place operand
    is the output, not an input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tilemap.RunOp, rewriter: PatternRewriter) -> None:
        t = op.result.type
        kernel = op.kernel.data
        if kernel not in KERNEL_PARAMS:
            raise DiagnosticException(f"lower-to-tasm: unknown kernel '{kernel}'")
        params = {k: op.param(k) for k in KERNEL_PARAMS[kernel]}
        ins = [address(v) for v in op.call_inputs()]
        props = _run_props(kernel, address(op.result), ins, params, op.call_in_buffer().element_type, t.element_type)
        rewriter.replace(op, [_call(t, props)], [None])


def _absolute_table(op: exchange.PhaseOp) -> np.ndarray:
    """`op`'s transfers with its buffers' addresses added (placed)."""
    table = table_of(op.transfers)
    table[:, TRANSFER.index("src_address")] += slot(op.input).address.data
    table[:, TRANSFER.index("dst_address")] += slot(op.result).address.data
    return table


@dataclass(frozen=True)
class Exchange:
    """One exchange's table (absolute addresses), horizon and lower bound, and the families
    [trip_begin, trip_end) of it that read by the trip (`trip_stride` bytes further a trip; the
    one part of its group with a `trip_stride`)."""

    table: np.ndarray
    horizon: int
    lower_bound: int
    trip_stride: int = 0
    trip_begin: int = 0
    trip_end: int = 0


def exchanges(f: func.FuncOp, target: Target) -> dict[exchange.PhaseOp, Exchange]:
    """Per phase that heads a group (`join-phases`; alone, a group of one), the group's one
    exchange: part k's starts moved to the sum of the earlier parts' horizons plus the group's
    longest route each (every earlier transfer has landed); its horizon and lower bound are the
    parts' sums."""
    out: dict[exchange.PhaseOp, Exchange] = {}
    start = TRANSFER.index("start")
    for op in f.body.walk():
        if not isinstance(op, exchange.PhaseOp) or op.joined is not None:
            continue
        group = group_of(op)
        route, at, parts, bound, trip = group_route(op, target), 0, [], 0, {}
        rows = 0
        for part in group:
            table = _absolute_table(part)
            table[:, start] += at
            parts.append(table)
            if part.trip_stride is not None:
                trip = {"trip_stride": part.trip_stride.value.data, "trip_begin": rows, "trip_end": rows + len(table)}
            rows += len(table)
            at += part.horizon.value.data + route
            bound += part.lower_bound.value.data
        out[op] = Exchange(np.concatenate(parts), at - route, bound, **trip)
    return out


@dataclass
class LowerPhase(RewritePattern):
    """An exchange phase: zero a padded destination, sync, exchange (control); its table with
    absolute addresses is a binding, named `@phaseN` in program order (`names`, filled by
    `name_phases` before the sweep, which runs in reverse). A group (`exchanges`, built before
    the sweep: a phase and those joined to it) is one exchange, under its first phase's name."""

    names: dict[exchange.PhaseOp, StringAttr]
    exchanges: dict[exchange.PhaseOp, Exchange]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: exchange.PhaseOp, rewriter: PatternRewriter) -> None:
        if op.joined is not None:  # its transfers are in its group's exchange
            rewriter.replace(op, [], [None])
            return
        name = self.names[op]
        new_ops: list[Operation] = []
        span = zero_span(op)
        if span is not None:
            new_ops.append(_fill_call("zero", address(op.result), [], op.result.type, *span))
        ex = self.exchanges[op]
        props = {
            "sym_name": name,
            "lower_bound": _i(ex.lower_bound),
            "horizon": _i(ex.horizon),
            "scheduler": op.scheduler,
            "transfers": table_attr(ex.table, TRANSFER),
        }
        if ex.trip_stride:  # (verified: directly in a repeat, whose trips it reads by)
            props |= {
                "trip_stride": _i(ex.trip_stride),
                "trips": op.parent_op().count,
                "trip_begin": _i(ex.trip_begin),
                "trip_end": _i(ex.trip_end),
            }
        phase = tasm.PhaseOp.create(properties=props)
        new_ops += [tasm.SyncOp.create(), tasm.ExchangeOp.create(properties={"ref": SymbolRefAttr(name)}), phase]
        rewriter.replace(op, new_ops, [None])


class LowerCheckpoint(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tilemap.CheckpointOp, rewriter: PatternRewriter) -> None:
        extra = {"value": op.value} | ({"aspect": op.aspect} if op.aspect else {})
        point = tasm.CheckpointOp.create(properties={"ref": SymbolRefAttr(op.sym_name)})
        rewriter.replace(op, [point, _bound(tasm.CheckpointDefOp, op, extra, address(op.input))])


class LowerHostRead(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tilemap.HostReadOp, rewriter: PatternRewriter) -> None:
        host_out = tasm.HostOutOp.create(properties={"ref": SymbolRefAttr(op.sym_name)})
        rewriter.replace(op, [host_out, _bound(tasm.StreamOutOp, op, {}, address(op.input))])


class LowerRepeat(RewritePattern):
    """Copy the initial values into the carried slots, then loop over the (lowered) body."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tilemap.RepeatOp, rewriter: PatternRewriter) -> None:
        copies = parallel_copy(list(op.inits), _carried_slots(op))
        loop = tasm.LoopOp.create(properties={"count": _i(op.count.value.data)}, regions=[Region(Block())])
        rewriter.inline_block(op.body.block, InsertPoint.at_end(loop.body.block))
        rewriter.replace(op, [*copies, loop], [None] * len(op.results))


class LowerYield(RewritePattern):
    """The next iteration's carried values: copies into the carried slots."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tilemap.YieldOp, rewriter: PatternRewriter) -> None:
        rep = op.parent_op()
        assert isinstance(rep, tilemap.RepeatOp)
        rewriter.replace(op, parallel_copy(list(op.values), _carried_slots(rep)))


class LowerAllocOrReturn(RewritePattern):
    """Scratch allocations, views and the return run no code (their slots are all that matter)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: tilemap.AllocOp | tilemap.ViewOp | func.ReturnOp, rewriter: PatternRewriter
    ) -> None:
        rewriter.replace(op, [], [None] * len(op.results))


class RefuseUnknown(RewritePattern):
    """Last in the list: an op no pattern lowered is refused."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        raise DiagnosticException(f"lower-to-tasm: unexpected operation {op.name}")


def patterns(
    phase_names: dict[exchange.PhaseOp, StringAttr], groups: dict[exchange.PhaseOp, Exchange]
) -> list[RewritePattern]:
    """One pattern per op kind of a placed exchange-level function (tried in order)."""
    return [
        LowerHostWrite(),
        LowerWeight(),
        LowerRun(),
        LowerPhase(phase_names, groups),
        LowerCheckpoint(),
        LowerHostRead(),
        LowerRepeat(),
        LowerYield(),
        LowerAllocOrReturn(),
        RefuseUnknown(),
    ]


def name_phases(f: func.FuncOp) -> dict[exchange.PhaseOp, StringAttr]:
    """`@phase0`, `@phase1`, … for the function's exchanges in program order (a joined group's
    under its first phase)."""
    ops = [op for op in f.body.walk() if isinstance(op, exchange.PhaseOp) and op.joined is None]
    return {op: StringAttr(f"phase{n}") for n, op in enumerate(ops)}


# --- programs: not op-local ------------------------------------------------------------------


def program_segments(f: func.FuncOp, tiles: int) -> list[tuple[int, int]]:
    """The tile range cut at every boundary of a group that runs code: kernels, zero fills
    before exchanges, and copies of carried values (a repeat's groups)."""
    bounds = {0, tiles}
    for op in f.body.walk():
        if isinstance(op, tilemap.RunOp) or (isinstance(op, exchange.PhaseOp) and op.zero_fill is not None):
            t = op.result.type
            bounds |= {t.first.data, t.first.data + t.count.data}
        elif isinstance(op, tilemap.RepeatOp):
            for a in op.body.block.args:
                t = a.type
                bounds |= {t.first.data, t.first.data + t.count.data}
    edges = sorted(b for b in bounds if 0 <= b <= tiles)
    return list(zip(edges[:-1], edges[1:], strict=True))


BINDINGS = (tasm.StreamInOp, tasm.StreamOutOp, tasm.WeightOp, tasm.CheckpointDefOp, tasm.PhaseOp)


@dataclass
class _Programs:
    """The bodies of one program per segment, filled from the lowered function in order."""

    segments: list[tuple[int, int]]
    bindings: list[Operation]
    calls: int = 0

    def place(self, src: Block, dsts: list[Block]) -> None:
        for op in list(src.ops):
            if isinstance(op, BINDINGS):
                op.detach()
                self.bindings.append(op)
            elif isinstance(op, tasm.KernelCallOp):
                self.place_call(op, dsts)
            elif isinstance(op, tasm.LoopOp):
                loops = [tasm.LoopOp.create(properties={"count": op.count}, regions=[Region(Block())]) for _ in dsts]
                for b, lp in zip(dsts, loops, strict=True):
                    b.add_op(lp)
                self.place(op.body.block, [lp.body.block for lp in loops])
            else:
                for b in dsts:
                    b.add_op(op.clone())

    def place_call(self, op: tasm.KernelCallOp, dsts: list[Block]) -> None:
        lo, hi = op.attributes[GROUP_ATTR].get_values()  # type: ignore[union-attr]
        covered = 0
        for (s0, s1), b in zip(self.segments, dsts, strict=True):
            if lo <= s0 and s1 <= hi:
                b.add_op(tasm.KernelCallOp.create(properties=dict(op.properties)))
                covered += s1 - s0
        if covered != hi - lo:  # a group that is no union of programs would silently skip tiles
            raise DiagnosticException(f"lower-to-tasm: tiles [{lo}, {hi}) of a call are not a union of programs")
        self.calls += 1


def split_programs(f: func.FuncOp, segments: list[tuple[int, int]]) -> tuple[list[Operation], dict[str, int]]:
    """One `tasm.program` per segment from the lowered function, then the bindings."""
    progs = _Programs(segments, [])
    roots = [Block() for _ in segments]
    progs.place(f.body.block, roots)
    programs: list[Operation] = [
        tasm.ProgramOp.create(
            properties={"sym_name": StringAttr(f"p{n}"), "first": _i(s0), "count": _i(s1 - s0)},
            regions=[Region(b)],
        )
        for n, ((s0, s1), b) in enumerate(zip(segments, roots, strict=True))
    ]
    phases = sum(isinstance(b, tasm.PhaseOp) for b in progs.bindings)
    return programs + progs.bindings, {"programs": len(programs), "phases": phases, "calls": progs.calls}


def lower_function(f: func.FuncOp, target: Target) -> tuple[list[Operation], dict[str, int]]:
    """The programs and bindings of a placed exchange-level function (consumed)."""
    segments = program_segments(f, target.tiles)
    PatternRewriteWalker(
        GreedyRewritePatternApplier(patterns(name_phases(f), exchanges(f, target)), dce_enabled=False),
        apply_recursively=False,
        walk_reverse=True,
        walk_regions_first=True,
    ).rewrite_region(f.body)
    ops, figures = split_programs(f, segments)
    return _empty_streams(f, ops), figures


def _empty_streams(f: func.FuncOp, ops: list[Operation]) -> list[Operation]:
    """`ops` with the function's zero-size inputs and outputs (`ipu.empty_inputs` /
    `ipu.empty_outputs`: no bytes on any tile) as streams with an empty slice table, each
    streamed by every program (HOST_IN first, HOST_OUT last: zero bytes, a host phase's sync)."""
    streams = []
    for key, cls, ref in (
        ("ipu.empty_inputs", tasm.StreamInOp, tasm.HostInOp),
        ("ipu.empty_outputs", tasm.StreamOutOp, tasm.HostOutOp),
    ):
        d = f.attributes.get(key)
        for name, t in d.data.items() if isinstance(d, DictionaryAttr) else ():
            if not isinstance(t, TensorType) or 0 not in t.get_shape():
                raise DiagnosticException(f"lower-to-tasm: {key} entry '{name}' is not a zero-size tensor type")
            empty = table_attr(np.zeros((0, len(SLICE)), np.int64), SLICE)
            streams.append(cls.create(properties={"sym_name": StringAttr(name), "tensor": t, "slices": empty}))
            for p in ops:
                if isinstance(p, tasm.ProgramOp):
                    b = p.body.block
                    point = ref.create(properties={"ref": SymbolRefAttr(name)})
                    if ref is tasm.HostInOp and b.first_op is not None:
                        b.insert_op_before(point, b.first_op)
                    else:
                        b.add_op(point)
    return ops + streams


@dataclass(frozen=True)
class LowerToTasmPass(ModulePass):
    """Replace the placed exchange-level function by tile programs and tables."""

    name = "lower-to-tasm"
    target: str | None = None  # unset: the module's #ipu.target

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("placed",))
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
