"""The `exchange` dialect: physically scheduled exchange phases and placed storage.

`exchange.phase` replaces a logical `tilemap.move`: every transfer family gets a start cycle,
and the phase records its endpoint lower bound, horizon and the scheduler that produced it.
`place-storage` then gives every buffer a `#exchange.slot<address, bytes, region>`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import I64, DenseIntOrFPElementsAttr, IntAttr, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
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

from ipu.dialects.tilemap import MOVE_COLUMNS, AnyBuffer, table_of, verify_transfers

PHASE_COLUMNS = MOVE_COLUMNS + 1  # `start` first, then the move columns


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


def slot_of(op: Attribute | None) -> SlotAttr | None:
    return op if isinstance(op, SlotAttr) else None


@irdl_op_definition
class PhaseOp(IRDLOperation):
    """One exchange phase: start cycle + transfer family per row."""

    name = "exchange.phase"
    index = attr_def(IntegerAttr[I64])
    input = operand_def(AnyBuffer)
    lower_bound = attr_def(IntegerAttr[I64])
    horizon = attr_def(IntegerAttr[I64])
    scheduler = attr_def(StringAttr)
    transfers = attr_def(DenseIntOrFPElementsAttr)
    logical_transfers = opt_attr_def(IntegerAttr[I64])  # members of the move before scheduling
    route_cycles = opt_attr_def(IntegerAttr[I64])  # longest send-to-mux route under the tile mapping
    reason = opt_attr_def(StringAttr)
    zero_fill = opt_attr_def(UnitAttr)  # zero the destination before the phase writes it
    result = result_def(AnyBuffer)
    assembly_format = "$index $input `transfers` `=` $transfers attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        t = table_of(self.transfers)
        if t.ndim != 2 or t.shape[1] != PHASE_COLUMNS:
            raise VerifyException(f"exchange.phase: transfer table must be [n, {PHASE_COLUMNS}] (start + move columns)")
        verify_transfers(self, t[:, 1:], MOVE_COLUMNS, self.input.type, self.result.type, 0)
        if len(t):
            end = t[:, 0] + t[:, 7] * t[:, 8] + (t[:, 9] - 1) * t[:, 16]
            if (t[:, 0] < 0).any() or int(end.max()) > self.horizon.value.data:
                raise VerifyException("exchange.phase: a transfer ends after the phase horizon")
        if self.lower_bound.value.data > self.horizon.value.data:
            raise VerifyException("exchange.phase: horizon below the lower bound")


def starts_and_moves(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return t[:, 0], t[:, 1:]


Exchange = Dialect("exchange", [PhaseOp], [SlotAttr])
