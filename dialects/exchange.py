"""The `exchange` dialect: physically scheduled exchange phases and placed storage.

`exchange.phase` replaces a logical `tilemap.move`: every transfer family gets a start cycle
(its `#table.transfers` gains the `start` column), and the phase records its endpoint lower
bound, horizon and the scheduler that produced it.
`place-storage` then gives every buffer a `#exchange.slot<address, bytes, region>`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntAttr, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute
from xdsl.irdl import (
    IRDLOperation,
    attr_def,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ipu.abi.tables import TRANSFER
from ipu.abi.transfers import phase_end, split_start
from ipu.dialects.shared import AnyBuffer, trip_reach, verify_transfers, verify_zero_span
from ipu.dialects.table import TransfersAttr, verify_schema


@irdl_attr_definition
class SlotAttr(ParametrizedAttribute):
    """`#exchange.slot<0x80000, 12288, interleaved>`: a buffer's address on every tile of its group."""

    name = "exchange.slot"
    address: IntAttr
    size: IntAttr
    region: StringAttr

    def __init__(self, address: int, size: int, region: str):
        super().__init__(IntAttr(address), IntAttr(size), StringAttr(region))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        a = parser.parse_integer()
        parser.parse_punctuation(",")
        s = parser.parse_integer()
        parser.parse_punctuation(",")
        r = parser.parse_identifier()
        parser.parse_punctuation(">")
        return (IntAttr(a), IntAttr(s), StringAttr(r))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.address.data:#x}, {self.size.data}, {self.region.data}>")

    def verify(self) -> None:
        if self.address.data < 0 or self.size.data < 0:
            raise VerifyException("exchange.slot: address and size must be non-negative")


@irdl_op_definition
class PhaseOp(IRDLOperation):
    """One exchange phase: start cycle + transfer family per row."""

    name = "exchange.phase"
    input = operand_def(AnyBuffer)
    lower_bound = attr_def(IntegerAttr[I64])
    horizon = attr_def(IntegerAttr[I64])
    scheduler = attr_def(StringAttr)
    transfers = attr_def(TransfersAttr)
    logical_transfers = opt_attr_def(IntegerAttr[I64])  # members of the move before scheduling
    route_cycles = opt_attr_def(IntegerAttr[I64])  # longest send-to-mux route under the tile mapping
    reason = opt_attr_def(StringAttr)
    zero_fill = opt_attr_def(UnitAttr)  # zero the destination before the phase writes it
    zero_from = opt_attr_def(IntegerAttr[I64])  # ... from this element on (all before it is data)
    joined = opt_attr_def(UnitAttr)  # runs in the previous phase's exchange, after it (`join-phases`)
    trip_stride = opt_attr_def(IntegerAttr[I64])  # source bytes a trip of the enclosing repeat (`tilemap.move`)
    result = result_def(AnyBuffer)
    assembly_format = "$input `transfers` `=` qualified($transfers) attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_schema(self.name, self.transfers, TRANSFER)
        t = self.transfers.table
        starts, moves = split_start(t)
        verify_transfers(self, moves, self.input.type, self.result.type, reach=trip_reach(self))
        if len(t):
            if (starts < 0).any() or int(phase_end(t).max()) > self.horizon.value.data:
                raise VerifyException("exchange.phase: a transfer ends after the phase horizon")
        if self.lower_bound.value.data > self.horizon.value.data:
            raise VerifyException("exchange.phase: horizon below the lower bound")
        verify_zero_span(self)
        if self.joined is not None:
            if self.trip_stride is not None and any(p.trip_stride is not None for p in earlier_parts(self)):
                raise VerifyException("exchange.phase: one phase of an exchange reads by the trip (trip_stride)")
            if self.zero_fill is not None:
                raise VerifyException("exchange.phase: a joined phase has no zero fill (no kernel runs before it)")
            if previous_phase(self) is None:
                raise VerifyException(
                    "exchange.phase: a joined phase follows a phase (only checkpoints, views, allocations and "
                    "weights between)"
                )


CODE_FREE = frozenset({"tilemap.checkpoint", "tilemap.view", "tilemap.alloc", "tilemap.weight"})
"""Ops that run no code on the tiles and write no memory: a checkpoint (a host sample of memory as
it is), a view (an alias), an allocation, a weight binding. Phases with only these between them
run in one exchange (`join-phases`). By name: the tilemap level is above this one."""


def previous_phase(op: Operation) -> PhaseOp | None:
    """The phase before `op` in its block with only `CODE_FREE` ops between, if there is one."""
    prev = op.prev_op
    while prev is not None and prev.name in CODE_FREE:
        prev = prev.prev_op
    return prev if isinstance(prev, PhaseOp) else None


def earlier_parts(op: PhaseOp) -> list[PhaseOp]:
    """The phases before joined phase `op` in its exchange (back to the group's first)."""
    out: list[PhaseOp] = []
    prev = previous_phase(op) if op.joined is not None else None
    while prev is not None:
        out.append(prev)
        prev = previous_phase(prev) if prev.joined is not None else None
    return out


def next_phase(op: Operation) -> PhaseOp | None:
    """The phase after `op` in its block with only `CODE_FREE` ops between, if there is one."""
    nxt = op.next_op
    while nxt is not None and nxt.name in CODE_FREE:
        nxt = nxt.next_op
    return nxt if isinstance(nxt, PhaseOp) else None


Exchange = Dialect("exchange", [PhaseOp], [SlotAttr])
