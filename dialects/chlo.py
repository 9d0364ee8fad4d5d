"""The `chlo` dialect: the CHLO ops JAX emits for transformer code, `chlo.erf` and
`chlo.erfc` (exact GeLU) and `chlo.square` (Flax's LayerNorm variance).

Written `chlo.erf %x : tensor<4x8xf32> -> tensor<4x8xf32>` in JAX's pretty text and
`"chlo.erf"(%x) : (tensor<…>) -> tensor<…>` in its generic form; StableHLO proper has neither.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


class _ChloUnary(IRDLOperation):
    """An elementwise op of one tensor, result of the operand's type."""

    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue, result_type: Attribute | None = None):
        super().__init__(operands=[x], result_types=[result_type or x.type])

    @classmethod
    def parse(cls, parser: Parser):
        u = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if parser.parse_optional_punctuation("->") is not None:
            r = parser.parse_type()
        else:
            r = t
        x = parser.resolve_operand(u, t)
        op = cls(x, r)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operand)
        if self.attributes:
            printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        if self.operand.type != self.result.type:
            raise VerifyException(f"'{self.name}' op operand {self.operand.type} and result {self.result.type} differ")


@irdl_op_definition
class ErfOp(_ChloUnary):
    """Elementwise error function of a float tensor."""

    name = "chlo.erf"


@irdl_op_definition
class ErfcOp(_ChloUnary):
    """Elementwise complementary error function, 1 - erf(x) (JAX's exact GeLU)."""

    name = "chlo.erfc"


@irdl_op_definition
class SquareOp(_ChloUnary):
    """Elementwise x * x."""

    name = "chlo.square"


Chlo = Dialect("chlo", [ErfOp, ErfcOp, SquareOp], [])
