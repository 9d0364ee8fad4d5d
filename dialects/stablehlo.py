"""The `stablehlo` dialect: the subset of StableHLO that JAX emits for transformer code.

xDSL 0.75 ships no StableHLO dialect, so this is our own. Every op parses and prints both
spellings JAX writes: the pretty form of `jax.jit(f).lower(*args).as_text()` (e.g.
`stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (…) -> …`) and the generic form
of `compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)`. Attributes are
typed: dot and gather dimension numbers (`#stablehlo.dot<…>`, `#stablehlo.gather<…>`),
comparison direction and type, precision. The verifiers check shapes and element types the way
StableHLO's own do, so a malformed program fails here, naming the op, not later in the
conversion (`frontends/convert_stablehlo_to_graph.py`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    SameVariadicOperandSize,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from xdsl.dialects.utils.enum_attribute import EnumAttribute  # isort: skip
from xdsl.ir import SpacedOpaqueSyntaxAttribute  # isort: skip

# ---------------------------------------------------------------------------------------------
# attributes


class ComparisonDirection(StrEnum):
    EQ = "EQ"
    NE = "NE"
    GE = "GE"
    GT = "GT"
    LE = "LE"
    LT = "LT"


class ComparisonType(StrEnum):
    NOTYPE = "NOTYPE"
    FLOAT = "FLOAT"
    TOTALORDER = "TOTALORDER"
    SIGNED = "SIGNED"
    UNSIGNED = "UNSIGNED"


class Precision(StrEnum):
    DEFAULT = "DEFAULT"
    HIGH = "HIGH"
    HIGHEST = "HIGHEST"


@irdl_attr_definition
class ComparisonDirectionAttr(EnumAttribute[ComparisonDirection], SpacedOpaqueSyntaxAttribute):
    """`#stablehlo<comparison_direction GE>`."""

    name = "stablehlo.comparison_direction"


@irdl_attr_definition
class ComparisonTypeAttr(EnumAttribute[ComparisonType], SpacedOpaqueSyntaxAttribute):
    """`#stablehlo<comparison_type SIGNED>`."""

    name = "stablehlo.comparison_type"


@irdl_attr_definition
class PrecisionAttr(EnumAttribute[Precision], SpacedOpaqueSyntaxAttribute):
    """`#stablehlo<precision DEFAULT>`."""

    name = "stablehlo.precision"


def _ints(a: ArrayAttr[IntAttr]) -> tuple[int, ...]:
    return tuple(x.data for x in a.data)


def _int_array(xs: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(int(x)) for x in xs])


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def _print_int_list(printer: Printer, xs: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(x) for x in xs) + "]")


class _DimNumbers(ParametrizedAttribute):
    """A struct of named integer lists (`<key = [..], …>`); absent keys are empty lists, and
    `SCALARS` name the integer-valued fields."""

    FIELDS: ClassVar[tuple[str, ...]] = ()
    SCALARS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        vals: dict[str, Attribute] = {}
        with parser.in_angle_brackets():
            while True:
                key = parser.parse_identifier()
                if key not in cls.FIELDS:
                    parser.raise_error(f"{cls.name}: unknown field '{key}' (expected one of {', '.join(cls.FIELDS)})")
                parser.parse_punctuation("=")
                if key in cls.SCALARS:
                    vals[key] = IntAttr(parser.parse_integer())
                else:
                    vals[key] = _int_array(_parse_int_list(parser))
                if parser.parse_optional_punctuation(",") is None:
                    break
        return [vals.get(k, IntAttr(0) if k in cls.SCALARS else _int_array([])) for k in cls.FIELDS]

    def print_parameters(self, printer: Printer) -> None:
        parts = []
        for k, v in zip(self.FIELDS, self.parameters, strict=True):
            if k in self.SCALARS:
                parts.append(f"{k} = {v.data}")
            elif v.data:
                parts.append(f"{k} = [{', '.join(str(x) for x in _ints(v))}]")
        printer.print_string("<" + ", ".join(parts) + ">")

    def get(self, key: str):
        v = self.parameters[self.FIELDS.index(key)]
        return v.data if key in self.SCALARS else _ints(v)


@irdl_attr_definition
class DotDimensionNumbersAttr(_DimNumbers):
    """`#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],
    lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>`."""

    name = "stablehlo.dot"
    FIELDS: ClassVar[tuple[str, ...]] = (
        "lhs_batching_dimensions",
        "rhs_batching_dimensions",
        "lhs_contracting_dimensions",
        "rhs_contracting_dimensions",
    )
    lhs_batching_dimensions: ArrayAttr[IntAttr]
    rhs_batching_dimensions: ArrayAttr[IntAttr]
    lhs_contracting_dimensions: ArrayAttr[IntAttr]
    rhs_contracting_dimensions: ArrayAttr[IntAttr]

    def __init__(self, lb: Sequence[int], rb: Sequence[int], lc: Sequence[int], rc: Sequence[int]):
        super().__init__(*(_int_array(x) for x in (lb, rb, lc, rc)))


@irdl_attr_definition
class GatherDimensionNumbersAttr(_DimNumbers):
    """`#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],
    index_vector_dim = 1>`."""

    name = "stablehlo.gather"
    FIELDS: ClassVar[tuple[str, ...]] = (
        "offset_dims",
        "collapsed_slice_dims",
        "operand_batching_dims",
        "start_indices_batching_dims",
        "start_index_map",
        "index_vector_dim",
    )
    SCALARS: ClassVar[tuple[str, ...]] = ("index_vector_dim",)
    offset_dims: ArrayAttr[IntAttr]
    collapsed_slice_dims: ArrayAttr[IntAttr]
    operand_batching_dims: ArrayAttr[IntAttr]
    start_indices_batching_dims: ArrayAttr[IntAttr]
    start_index_map: ArrayAttr[IntAttr]
    index_vector_dim: IntAttr


def _parse_layout(parser: AttrParser, roles: str) -> list[str]:
    """`[b, 0, 1, f]`: each entry a role letter of `roles` or a spatial dimension's index."""

    def entry() -> str:
        n = parser.parse_optional_integer()
        if n is not None:
            return str(n)
        r = parser.parse_identifier()
        if r not in roles:
            parser.raise_error(f"stablehlo.conv: '{r}' is not one of {', '.join(roles)} or a spatial index")
        return r

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, entry)


@irdl_attr_definition
class ConvDimensionNumbersAttr(ParametrizedAttribute):
    """`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`: where the input's batch (b),
    feature (f) and spatial dimensions (0, 1, …) lie, the kernel's input (i) and output (o)
    features, and the result's. Held as the three layouts' entries, in dimension order."""

    name = "stablehlo.conv"
    lhs: ArrayAttr[StringAttr]
    rhs: ArrayAttr[StringAttr]
    out: ArrayAttr[StringAttr]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return cls.parse_layouts(parser)

    @classmethod
    def parse_layouts(cls, parser: AttrParser) -> Sequence[Attribute]:
        lhs = _parse_layout(parser, "bf")
        parser.parse_keyword("x")
        rhs = _parse_layout(parser, "io")
        parser.parse_punctuation("->")
        out = _parse_layout(parser, "bf")
        return [ArrayAttr([StringAttr(e) for e in xs]) for xs in (lhs, rhs, out)]

    def layouts_text(self) -> str:
        lhs, rhs, out = (", ".join(e.data for e in a.data) for a in (self.lhs, self.rhs, self.out))
        return f"[{lhs}]x[{rhs}]->[{out}]"

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.layouts_text()}>")

    def layout(self, which: str) -> tuple[str, ...]:
        return tuple(e.data for e in getattr(self, which).data)

    def dims(self, which: str, role: str) -> int:
        """The dimension holding `role` (b, f, i or o) in layout `which`."""
        return self.layout(which).index(role)

    def spatial(self, which: str) -> tuple[int, ...]:
        """The dimensions of spatial axes 0, 1, … in layout `which`, in axis order."""
        lay = self.layout(which)
        return tuple(lay.index(str(k)) for k in range(len(lay) - 2))


# ---------------------------------------------------------------------------------------------
# helpers shared by the ops' syntax and verifiers


def shape(t: Attribute) -> tuple[int, ...]:
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t


def _i64s(xs: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(xs))


def _arr(a: DenseArrayBase | None) -> tuple[int, ...]:
    return () if a is None else tuple(int(x) for x in a.get_values())


def _fail(op: IRDLOperation, msg: str) -> VerifyException:
    return VerifyException(f"'{op.name}' op {msg}")


def _tensor(op: IRDLOperation, v: SSAValue, what: str) -> TensorType:
    if not isinstance(v.type, TensorType):
        raise _fail(op, f"{what} must be a ranked tensor, got {v.type}")
    return v.type


def _parse_operands(parser: Parser) -> list[UnresolvedOperand]:
    """`%a, %b, …` up to the first thing that is not an operand (the comma before a keyword is
    consumed with the list)."""
    out: list[UnresolvedOperand] = []
    while (v := parser.parse_optional_unresolved_operand()) is not None:
        out.append(v)
        if parser.parse_optional_punctuation(",") is None:
            break
    return out


def _parse_trailing_types(parser: Parser, n_operands: int) -> tuple[list[Attribute], list[Attribute]]:
    """`: T` (operands and result alike), `: (T, …) -> U` or `: T -> U` (chlo)."""
    parser.parse_punctuation(":")
    t = parser.parse_type()
    if isinstance(t, FunctionType):
        return list(t.inputs.data), list(t.outputs.data)
    if parser.parse_optional_punctuation("->") is not None:
        return [t] * n_operands, [parser.parse_type()]
    return [t] * n_operands, [t]


def _print_trailing_types(
    printer: Printer, ins: Sequence[Attribute], outs: Sequence[Attribute], functional: bool = False
) -> None:
    printer.print_string(" : ")
    if not functional and len(outs) == 1 and all(t == outs[0] for t in ins):
        printer.print_attribute(outs[0])
        return
    printer.print_string("(")
    printer.print_list(ins, printer.print_attribute)
    printer.print_string(") -> ")
    if len(outs) == 1:
        printer.print_attribute(outs[0])
    else:
        printer.print_string("(")
        printer.print_list(outs, printer.print_attribute)
        printer.print_string(")")


def _print_operands(printer: Printer, vs: Sequence[SSAValue]) -> None:
    printer.print_string(" ")
    printer.print_list(vs, printer.print_operand)


def _retype(vs: Sequence[UnresolvedOperand], types: Sequence[Attribute], parser: Parser) -> list[SSAValue]:
    """The parsed operands resolved at the types the trailing signature states."""
    if len(vs) != len(types):
        parser.raise_error(f"expected {len(vs)} operand types, got {len(types)}")
    return [parser.resolve_operand(v, t) for v, t in zip(vs, types, strict=True)]


def _attr_dict(parser: Parser) -> dict[str, Attribute]:
    return parser.parse_optional_attr_dict()


def _print_attr_dict(printer: Printer, op: IRDLOperation, skip: Sequence[str] = ()) -> None:
    attrs = {k: v for k, v in op.attributes.items() if k not in skip}
    if attrs:
        printer.print_op_attributes(attrs)


def _kw_list(parser: Parser, kw: str) -> list[int]:
    parser.parse_keyword(kw)
    parser.parse_punctuation("=")
    return _parse_int_list(parser)


def _same_shapes(op: IRDLOperation, check_elements: bool = True) -> None:
    r = _tensor(op, op.results[0], "result")
    for i, v in enumerate(op.operands):
        t = _tensor(op, v, f"operand #{i}")
        if shape(t) != shape(r):
            raise _fail(op, f"requires the same shape for all operands and results ({shape(t)} vs {shape(r)})")
        if check_elements and t.element_type != r.element_type:
            raise _fail(op, f"requires the same element type for all operands and results ({t} vs {r})")


# ---------------------------------------------------------------------------------------------
# elementwise ops: `stablehlo.add %a, %b : T` (or `: (T, T) -> U`)


class _Elementwise(IRDLOperation):
    """An elementwise op of operands and result of one shape and element type."""

    ARITY: ClassVar[int] = 1
    SAME_ELEMENT: ClassVar[bool] = True
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, *operands: SSAValue, result_type: Attribute | None = None):
        super().__init__(operands=list(operands), result_types=[result_type or operands[0].type])

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, len(vs))
        vs = _retype(vs, ins, parser)
        op = cls(*vs, result_type=outs[0])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        _print_operands(printer, self.operands)
        _print_attr_dict(printer, self)
        _print_trailing_types(printer, [v.type for v in self.operands], [self.result.type])

    def verify_(self) -> None:
        if len(self.operands) != self.ARITY:
            raise _fail(self, f"expects {self.ARITY} operands, got {len(self.operands)}")
        _same_shapes(self, self.SAME_ELEMENT)


class _Unary(_Elementwise):
    operand = operand_def(TensorType)


class _Binary(_Elementwise):
    ARITY: ClassVar[int] = 2
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)


def _unary(op_name: str, doc: str) -> type[_Unary]:
    cls = type(op_name.split(".")[1].title().replace("_", "") + "Op", (_Unary,), {"name": op_name, "__doc__": doc})
    return irdl_op_definition(cls)


def _binary(op_name: str, doc: str) -> type[_Binary]:
    cls = type(op_name.split(".")[1].title().replace("_", "") + "Op", (_Binary,), {"name": op_name, "__doc__": doc})
    return irdl_op_definition(cls)


AddOp = _binary("stablehlo.add", "Elementwise a + b.")
SubtractOp = _binary("stablehlo.subtract", "Elementwise a - b.")
MultiplyOp = _binary("stablehlo.multiply", "Elementwise a * b.")
DivideOp = _binary("stablehlo.divide", "Elementwise a / b.")
MaximumOp = _binary("stablehlo.maximum", "Elementwise max(a, b).")
MinimumOp = _binary("stablehlo.minimum", "Elementwise min(a, b).")
PowerOp = _binary("stablehlo.power", "Elementwise a ** b.")
AndOp = _binary("stablehlo.and", "Elementwise logical/bitwise and.")
OrOp = _binary("stablehlo.or", "Elementwise logical/bitwise or.")
RemainderOp = _binary("stablehlo.remainder", "Elementwise remainder (sign of the dividend).")
ExponentialOp = _unary("stablehlo.exponential", "Elementwise e ** x.")
TanhOp = _unary("stablehlo.tanh", "Elementwise tanh.")
NegateOp = _unary("stablehlo.negate", "Elementwise -x.")
RsqrtOp = _unary("stablehlo.rsqrt", "Elementwise 1 / sqrt(x).")
SqrtOp = _unary("stablehlo.sqrt", "Elementwise sqrt.")
LogisticOp = _unary("stablehlo.logistic", "Elementwise 1 / (1 + e ** -x).")
LogOp = _unary("stablehlo.log", "Elementwise natural log.")
AbsOp = _unary("stablehlo.abs", "Elementwise |x|.")
SineOp = _unary("stablehlo.sine", "Elementwise sin.")
CosineOp = _unary("stablehlo.cosine", "Elementwise cos.")
FloorOp = _unary("stablehlo.floor", "Elementwise floor.")
SignOp = _unary("stablehlo.sign", "Elementwise sign.")
NotOp = _unary("stablehlo.not", "Elementwise logical/bitwise not.")
Expm1Op = _unary("stablehlo.exponential_minus_one", "Elementwise e ** x - 1.")
Log1pOp = _unary("stablehlo.log_plus_one", "Elementwise log(1 + x).")


@irdl_op_definition
class IsFiniteOp(_Unary):
    """Elementwise: x is neither infinite nor NaN (an i1 tensor of x's shape)."""

    name = "stablehlo.is_finite"
    SAME_ELEMENT: ClassVar[bool] = False

    def verify_(self) -> None:
        super().verify_()
        et = element(self.result.type)
        if not (isinstance(et, IntegerType) and et.width.data == 1):
            raise _fail(self, f"result must be a tensor of i1, got {self.result.type}")


@irdl_op_definition
class ConvertOp(_Unary):
    """Elementwise conversion to the result's element type (float <-> int, widths)."""

    name = "stablehlo.convert"
    SAME_ELEMENT: ClassVar[bool] = False


@irdl_op_definition
class ClampOp(_Elementwise):
    """`stablehlo.clamp %min, %x, %max`: min and max are scalars or of x's shape."""

    name = "stablehlo.clamp"
    ARITY: ClassVar[int] = 3
    min = operand_def(TensorType)
    operand = operand_def(TensorType)
    max = operand_def(TensorType)

    def verify_(self) -> None:
        r = _tensor(self, self.result, "result")
        if self.operand.type != r:
            raise _fail(self, f"result type {r} differs from the operand's {self.operand.type}")
        for what, b in (("min", self.min), ("max", self.max)):
            t = _tensor(self, b, what)
            if shape(t) not in ((), shape(r)) or t.element_type != r.element_type:
                raise _fail(self, f"{what} {t} must be a scalar or of the operand's type {r}")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`stablehlo.select %pred, %a, %b : T_pred, T` (pred an i1 scalar or of a's shape)."""

    name = "stablehlo.select"
    pred = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, pred: SSAValue, a: SSAValue, b: SSAValue):
        super().__init__(operands=[pred, a, b], result_types=[a.type])

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        attrs = _attr_dict(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if isinstance(t, FunctionType):
            ins, res = list(t.inputs.data), t.outputs.data[0]
        else:
            parser.parse_punctuation(",")
            res = parser.parse_type()
            ins = [t, res, res]
        vs = _retype(vs, ins, parser)
        op = cls(*vs)
        op.attributes.update(attrs)
        if op.result.type != res:
            parser.raise_error(f"select result type {res} differs from its operands' {op.result.type}")
        return op

    def print(self, printer: Printer) -> None:
        _print_operands(printer, self.operands)
        _print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.pred.type)
        printer.print_string(", ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        p = _tensor(self, self.pred, "pred")
        if not (isinstance(p.element_type, IntegerType) and p.element_type.width.data == 1):
            raise _fail(self, f"pred must be a tensor of i1, got {p}")
        if self.on_true.type != self.on_false.type or self.on_true.type != self.result.type:
            raise _fail(self, f"branches and result must have one type ({self.on_true.type}, {self.on_false.type})")
        if shape(p) not in ((), shape(self.result.type)):
            raise _fail(self, f"pred shape {shape(p)} is neither a scalar nor the result's {shape(self.result.type)}")


@irdl_op_definition
class CompareOp(IRDLOperation):
    """`stablehlo.compare GT, %a, %b, FLOAT : (T, T) -> tensor<…xi1>`."""

    name = "stablehlo.compare"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    comparison_direction = prop_def(ComparisonDirectionAttr)
    compare_type = opt_prop_def(ComparisonTypeAttr)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        d = parser.parse_str_enum(ComparisonDirection)
        parser.parse_punctuation(",")
        vs = _parse_operands(parser)
        ct = parser.parse_optional_str_enum(ComparisonType)
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, 2)
        vs = _retype(vs, ins, parser)
        props: dict[str, Attribute] = {"comparison_direction": ComparisonDirectionAttr(d)}
        if ct is not None:
            props["compare_type"] = ComparisonTypeAttr(ct)
        return cls.create(operands=vs, result_types=outs, properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.comparison_direction.data.value},")
        _print_operands(printer, self.operands)
        if self.compare_type is not None:
            printer.print_string(f", {self.compare_type.data.value}")
        _print_attr_dict(printer, self)
        _print_trailing_types(printer, [v.type for v in self.operands], [self.result.type])

    def verify_(self) -> None:
        a, b, r = (_tensor(self, v, w) for v, w in ((self.lhs, "lhs"), (self.rhs, "rhs"), (self.result, "result")))
        if a != b:
            raise _fail(self, f"operands must have one type ({a}, {b})")
        if shape(r) != shape(a) or not (isinstance(r.element_type, IntegerType) and r.element_type.width.data == 1):
            raise _fail(self, f"result must be tensor<{'x'.join(map(str, shape(a)))}xi1>-shaped i1, got {r}")


# ---------------------------------------------------------------------------------------------
# constants and shapes


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """`stablehlo.constant dense<0xFF800000> : tensor<f32>` (a splat of -inf, read as a float)."""

    name = "stablehlo.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    @classmethod
    def parse(cls, parser: Parser):
        attrs = _attr_dict(parser)
        v = parser.parse_attribute()  # hex float literals read as bits (ipu.xdsl_fixes)
        if not isinstance(v, DenseIntOrFPElementsAttr):
            parser.raise_error(f"stablehlo.constant expects a dense elements value, got {v}")
        op = cls(v)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        _print_attr_dict(printer, self)
        printer.print_string(" ")
        printer.print_attribute(self.value)

    def verify_(self) -> None:
        if self.value.type != self.output.type:
            raise _fail(self, f"value type {self.value.type} differs from the result type {self.output.type}")


@irdl_op_definition
class IotaOp(IRDLOperation):
    """`stablehlo.iota dim = 0 : tensor<8x8xi32>`: the index along `iota_dimension`."""

    name = "stablehlo.iota"
    iota_dimension = prop_def(IntegerAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        parser.parse_keyword("dim")
        parser.parse_punctuation("=")
        d = parser.parse_integer()
        attrs = _attr_dict(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls.create(result_types=[t], properties={"iota_dimension": IntegerAttr(d, i64)}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" dim = {self.iota_dimension.value.data}")
        _print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.output.type)

    def verify_(self) -> None:
        r = _tensor(self, self.output, "result")
        if not 0 <= self.iota_dimension.value.data < max(len(shape(r)), 1):
            raise _fail(self, f"iota dimension {self.iota_dimension.value.data} is out of range for {r}")


class _OneOperand(IRDLOperation):
    """An op `%x, <kw> = […] : (T) -> U` with one integer-array property `PROP` spelled `KW`."""

    PROP: ClassVar[str] = ""
    KW: ClassVar[str] = ""
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        props = {}
        if cls.KW:
            props[cls.PROP] = _i64s(_kw_list(parser, cls.KW))
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, 1)
        vs = _retype(vs, ins, parser)
        return cls.create(operands=vs, result_types=outs, properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        _print_operands(printer, self.operands)
        if self.KW:
            printer.print_string(f", {self.KW} = ")
            _print_int_list(printer, _arr(self.properties[self.PROP]))
        _print_attr_dict(printer, self)
        printer.print_string(" : (")
        printer.print_attribute(self.operand.type)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class BroadcastInDimOp(_OneOperand):
    """`stablehlo.broadcast_in_dim %x, dims = [0] : (tensor<32xf32>) -> tensor<32x64xf32>`:
    operand dimension i becomes result dimension dims[i] (size equal, or 1 and broadcast)."""

    name = "stablehlo.broadcast_in_dim"
    PROP: ClassVar[str] = "broadcast_dimensions"
    KW: ClassVar[str] = "dims"
    broadcast_dimensions = prop_def(DenseArrayBase)

    def verify_(self) -> None:
        x, r = shape(_tensor(self, self.operand, "operand")), shape(_tensor(self, self.result, "result"))
        dims = _arr(self.broadcast_dimensions)
        if len(dims) != len(x):
            raise _fail(self, f"broadcast_dimensions {list(dims)} must name one result dimension per operand dimension")
        if len(set(dims)) != len(dims):
            raise _fail(self, f"broadcast_dimensions {list(dims)} repeat a dimension")
        for i, d in enumerate(dims):
            if not 0 <= d < len(r):
                raise _fail(self, f"broadcast dimension {d} is out of range for the result {list(r)}")
            if x[i] not in (1, r[d]):
                raise _fail(
                    self, f"operand dimension {i} (size {x[i]}) cannot broadcast to result dimension {d} ({r[d]})"
                )
        if element(self.operand.type) != element(self.result.type):
            raise _fail(self, "operand and result element types differ")


@irdl_op_definition
class TransposeOp(_OneOperand):
    """`stablehlo.transpose %x, dims = [1, 0] : (T) -> U`: result dim i is operand dim dims[i]."""

    name = "stablehlo.transpose"
    PROP: ClassVar[str] = "permutation"
    KW: ClassVar[str] = "dims"
    permutation = prop_def(DenseArrayBase)

    def verify_(self) -> None:
        x, r = shape(_tensor(self, self.operand, "operand")), shape(_tensor(self, self.result, "result"))
        p = _arr(self.permutation)
        if sorted(p) != list(range(len(x))):
            raise _fail(self, f"permutation {list(p)} is not a permutation of {len(x)} dimensions")
        if tuple(x[i] for i in p) != r:
            raise _fail(self, f"result shape {list(r)} is not the operand's {list(x)} permuted by {list(p)}")


@irdl_op_definition
class ReverseOp(_OneOperand):
    """`stablehlo.reverse %x, dims = [1] : tensor<4x8xf32>`: the operand with the order of the
    listed dimensions reversed (a descending jnp.sort is an ascending one reversed)."""

    name = "stablehlo.reverse"
    PROP: ClassVar[str] = "dimensions"
    KW: ClassVar[str] = "dims"
    dimensions = prop_def(DenseArrayBase)

    def verify_(self) -> None:
        x, r = shape(_tensor(self, self.operand, "operand")), shape(_tensor(self, self.result, "result"))
        dims = _arr(self.dimensions)
        if x != r or len(set(dims)) != len(dims) or any(not 0 <= d < len(x) for d in dims):
            raise _fail(self, f"dimensions {list(dims)} must be distinct dimensions of {list(x)}, the result its shape")


@irdl_op_definition
class ReshapeOp(_OneOperand):
    """`stablehlo.reshape %x : (T) -> U` (same element count)."""

    name = "stablehlo.reshape"

    def verify_(self) -> None:
        x, r = shape(_tensor(self, self.operand, "operand")), shape(_tensor(self, self.result, "result"))
        if math.prod(x) != math.prod(r):
            raise _fail(self, f"cannot reshape {list(x)} ({math.prod(x)} elements) to {list(r)} ({math.prod(r)})")


@irdl_op_definition
class SliceOp(IRDLOperation):
    """`stablehlo.slice %x [0:4, 2:8:2] : (T) -> U` (start:limit[:stride] per dimension)."""

    name = "stablehlo.slice"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    start_indices = prop_def(DenseArrayBase)
    limit_indices = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        x = parser.parse_unresolved_operand()

        def one() -> tuple[int, int, int]:
            a = parser.parse_integer()
            parser.parse_punctuation(":")
            b = parser.parse_integer()
            c = parser.parse_integer() if parser.parse_optional_punctuation(":") else 1
            return a, b, c

        ranges = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, one)
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, 1)
        (x,) = _retype([x], ins, parser)
        props = {k: _i64s([r[i] for r in ranges]) for i, k in enumerate(("start_indices", "limit_indices", "strides"))}
        return cls.create(operands=[x], result_types=outs, properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operand)
        parts = []
        for a, b, c in zip(_arr(self.start_indices), _arr(self.limit_indices), _arr(self.strides), strict=True):
            parts.append(f"{a}:{b}" + (f":{c}" if c != 1 else ""))
        printer.print_string(" [" + ", ".join(parts) + "]")
        _print_attr_dict(printer, self)
        printer.print_string(" : (")
        printer.print_attribute(self.operand.type)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        x, r = shape(_tensor(self, self.operand, "operand")), shape(_tensor(self, self.result, "result"))
        s, lim, st = _arr(self.start_indices), _arr(self.limit_indices), _arr(self.strides)
        if not len(s) == len(lim) == len(st) == len(x):
            raise _fail(self, f"needs one start, limit and stride per dimension of {list(x)}")
        want = []
        for d, (a, b, c) in enumerate(zip(s, lim, st, strict=True)):
            if not (0 <= a <= b <= x[d]) or c < 1:
                raise _fail(self, f"slice {a}:{b}:{c} is out of bounds for dimension {d} (size {x[d]})")
            want.append(-(-(b - a) // c))
        if tuple(want) != r:
            raise _fail(self, f"result shape {list(r)} differs from the slice's {want}")


def _verify_start_indices(op: DynamicSliceOp | DynamicUpdateSliceOp, x: tuple[int, ...]) -> None:
    """One integer scalar start index per dimension of the operand `x`."""
    if len(op.start_indices) != len(x):
        raise _fail(op, f"needs one start index per dimension of {list(x)}")
    for i, v in enumerate(op.start_indices):
        if shape(v.type) != () or not isinstance(element(v.type), IntegerType):
            raise _fail(op, f"start index #{i} must be an integer scalar tensor, got {v.type}")


@irdl_op_definition
class DynamicSliceOp(IRDLOperation):
    """`stablehlo.dynamic_slice %x, %i, %j, sizes = [4, 4] : (T, tensor<i32>, …) -> U`."""

    name = "stablehlo.dynamic_slice"
    operand = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    result = result_def(TensorType)
    slice_sizes = prop_def(DenseArrayBase)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        sizes = _kw_list(parser, "sizes")
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, len(vs))
        vs = _retype(vs, ins, parser)
        return cls.create(operands=vs, result_types=outs, properties={"slice_sizes": _i64s(sizes)}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        _print_operands(printer, self.operands)
        printer.print_string(", sizes = ")
        _print_int_list(printer, _arr(self.slice_sizes))
        _print_attr_dict(printer, self)
        _print_trailing_types(printer, [v.type for v in self.operands], [self.result.type])

    def verify_(self) -> None:
        x, r = shape(_tensor(self, self.operand, "operand")), shape(_tensor(self, self.result, "result"))
        sizes = _arr(self.slice_sizes)
        if len(sizes) != len(x):
            raise _fail(self, f"needs one size per dimension of {list(x)}")
        _verify_start_indices(self, x)
        if any(s > d for s, d in zip(sizes, x, strict=True)) or tuple(sizes) != r:
            raise _fail(self, f"slice sizes {list(sizes)} must fit {list(x)} and equal the result shape {list(r)}")


@irdl_op_definition
class DynamicUpdateSliceOp(IRDLOperation):
    """`stablehlo.dynamic_update_slice %x, %u, %i, %j : (T, U, tensor<i32>, tensor<i32>) -> T`:
    x with u written at the (clamped) start indices."""

    name = "stablehlo.dynamic_update_slice"
    operand = operand_def(TensorType)
    update = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, len(vs))
        vs = _retype(vs, ins, parser)
        return cls.create(operands=vs, result_types=outs, attributes=attrs)

    def print(self, printer: Printer) -> None:
        _print_operands(printer, self.operands)
        _print_attr_dict(printer, self)
        _print_trailing_types(printer, [v.type for v in self.operands], [self.result.type], functional=True)

    def verify_(self) -> None:
        x, u = shape(_tensor(self, self.operand, "operand")), shape(_tensor(self, self.update, "update"))
        if shape(self.result.type) != x or len(u) != len(x) or any(a > b for a, b in zip(u, x, strict=True)):
            raise _fail(self, f"the update {list(u)} must fit the operand {list(x)}, and the result be the operand's")
        _verify_start_indices(self, x)


@irdl_op_definition
class ConcatenateOp(IRDLOperation):
    """`stablehlo.concatenate %a, %b, dim = 1 : (T, T) -> U`."""

    name = "stablehlo.concatenate"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    dimension = prop_def(IntegerAttr)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        parser.parse_keyword("dim")
        parser.parse_punctuation("=")
        d = parser.parse_integer()
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, len(vs))
        vs = _retype(vs, ins, parser)
        return cls.create(
            operands=vs, result_types=outs, properties={"dimension": IntegerAttr(d, i64)}, attributes=attrs
        )

    def print(self, printer: Printer) -> None:
        _print_operands(printer, self.inputs)
        printer.print_string(f", dim = {self.dimension.value.data}")
        _print_attr_dict(printer, self)
        _print_trailing_types(printer, [v.type for v in self.inputs], [self.result.type])

    def verify_(self) -> None:
        r = shape(_tensor(self, self.result, "result"))
        d = self.dimension.value.data
        if not self.inputs or not 0 <= d < len(r):
            raise _fail(self, f"dimension {d} is out of range (or no inputs)")
        total = 0
        for i, v in enumerate(self.inputs):
            s = shape(_tensor(self, v, f"input #{i}"))
            if len(s) != len(r) or any(a != b for j, (a, b) in enumerate(zip(s, r, strict=True)) if j != d):
                raise _fail(self, f"input #{i} shape {list(s)} differs from the result {list(r)} off dimension {d}")
            total += s[d]
        if total != r[d]:
            raise _fail(self, f"inputs add up to {total} along dimension {d}, the result has {r[d]}")


@irdl_op_definition
class PadOp(IRDLOperation):
    """`stablehlo.pad %x, %v, low = [0, 1], high = [0, 0], interior = [0, 0] : (T, tensor<f32>) -> U`."""

    name = "stablehlo.pad"
    operand = operand_def(TensorType)
    padding_value = operand_def(TensorType)
    result = result_def(TensorType)
    edge_padding_low = prop_def(DenseArrayBase)
    edge_padding_high = prop_def(DenseArrayBase)
    interior_padding = prop_def(DenseArrayBase)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        lo = _kw_list(parser, "low")
        parser.parse_punctuation(",")
        hi = _kw_list(parser, "high")
        parser.parse_punctuation(",")
        inner = _kw_list(parser, "interior")
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, 2)
        vs = _retype(vs, ins, parser)
        props = {"edge_padding_low": _i64s(lo), "edge_padding_high": _i64s(hi), "interior_padding": _i64s(inner)}
        return cls.create(operands=vs, result_types=outs, properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        _print_operands(printer, self.operands)
        for kw, p in (
            ("low", self.edge_padding_low),
            ("high", self.edge_padding_high),
            ("interior", self.interior_padding),
        ):
            printer.print_string(f", {kw} = ")
            _print_int_list(printer, _arr(p))
        _print_attr_dict(printer, self)
        _print_trailing_types(printer, [v.type for v in self.operands], [self.result.type])

    def verify_(self) -> None:
        x, r = shape(_tensor(self, self.operand, "operand")), shape(_tensor(self, self.result, "result"))
        lo, hi, inner = _arr(self.edge_padding_low), _arr(self.edge_padding_high), _arr(self.interior_padding)
        if not len(lo) == len(hi) == len(inner) == len(x):
            raise _fail(self, f"needs low, high and interior padding per dimension of {list(x)}")
        want = tuple(a + b + n + max(n - 1, 0) * c for n, a, b, c in zip(x, lo, hi, inner, strict=True))
        if want != r:
            raise _fail(self, f"result shape {list(r)} differs from the padded shape {list(want)}")
        if shape(self.padding_value.type) != () or element(self.padding_value.type) != element(self.result.type):
            raise _fail(
                self, f"padding value must be a scalar of the result's element type, got {self.padding_value.type}"
            )


@irdl_op_definition
class GatherOp(IRDLOperation):
    """`"stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<…>, slice_sizes =
    array<i64: 1, 64>}>` (JAX prints it in the generic form also in its pretty text)."""

    name = "stablehlo.gather"
    operand = operand_def(TensorType)
    start_indices = operand_def(TensorType)
    result = result_def(TensorType)
    dimension_numbers = prop_def(GatherDimensionNumbersAttr)
    slice_sizes = prop_def(DenseArrayBase)
    indices_are_sorted = opt_prop_def(BoolAttr)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        x = shape(_tensor(self, self.operand, "operand"))
        idx = shape(_tensor(self, self.start_indices, "start_indices"))
        dn = self.dimension_numbers
        sizes = _arr(self.slice_sizes)
        if len(sizes) != len(x) or any(s > d for s, d in zip(sizes, x, strict=True)):
            raise _fail(self, f"slice_sizes {list(sizes)} must give one size within each dimension of {list(x)}")
        if not isinstance(element(self.start_indices.type), IntegerType):
            raise _fail(self, f"start_indices must be integers, got {self.start_indices.type}")
        for d in dn.get("collapsed_slice_dims"):
            if not 0 <= d < len(x) or sizes[d] != 1:
                raise _fail(self, f"collapsed slice dimension {d} must exist and have slice size 1")
        ivd = dn.get("index_vector_dim")
        n_index = idx[ivd] if ivd < len(idx) else 1
        if len(dn.get("start_index_map")) != n_index:
            raise _fail(self, f"start_index_map {list(dn.get('start_index_map'))} must have {n_index} entries")
        batch = [s for i, s in enumerate(idx) if i != ivd]
        offsets = [
            s
            for i, s in enumerate(sizes)
            if i not in dn.get("collapsed_slice_dims") and i not in dn.get("operand_batching_dims")
        ]
        r = shape(_tensor(self, self.result, "result"))
        if len(r) != len(batch) + len(offsets):
            raise _fail(
                self, f"result rank {len(r)} differs from {len(batch)} batch + {len(offsets)} offset dimensions"
            )


# ---------------------------------------------------------------------------------------------
# contractions and reductions


def _parse_dims_pair(parser: Parser) -> tuple[list[int], list[int]]:
    parser.parse_punctuation("=")
    a = _parse_int_list(parser)
    parser.parse_keyword("x")
    return a, _parse_int_list(parser)


@irdl_op_definition
class DotGeneralOp(IRDLOperation):
    """`stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
    precision = [DEFAULT, DEFAULT] : (T, T) -> U`: result dims are batch, lhs free, rhs free."""

    name = "stablehlo.dot_general"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    dot_dimension_numbers = prop_def(DotDimensionNumbersAttr)
    precision_config = opt_prop_def(ArrayAttr)
    algorithm = opt_prop_def(Attribute)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        lb = rb = lc = rc = []
        props: dict[str, Attribute] = {}
        while True:
            kw = parser.parse_optional_keyword_in(("batching_dims", "contracting_dims", "precision", "algorithm"))
            if kw is None:
                break
            if kw == "batching_dims":
                lb, rb = _parse_dims_pair(parser)
            elif kw == "contracting_dims":
                lc, rc = _parse_dims_pair(parser)
            elif kw == "precision":
                parser.parse_punctuation("=")
                ps = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: parser.parse_str_enum(Precision)
                )
                props["precision_config"] = ArrayAttr([PrecisionAttr(p) for p in ps])
            else:
                parser.parse_punctuation("=")
                props["algorithm"] = parser.parse_attribute()
            if parser.parse_optional_punctuation(",") is None:
                break
        props["dot_dimension_numbers"] = DotDimensionNumbersAttr(lb, rb, lc, rc)
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, 2)
        vs = _retype(vs, ins, parser)
        return cls.create(operands=vs, result_types=outs, properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        _print_operands(printer, self.operands)
        dn = self.dot_dimension_numbers
        lb, rb = dn.get("lhs_batching_dimensions"), dn.get("rhs_batching_dimensions")
        lc, rc = dn.get("lhs_contracting_dimensions"), dn.get("rhs_contracting_dimensions")
        if lb or rb:
            printer.print_string(f", batching_dims = [{', '.join(map(str, lb))}] x [{', '.join(map(str, rb))}]")
        printer.print_string(f", contracting_dims = [{', '.join(map(str, lc))}] x [{', '.join(map(str, rc))}]")
        if self.precision_config is not None:
            printer.print_string(", precision = [" + ", ".join(p.data.value for p in self.precision_config.data) + "]")
        if self.algorithm is not None:
            printer.print_string(", algorithm = ")
            printer.print_attribute(self.algorithm)
        _print_attr_dict(printer, self)
        _print_trailing_types(printer, [v.type for v in self.operands], [self.result.type])

    def result_shape(self) -> tuple[int, ...]:
        """Batch dims, then lhs free dims, then rhs free dims."""
        a, b = shape(self.lhs.type), shape(self.rhs.type)
        dn = self.dot_dimension_numbers
        lb, lc = dn.get("lhs_batching_dimensions"), dn.get("lhs_contracting_dimensions")
        rb, rc = dn.get("rhs_batching_dimensions"), dn.get("rhs_contracting_dimensions")
        return (
            *(a[d] for d in lb),
            *(a[d] for d in range(len(a)) if d not in lb and d not in lc),
            *(b[d] for d in range(len(b)) if d not in rb and d not in rc),
        )

    def verify_(self) -> None:
        a, b = shape(_tensor(self, self.lhs, "lhs")), shape(_tensor(self, self.rhs, "rhs"))
        dn = self.dot_dimension_numbers
        lb, lc = dn.get("lhs_batching_dimensions"), dn.get("lhs_contracting_dimensions")
        rb, rc = dn.get("rhs_batching_dimensions"), dn.get("rhs_contracting_dimensions")
        for side, dims, s in (("lhs", (*lb, *lc), a), ("rhs", (*rb, *rc), b)):
            if len(set(dims)) != len(dims) or any(not 0 <= d < len(s) for d in dims):
                raise _fail(
                    self, f"{side} batching and contracting dimensions {list(dims)} must be distinct and in range"
                )
        if len(lb) != len(rb) or len(lc) != len(rc):
            raise _fail(self, "lhs and rhs must name as many batching and as many contracting dimensions")
        for x, y in ((lb, rb), (lc, rc)):
            for i, j in zip(x, y, strict=True):
                if a[i] != b[j]:
                    raise _fail(self, f"lhs dimension {i} (size {a[i]}) and rhs dimension {j} (size {b[j]}) differ")
        if shape(self.result.type) != self.result_shape():
            raise _fail(
                self,
                f"result shape {list(shape(self.result.type))} differs from the expected {list(self.result_shape())}",
            )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """`stablehlo.return %x : tensor<f32>`: ends a reduction body."""

    name = "stablehlo.return"
    results_ = var_operand_def()
    traits = traits_def(IsTerminator())

    @classmethod
    def parse(cls, parser: Parser):
        vs = _parse_operands(parser)
        if vs:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            vs = _retype(vs, types, parser)
        return cls.create(operands=vs)

    def print(self, printer: Printer) -> None:
        if self.operands:
            _print_operands(printer, self.operands)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.operands], printer.print_attribute)


_REDUCERS = (
    "stablehlo.add",
    "stablehlo.maximum",
    "stablehlo.minimum",
    "stablehlo.multiply",
    "stablehlo.and",
    "stablehlo.or",
)


def _simple_reducer(op: IRDLOperation) -> str | None:
    """The op name when a one-input reduction's body is one binary op of its two arguments."""
    b = op.regions[0].block
    ops = list(b.ops)
    if len(op.results) != 1 or len(ops) != 2 or ops[0].name not in _REDUCERS:
        return None
    if tuple(ops[0].operands) != tuple(b.args) or tuple(ops[1].operands) != (ops[0].results[0],):
        return None
    return ops[0].name


def _pad_pairs(padding: DenseIntOrFPElementsAttr | None, n: int) -> list[tuple[int, int]]:
    """(low, high) padding per dimension from a `tensor<Nx2xi64>` (a splat: the same pair)."""
    if padding is None:
        return [(0, 0)] * n
    flat = [int(x) for x in padding.get_values()]
    if len(flat) == 1:
        flat = flat * (2 * n)
    return [(flat[2 * k], flat[2 * k + 1]) for k in range(len(flat) // 2)]


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """`stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (T, tensor<f32>)
    -> U`, or the region form `… across dimensions = [1] : (…) -> U reducer(%a: tensor<f32>, %b:
    tensor<f32>) { … stablehlo.return %r : tensor<f32> }`."""

    name = "stablehlo.reduce"
    inputs = var_operand_def(TensorType)
    init_values = var_operand_def(TensorType)
    res = var_result_def(TensorType)
    dimensions = prop_def(DenseArrayBase)
    body = region_def("single_block")
    irdl_options = (SameVariadicOperandSize(),)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        pairs = []  # `(%x init: %c)`, one group per input, comma separated
        while True:
            parser.parse_punctuation("(")
            x = parser.parse_unresolved_operand()
            parser.parse_keyword("init")
            parser.parse_punctuation(":")
            pairs.append((x, parser.parse_unresolved_operand()))
            parser.parse_punctuation(")")
            if parser.parse_optional_punctuation(",") is None:
                break
        applies = None
        if parser.parse_optional_keyword("applies"):
            applies = parser.parse_identifier()
        parser.parse_keyword("across")
        dims = _kw_list(parser, "dimensions")
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, 2 * len(pairs))
        vs = [x for x, _ in pairs] + [c for _, c in pairs]
        vs = _retype(vs, ins, parser)
        if applies is not None:
            if applies not in _REDUCERS:
                parser.raise_error(f"stablehlo.reduce applies {applies}: not a binary reduction op")
            scalars = [v.type for v in vs[len(pairs) :]]
            block = Block(arg_types=[*scalars, *scalars])
            n = len(pairs)
            body_ops = [
                _OP_BY_NAME[applies](block.args[i], block.args[n + i], result_type=scalars[i]) for i in range(n)
            ]
            block.add_ops([*body_ops, ReturnOp.create(operands=[o.results[0] for o in body_ops])])
            region = Region(block)
        else:
            parser.parse_keyword("reducer")
            # one `(%lhs_i: T, %rhs_i: T)` group per input; the block takes every lhs, then every rhs
            groups = [parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument) for _ in pairs]
            if any(len(gr) != 2 for gr in groups):
                parser.raise_error("stablehlo.reduce: each reducer group takes two arguments (lhs, rhs)")
            ordered = [gr[0] for gr in groups] + [gr[1] for gr in groups]
            region = parser.parse_region(ordered)
        return cls.create(
            operands=vs, result_types=outs, properties={"dimensions": _i64s(dims)}, attributes=attrs, regions=[region]
        )

    def simple_reducer(self) -> str | None:
        """The op name when the body is one binary op of its two arguments (then printed as
        `applies <op>`), else None."""
        return _simple_reducer(self)

    def print(self, printer: Printer) -> None:
        printer.print_list(
            list(zip(self.inputs, self.init_values, strict=True)),
            lambda p: (
                printer.print_string("("),
                printer.print_operand(p[0]),
                printer.print_string(" init: "),
                printer.print_operand(p[1]),
                printer.print_string(")"),
            ),
        )
        simple = self.simple_reducer()
        if simple:
            printer.print_string(f" applies {simple}")
        printer.print_string(" across dimensions = ")
        _print_int_list(printer, _arr(self.dimensions))
        _print_attr_dict(printer, self)
        _print_trailing_types(printer, [v.type for v in self.operands], [r.type for r in self.res])
        if simple:
            return
        b = self.body.block
        n = len(self.inputs)
        printer.print_string(" reducer")
        for i in range(n):
            printer.print_string("(" if i == 0 else " (")
            printer.print_list((b.args[i], b.args[n + i]), printer.print_block_argument)
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        dims = _arr(self.dimensions)
        if len(self.inputs) != len(self.res) or not self.inputs:
            raise _fail(self, "needs as many inputs, init values and results (at least one)")
        for i, (x, c, r) in enumerate(zip(self.inputs, self.init_values, self.res, strict=True)):
            xs = shape(_tensor(self, x, f"input #{i}"))
            if len(set(dims)) != len(dims) or any(not 0 <= d < len(xs) for d in dims):
                raise _fail(self, f"dimensions {list(dims)} must be distinct dimensions of {list(xs)}")
            want = tuple(s for d, s in enumerate(xs) if d not in dims)
            if shape(r.type) != want:
                raise _fail(self, f"result #{i} shape {list(shape(r.type))} differs from the reduced {list(want)}")
            if shape(c.type) != () or element(c.type) != element(x.type):
                raise _fail(self, f"init value #{i} must be a scalar of the input's element type, got {c.type}")
        b = self.body.block
        if len(b.args) != 2 * len(self.inputs) or not isinstance(b.last_op, ReturnOp):
            raise _fail(self, f"body must take {2 * len(self.inputs)} scalars and end in stablehlo.return")


@irdl_op_definition
class CustomCallOp(IRDLOperation):
    """`stablehlo.custom_call @target(%x) {backend_config = …} : (T) -> U`: an opaque call
    (JAX emits it e.g. for sharding annotations); the conversion accepts the targets it knows."""

    name = "stablehlo.custom_call"
    inputs = var_operand_def()
    res = var_result_def()
    call_target_name = prop_def(StringAttr)
    api_version = opt_prop_def(Attribute)
    backend_config = opt_prop_def(Attribute)
    has_side_effect = opt_prop_def(Attribute)
    called_computations = opt_prop_def(Attribute)
    operand_layouts = opt_prop_def(Attribute)
    result_layouts = opt_prop_def(Attribute)
    output_operand_aliases = opt_prop_def(Attribute)
    traits = traits_def()

    @classmethod
    def parse(cls, parser: Parser):
        sym = parser.parse_symbol_name()
        vs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        attrs = _attr_dict(parser)
        ins, outs = _parse_trailing_types(parser, len(vs))
        vs = _retype(vs, ins, parser)
        props = {"call_target_name": sym}
        for k in (
            "api_version",
            "backend_config",
            "has_side_effect",
            "called_computations",
            "operand_layouts",
            "result_layouts",
            "output_operand_aliases",
        ):
            if k in attrs:
                props[k] = attrs.pop(k)
        op = cls.create(operands=vs, result_types=outs, attributes=attrs)
        op.properties.update(props)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(SymbolRefAttr(self.call_target_name.data))
        printer.print_string("(")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(")")
        extra = {k: v for k, v in self.properties.items() if k != "call_target_name"}
        extra.update(self.attributes)
        if extra:
            printer.print_op_attributes(extra)
        _print_trailing_types(printer, [v.type for v in self.inputs], [r.type for r in self.res], functional=True)

    def verify_(self) -> None:
        if not self.call_target_name.data:
            raise _fail(self, "needs a call target name")


def _window_count(n: int, dilation: int, pads: tuple[int, int], window: int, window_dilation: int, stride: int) -> int:
    """How many positions a window takes along an axis of `n` elements, the axis dilated and
    padded, the window dilated, moved by `stride` (StableHLO's convolution and reduce_window)."""
    size = (n - 1) * dilation + 1 + sum(pads)
    span = (window - 1) * window_dilation + 1
    return (size - span) // stride + 1 if size >= span else 0


_WINDOW_KEYS = ("stride", "pad", "lhs_dilate", "rhs_dilate", "reverse")


@irdl_op_definition
class ConvolutionOp(IRDLOperation):
    """`stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
    window = {stride = [2, 2], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1],
    reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} :
    (T, K) -> U`: an N-D convolution (flax's `nn.Conv`, `lax.conv_general_dilated`)."""

    name = "stablehlo.convolution"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    dimension_numbers = prop_def(ConvDimensionNumbersAttr)
    window_strides = opt_prop_def(DenseArrayBase)
    padding = opt_prop_def(DenseIntOrFPElementsAttr)
    lhs_dilation = opt_prop_def(DenseArrayBase)
    rhs_dilation = opt_prop_def(DenseArrayBase)
    window_reversal = opt_prop_def(DenseArrayBase)
    feature_group_count = prop_def(IntegerAttr)
    batch_group_count = prop_def(IntegerAttr)
    precision_config = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        vs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_keyword("dim_numbers")
        parser.parse_punctuation("=")
        props: dict[str, Attribute] = {
            "dimension_numbers": ConvDimensionNumbersAttr(*ConvDimensionNumbersAttr.parse_layouts(parser))
        }
        parser.parse_punctuation(",")
        parser.parse_keyword("window")
        parser.parse_punctuation("=")
        parser.parse_punctuation("{")
        while parser.parse_optional_punctuation("}") is None:
            key = parser.parse_identifier()
            if key not in _WINDOW_KEYS:
                parser.raise_error(f"stablehlo.convolution: unknown window field '{key}'")
            parser.parse_punctuation("=")
            if key == "pad":
                pads = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _parse_int_list(parser))
                props["padding"] = DenseIntOrFPElementsAttr.from_list(
                    TensorType(i64, (len(pads), 2)), [int(x) for p in pads for x in p]
                )
            elif key == "reverse":
                flags = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_boolean)
                props["window_reversal"] = DenseArrayBase.from_list(IntegerType(1), [int(f) for f in flags])
            else:
                name = {"stride": "window_strides", "lhs_dilate": "lhs_dilation", "rhs_dilate": "rhs_dilation"}[key]
                props[name] = _i64s(_parse_int_list(parser))
            parser.parse_optional_punctuation(",")
        attrs = _attr_dict(parser)
        for k in ("feature_group_count", "batch_group_count", "precision_config"):
            if k in attrs:
                props[k] = attrs.pop(k)
        for k in ("feature_group_count", "batch_group_count"):
            props.setdefault(k, IntegerAttr(1, i64))
        ins, outs = _parse_trailing_types(parser, 2)
        vs = _retype(vs, ins, parser)
        return cls.create(operands=vs, result_types=outs, properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(f") dim_numbers = {self.dimension_numbers.layouts_text()}, window = {{")
        parts = []
        if self.window_strides is not None:
            parts.append(f"stride = [{', '.join(map(str, _arr(self.window_strides)))}]")
        if self.padding is not None:
            parts.append("pad = [" + ", ".join(f"[{lo}, {hi}]" for lo, hi in self.pads()) + "]")
        if self.lhs_dilation is not None:
            parts.append(f"lhs_dilate = [{', '.join(map(str, _arr(self.lhs_dilation)))}]")
        if self.rhs_dilation is not None:
            parts.append(f"rhs_dilate = [{', '.join(map(str, _arr(self.rhs_dilation)))}]")
        if self.window_reversal is not None:
            parts.append("reverse = [" + ", ".join("true" if f else "false" for f in _arr(self.window_reversal)) + "]")
        printer.print_string(", ".join(parts) + "}")
        extra: dict[str, Attribute] = {
            "batch_group_count": self.batch_group_count,
            "feature_group_count": self.feature_group_count,
        }
        if self.precision_config is not None:
            extra["precision_config"] = self.precision_config
        extra.update(self.attributes)
        printer.print_op_attributes(extra)
        _print_trailing_types(printer, [v.type for v in self.operands], [self.result.type], functional=True)

    def rank(self) -> int:
        return len(shape(self.lhs.type)) - 2

    def pads(self) -> list[tuple[int, int]]:
        return _pad_pairs(self.padding, self.rank())

    def strides(self) -> tuple[int, ...]:
        return _arr(self.window_strides) or (1,) * self.rank()

    def lhs_dilations(self) -> tuple[int, ...]:
        return _arr(self.lhs_dilation) or (1,) * self.rank()

    def rhs_dilations(self) -> tuple[int, ...]:
        return _arr(self.rhs_dilation) or (1,) * self.rank()

    def verify_(self) -> None:
        x, w, r = (
            shape(_tensor(self, v, n)) for v, n in ((self.lhs, "lhs"), (self.rhs, "rhs"), (self.result, "result"))
        )
        dn, n = self.dimension_numbers, len(x) - 2
        for which, size, roles in (("lhs", len(x), "bf"), ("rhs", len(w), "io"), ("out", len(r), "bf")):
            lay = dn.layout(which)
            if len(lay) != size or sorted(lay) != sorted([*roles, *map(str, range(size - 2))]):
                raise _fail(self, f"{which} layout [{', '.join(lay)}] does not name each of {size} dimensions once")
        for name, vals in (
            ("window strides", self.strides()),
            ("lhs dilations", self.lhs_dilations()),
            ("rhs dilations", self.rhs_dilations()),
        ):
            if len(vals) != n or any(v < 1 for v in vals):
                raise _fail(self, f"{name} {list(vals)} must be {n} positive values")
        if len(self.pads()) != n:
            raise _fail(self, f"padding must give {n} (low, high) pairs")
        g, bg = self.feature_group_count.value.data, self.batch_group_count.value.data
        cin, cw = x[dn.dims("lhs", "f")], w[dn.dims("rhs", "i")]
        cout = w[dn.dims("rhs", "o")]
        if g < 1 or bg < 1 or cin != cw * g or cout % g:
            raise _fail(
                self, f"{cin} input features, kernel input features {cw} and {cout} outputs do not form {g} groups"
            )
        want = [0] * len(r)
        want[dn.dims("out", "b")] = x[dn.dims("lhs", "b")] // bg
        want[dn.dims("out", "f")] = cout
        for k, (xd, wd, od) in enumerate(zip(dn.spatial("lhs"), dn.spatial("rhs"), dn.spatial("out"), strict=True)):
            want[od] = _window_count(
                x[xd], self.lhs_dilations()[k], self.pads()[k], w[wd], self.rhs_dilations()[k], self.strides()[k]
            )
        if tuple(want) != r:
            raise _fail(self, f"result shape {list(r)} differs from the expected {want}")


@irdl_op_definition
class ReduceWindowOp(IRDLOperation):
    """`"stablehlo.reduce_window"(%x, %init) <{window_dimensions = array<i64: 1, 3, 3, 1>, …}>
    ({ ^bb0(%a: tensor<f32>, %b: tensor<f32>): … stablehlo.return %r })`: a pooling window
    (flax's `max_pool`, `avg_pool`); JAX writes it in the generic form in both spellings."""

    name = "stablehlo.reduce_window"
    inputs = var_operand_def(TensorType)
    init_values = var_operand_def(TensorType)
    res = var_result_def(TensorType)
    window_dimensions = prop_def(DenseArrayBase)
    window_strides = opt_prop_def(DenseArrayBase)
    base_dilations = opt_prop_def(DenseArrayBase)
    window_dilations = opt_prop_def(DenseArrayBase)
    padding = opt_prop_def(DenseIntOrFPElementsAttr)
    body = region_def("single_block")
    irdl_options = (SameVariadicOperandSize(),)
    traits = traits_def(Pure())

    def pads(self) -> list[tuple[int, int]]:
        return _pad_pairs(self.padding, len(_arr(self.window_dimensions)))

    def simple_reducer(self) -> str | None:
        """The op name when the body is one binary op of its two arguments."""
        return _simple_reducer(self)

    def verify_(self) -> None:
        win = _arr(self.window_dimensions)
        if len(self.inputs) != len(self.res) or not self.inputs:
            raise _fail(self, "needs as many inputs, init values and results (at least one)")
        xs = shape(_tensor(self, self.inputs[0], "input #0"))
        n = len(xs)
        strides = _arr(self.window_strides) or (1,) * n
        base, wdil = _arr(self.base_dilations) or (1,) * n, _arr(self.window_dilations) or (1,) * n
        for name, vals in (
            ("window dimensions", win),
            ("strides", strides),
            ("base dilations", base),
            ("window dilations", wdil),
        ):
            if len(vals) != n or any(v < 1 for v in vals):
                raise _fail(self, f"{name} {list(vals)} must be {n} positive values")
        pads = self.pads()
        if len(pads) != n:
            raise _fail(self, f"padding must give {n} (low, high) pairs")
        want = []
        for k in range(n):
            want.append(_window_count(xs[k], base[k], pads[k], win[k], wdil[k], strides[k]))
        for i, r in enumerate(self.res):
            if shape(r.type) != tuple(want):
                raise _fail(self, f"result #{i} shape {list(shape(r.type))} differs from the expected {want}")
        b = self.body.block
        if len(b.args) != 2 * len(self.inputs) or not isinstance(b.last_op, ReturnOp):
            raise _fail(self, f"body must take {2 * len(self.inputs)} scalars and end in stablehlo.return")


@irdl_op_definition
class WhileOp(IRDLOperation):
    """`%r:2 = stablehlo.while(%a = %x, %b = %y) : T, U cond { … stablehlo.return %p : tensor<i1> }
    do { … stablehlo.return %a2, %b2 : T, U }`: both regions take the carried values as their
    block arguments (named in the header); the body returns the next ones."""

    name = "stablehlo.while"
    operand = var_operand_def(TensorType)
    res = var_result_def(TensorType)
    cond = region_def("single_block")
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    @classmethod
    def parse(cls, parser: Parser):
        def pair():  # noqa: ANN202 -- `%arg = %value`
            arg = parser.parse_argument(expect_type=False)
            parser.parse_punctuation("=")
            return arg, parser.parse_operand()

        pairs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, pair)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type) if pairs else []
        if len(types) != len(pairs):
            parser.raise_error(f"stablehlo.while: {len(pairs)} carried values, {len(types)} types")
        attrs = _attr_dict(parser)
        args = [a.resolve(t) for (a, _), t in zip(pairs, types, strict=True)]
        parser.parse_keyword("cond")
        cond = parser.parse_region(args)
        parser.parse_keyword("do")
        body = parser.parse_region([a.resolve(t) for (a, _), t in zip(pairs, types, strict=True)])
        return cls.create(operands=[v for _, v in pairs], result_types=types, attributes=attrs, regions=[cond, body])

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        args = self.body.block.args
        printer.print_list(
            list(zip(args, self.operand, strict=True)),
            lambda p: (printer.print_operand(p[0]), printer.print_string(" = "), printer.print_operand(p[1])),
        )
        printer.print_string(") : ")
        printer.print_list([r.type for r in self.res], printer.print_attribute)
        _print_attr_dict(printer, self)
        # both regions' arguments are the header's names (xDSL 0.75's printer keeps its SSA names
        # in `_ssa_values`; the header named the body's)
        for c, b in zip(self.cond.block.args, args, strict=True):
            printer._ssa_values[c] = printer._ssa_values[b]  # noqa: SLF001
        printer.print_string(" cond ")
        printer.print_region(self.cond, print_entry_block_args=False)
        printer.print_string(" do ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        types = [v.type for v in self.operand]
        if [r.type for r in self.res] != types:
            raise _fail(self, "results must have the carried values' types")
        for region in (self.cond, self.body):
            if [a.type for a in region.block.args] != types:
                raise _fail(self, "each region takes the carried values as its arguments")


@irdl_op_definition
class SortOp(IRDLOperation):
    """`"stablehlo.sort"(%x, %iota) <{dimension = 1, is_stable = true}> ({ ^bb0(%a, %b, %i, %j):
    … stablehlo.return %less : tensor<i1> })`: the operands sorted together along `dimension` by
    the comparator (true when its first pair should come first); jnp.sort and argsort. Written in
    the generic form, as JAX prints it."""

    name = "stablehlo.sort"
    operand = var_operand_def(TensorType)
    res = var_result_def(TensorType)
    dimension = prop_def(IntegerAttr)
    is_stable = opt_prop_def(BoolAttr)
    comparator = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def verify_(self) -> None:
        shapes = {tuple(v.type.get_shape()) for v in (*self.operand, *self.res)}
        if len(shapes) != 1 or len(self.operand) != len(self.res):
            raise VerifyException("stablehlo.sort: every operand and result has one shape, a result per operand")
        rank = len(shapes.pop())
        if not 0 <= self.dimension.value.data < max(rank, 1):
            raise VerifyException(f"stablehlo.sort: dimension {self.dimension.value.data} of a rank-{rank} tensor")
        if len(self.comparator.block.args) != 2 * len(self.operand):
            raise VerifyException("stablehlo.sort: the comparator takes two scalars per operand")


_OPS = [
    AddOp, SubtractOp, MultiplyOp, DivideOp, MaximumOp, MinimumOp, PowerOp, AndOp, OrOp, RemainderOp,
    ExponentialOp, TanhOp, NegateOp, RsqrtOp, SqrtOp, LogisticOp, LogOp, AbsOp, SineOp, CosineOp, FloorOp, SignOp,
    NotOp, Expm1Op, Log1pOp, IsFiniteOp, ConvertOp, ClampOp, SelectOp, CompareOp, ConstantOp, IotaOp, BroadcastInDimOp,
    TransposeOp, ReshapeOp, SliceOp, DynamicSliceOp, ConcatenateOp, PadOp, GatherOp, DotGeneralOp, ReduceOp,
    ReturnOp, CustomCallOp, ConvolutionOp, ReduceWindowOp, WhileOp, DynamicUpdateSliceOp, SortOp, ReverseOp,
]  # fmt: skip
_OP_BY_NAME = {o.name: o for o in _OPS}

StableHLO = Dialect(
    "stablehlo",
    _OPS,
    [
        ComparisonDirectionAttr,
        ComparisonTypeAttr,
        PrecisionAttr,
        DotDimensionNumbersAttr,
        GatherDimensionNumbersAttr,
        ConvDimensionNumbersAttr,
    ],
)
