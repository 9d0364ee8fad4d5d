"""`custom<ExactInit>($init)`: an initializer attribute printed so that it parses back to the
same bytes. xDSL's builtin syntax prints a splat of -0.0 as 0.0 and a NaN without its payload;
such an attribute prints as the hex of its bytes, `dense<"0x...">`, which reads back exactly
(NaN and the infinities otherwise print as MLIR's hex bit patterns, which `ipu.xdsl_fixes` reads
as bits). Weights and constants use it at every level (graph, plan, tilemap, tasm)."""

from __future__ import annotations

import io

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type, DenseIntOrFPElementsAttr, Float16Type, Float32Type, Float64Type
from xdsl.irdl import IRDLOperation
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer


def _hex_printed(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether the builtin syntax prints `attr` as the hex of its bytes (more than 100 elements,
    not all equal), decided on the bytes: xDSL's own splat test unpacks every element into a
    Python object, which dominates printing a real model's weights. Only +0.0 and -0.0 are
    equal with different bytes; a splat of NaN bytes (unequal values, printed as hex) answers
    False, leaving it to `prints_exactly`'s round trip."""
    n = len(attr)
    if n <= 100:
        return False
    raw = attr.data.data
    es = len(raw) // n
    if raw == raw[:es] * n:
        return False  # a splat
    if isinstance(attr.get_element_type(), _FLOATS) and es in (2, 4, 8):
        magnitude = np.frombuffer(raw, f"<u{es}") & np.array((1 << (8 * es - 1)) - 1, f"<u{es}")
        return bool(magnitude.any())  # all zeros of either sign: equal values, a splat
    return True


_FLOATS = (Float16Type, Float32Type, Float64Type, BFloat16Type)


def prints_exactly(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether the builtin syntax of `attr` parses back to the same bytes: it does not for NaN or
    infinite elements of a short list (printed as integers), nor for -0.0 among 0.0 (a splat)."""
    return _hex_printed(attr) or _round_trips(attr)  # hex is exact


def _round_trips(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether printing `attr` in the builtin syntax and parsing it back gives the same bytes."""
    text = io.StringIO()
    Printer(stream=text).print_attribute(attr)
    back = Parser(Context(), text.getvalue()).parse_attribute()
    return isinstance(back, DenseIntOrFPElementsAttr) and back.data == attr.data


@irdl_custom_directive
class ExactInit(CustomDirective):
    """An initializer attribute; a dense one the builtin syntax would alter prints as the hex of
    its bytes, `dense<"0x...">`, so that weight bytes survive a print and parse unchanged."""

    init: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.init.parse(parser, state)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        attr = self.init.get(op)
        assert attr is not None
        if isinstance(attr, DenseIntOrFPElementsAttr) and (_hex_printed(attr) or not _round_trips(attr)):
            printer.print_string(f'dense<"0x{attr.data.data.hex().upper()}"> : ')
            printer.print_attribute(attr.get_type())
        else:
            printer.print_attribute(attr)
