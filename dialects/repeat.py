"""Shared structure of the `repeat` region ops of graph, plan and tilemap.

`<dialect>.repeat N iter(%h = %x) : (type) { ... <dialect>.yield %y : type }` runs its body N
times; block arguments carry values between iterations and the results are the last yield.
Keeping the loop structured (never unrolled) keeps the IR of an N-layer stack the size of one
layer at every level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Region, SSAValue
from xdsl.irdl import IRDLOperation, attr_def, region_def, var_operand_def, var_result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ipu.abi.isa import MAX_TRIPS


class RepeatBase(IRDLOperation):
    """Fields, verifier and custom syntax; subclasses set `name` and the yield class."""

    count = attr_def(IntegerAttr)
    inits = var_operand_def()
    results_ = var_result_def()
    body = region_def("single_block")
    YIELD_NAME: ClassVar[str] = ""

    def __init__(self, count: int, inits: Sequence[SSAValue], body: Region):
        super().__init__(
            operands=[inits],
            result_types=[[v.type for v in inits]],
            regions=[body],
            attributes={"count": IntegerAttr(count, 64)},
        )

    def verify_(self) -> None:
        if not 1 <= self.count.value.data <= MAX_TRIPS:
            raise VerifyException(
                f"{self.name}: count {self.count.value.data} is not between 1 and {MAX_TRIPS} (a loop counter is a "
                "31-bit word)"
            )
        types = [v.type for v in self.inits]
        if [a.type for a in self.body.block.args] != types:
            raise VerifyException(f"{self.name}: block arguments must match the carried values")
        term = self.body.block.last_op
        if term is None or term.name != self.YIELD_NAME or [v.type for v in term.operands] != types:
            raise VerifyException(f"{self.name}: the body must end in {self.YIELD_NAME} of the carried types")
        if [r.type for r in self.results] != types:
            raise VerifyException(f"{self.name}: results must match the carried values")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.count.value.data} iter(")
        printer.print_list(
            zip(self.body.block.args, self.inits, strict=True),
            lambda p: (printer.print_ssa_value(p[0]), printer.print_string(" = "), printer.print_ssa_value(p[1])),
        )
        printer.print_string(") : (")
        printer.print_list([v.type for v in self.inits], printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=False, print_block_terminators=True)
        extra = {k: v for k, v in self.attributes.items() if k != "count"}
        if extra:
            printer.print_op_attributes(extra)

    @classmethod
    def parse(cls, parser: Parser) -> RepeatBase:
        count = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_keyword("iter")

        def assignment():
            arg = parser.parse_argument(expect_type=False)
            parser.parse_punctuation("=")
            return arg, parser.parse_unresolved_operand()

        pairs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, assignment)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        if len(types) != len(pairs):
            parser.raise_error(f"{cls.name}: one type per carried value")
        operands = [parser.resolve_operand(u, t) for (_, u), t in zip(pairs, types, strict=True)]
        args = [a.resolve(t) for (a, _), t in zip(pairs, types, strict=True)]
        body = parser.parse_region(args)
        op = cls(count, operands, body)
        op.attributes |= parser.parse_optional_attr_dict()
        return op
