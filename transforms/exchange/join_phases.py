"""`join-phases`: run back-to-back exchange phases as one exchange, without the sync between.

Two phases with no code between them in program order (no kernel, no zero fill; checkpoints,
views, allocations and weight bindings run none, `exchange.CODE_FREE`) need no barrier between
them: no tile computes in between. The later one is marked `joined` and
runs in the earlier one's exchange, its transfers started once every transfer of the earlier
part has landed: part k of a group starts at the sum, over the parts before it, of their
horizon plus the group's longest route (`group_route`). A group then costs the sum of its
horizons, one route per part, and one sync, where separate phases paid a sync each (600 cycles
on mk2). `lower-to-tasm` builds the group's one table; `refined_cycles` prices it so.

One phase of a group may read by the loop's trip (`trip_stride`): the group's package phase
offsets that part's families' sources by the trip (`trip_begin`, `trip_end`).
A phase that reads a buffer an earlier part of its group writes is not joined (the emulator
executes a joined exchange as one, reading before writing), nor one with a zero fill (a kernel
between the two). Every input and result of a group stays live to the group's end
(`place-storage`), so no part writes over a buffer another part reads or writes, nor over one a
checkpoint between the parts samples: the group's exchange runs where its first phase stands, so
a checkpoint between sees every part's writes done. (With checkpoints between them, GPT-2's q, k
and v windows were three exchanges a layer.)
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ipu.dialects import exchange, tilemap
from ipu.log import log_event
from ipu.target import Target
from ipu.transforms.levels import expect_level


def group_of(op: exchange.PhaseOp) -> list[exchange.PhaseOp]:
    """The phases of `op`'s exchange in order: its group's first (not joined) and the joined
    phases after it (with only code-free ops between, `exchange.CODE_FREE`)."""
    earlier = exchange.earlier_parts(op)
    head = earlier[-1] if earlier else op
    out = [head]
    nxt = exchange.next_phase(head)
    while nxt is not None and nxt.joined is not None:
        out.append(nxt)
        nxt = exchange.next_phase(nxt)
    return out


def route_of(op: exchange.PhaseOp, t: Target) -> int:
    """A phase's longest route under the tile mapping (the worst route if it was never mapped)."""
    return op.route_cycles.value.data if op.route_cycles is not None else t.exchange["route_tail_cycles"]


def group_route(op: exchange.PhaseOp, t: Target) -> int:
    """The longest route of `op`'s group: the wait after each part before the next starts, and
    the route of the group's exchange as a whole."""
    return max(route_of(p, t) for p in group_of(op))


@dataclass
class JoinRule:
    """Which exchanges of a block run in the exchange before them, op by op in program order:
    an exchange (an `exchange.phase`, or a `tilemap.move` still to schedule) joins the open group
    when only code-free ops (`exchange.CODE_FREE`) came between, it zero-fills nothing, reads
    nothing the group writes (directly or through a view), and the group has no part read by the
    loop's trip if it is one. Shared by `join_block` and `refined_cycles(joins=True)`."""

    written: set[SSAValue] | None = None  # what the open group writes (None: no group open)
    by_trip: bool = False  # a part of the open group reads by the trip

    def exchange(self, op: Operation, zero_fill: bool) -> bool:
        """Whether exchange `op` joins the open group (else it opens one)."""
        strided = op.attributes.get("trip_stride") is not None
        joins = (
            self.written is not None
            and not zero_fill
            and op.operands[0] not in self.written
            and not (strided and self.by_trip)
        )
        if joins:
            assert self.written is not None
            self.written.add(op.results[0])
        else:
            self.written, self.by_trip = {op.results[0]}, False
        self.by_trip = self.by_trip or strided
        return joins

    def other(self, op: Operation) -> None:
        """Any op that is not an exchange: a code-free one keeps the group open (a view of what
        it writes is the same bytes), anything else closes it."""
        if op.name not in exchange.CODE_FREE:
            self.written = None
        elif self.written is not None and isinstance(op, tilemap.ViewOp) and op.input in self.written:
            self.written.add(op.result)


def join_block(block: Block) -> int:
    """Mark the joinable phases of `block` (and of the blocks nested in it); returns how many."""
    joined = 0
    for op in block.ops:
        for region in op.regions:
            for b in region.blocks:
                joined += join_block(b)
    rule = JoinRule()
    for op in block.ops:
        if not isinstance(op, exchange.PhaseOp):
            rule.other(op)
        elif rule.exchange(op, op.zero_fill is not None):
            op.joined = UnitAttr()
            joined += 1
    return joined


@dataclass(frozen=True)
class JoinPhasesPass(ModulePass):
    """Join back-to-back independent exchange phases into one exchange (one sync)."""

    name = "join-phases"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("exchange", "tilemap"))
        n = sum(join_block(f.body.block) for f in op.body.block.ops if isinstance(f, func.FuncOp))
        log_event("joined exchange phases", joined=n)


__all__ = ["JoinPhasesPass", "JoinRule", "group_of", "group_route", "join_block", "route_of"]
