"""The `chlo` dialect: the CHLO ops JAX emits for transformer code, `chlo.erf` and
`chlo.erfc` (exact GeLU), `chlo.square` (Flax's LayerNorm variance) and `chlo.top_k`
(`jax.lax.top_k`, a mixture-of-experts router's choice).

Written `chlo.erf %x : tensor<4x8xf32> -> tensor<4x8xf32>` in JAX's pretty text and
`"chlo.erf"(%x) : (tensor<…>) -> tensor<…>` in its generic form; StableHLO proper has neither.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def
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


@irdl_op_definition
class TopKOp(IRDLOperation):
    """The k largest values along the last axis, sorted, and their i32 indices (the lower index
    first among equal values): `chlo.top_k(%x, k = 2) : tensor<4x8xf32> -> (tensor<4x2xf32>,
    tensor<4x2xi32>)`."""

    name = "chlo.top_k"
    operand = operand_def(TensorType)
    k = prop_def(IntegerAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        parser.parse_punctuation("(")
        u = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        parser.parse_keyword("k")
        parser.parse_punctuation("=")
        k = parser.parse_integer()
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_punctuation("(")
        vt = parser.parse_type()
        parser.parse_punctuation(",")
        it = parser.parse_type()
        parser.parse_punctuation(")")
        op = cls.create(
            operands=[parser.resolve_operand(u, t)], result_types=[vt, it], properties={"k": IntegerAttr(k, i64)}
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_operand(self.operand)
        printer.print_string(f", k = {self.k.value.data})")
        if self.attributes:
            printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)
        printer.print_string(" -> (")
        printer.print_attribute(self.values.type)
        printer.print_string(", ")
        printer.print_attribute(self.indices.type)
        printer.print_string(")")

    def verify_(self) -> None:
        x, v, i = (t.get_shape() for t in (self.operand.type, self.values.type, self.indices.type))
        k = self.k.value.data
        if not x or not 1 <= k <= x[-1]:
            raise VerifyException(f"'chlo.top_k' op k = {k} for an operand of shape {tuple(x)}")
        want = (*x[:-1], k)
        if tuple(v) != want or tuple(i) != want:
            raise VerifyException(f"'chlo.top_k' op results {tuple(v)} and {tuple(i)}, expected {want}")


Chlo = Dialect("chlo", [ErfOp, ErfcOp, SquareOp, TopKOp], [])
