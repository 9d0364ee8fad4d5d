"""The `tilemap` dialect: per-tile buffers, kernel runs over tile groups, logical moves.

A `!tilemap.buffer<64x48xf16, tiles = [0, 1472], memory = interleaved>` is one block of that
shape on every tile of the group, at one shared address. Host streams and weights keep their
logical view (`tensor` type + `#plan.layout`); moves carry their transfer families as a dense
table (principle 1: the IR does not grow with the tile count).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    TypeAttribute,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute
from xdsl.irdl import (
    AnyOf,
    BaseAttr,
    IRDLOperation,
    attr_def,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_attr_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

from ipu.dialects.graph import GaussianAttr
from ipu.dialects.plan import LayoutAttr
from ipu.dialects.repeat import RepeatBase
from ipu.target.mapping import TileMapping

MOVE_COLUMNS = 16  # TRANSFER_COLUMNS without `start`


def table_attr(a: np.ndarray) -> DenseIntOrFPElementsAttr:
    """An int32 [n, c] table as a dense attribute (printed as hex when large)."""
    a = np.ascontiguousarray(a, dtype=np.int32)
    from xdsl.dialects.builtin import BytesAttr

    return DenseIntOrFPElementsAttr(TensorType(i32, list(a.shape)), BytesAttr(a.tobytes()))


def table_of(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    shape = tuple(attr.get_shape())
    return np.frombuffer(attr.data.data, dtype=np.int32).reshape(shape).astype(np.int64)


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """One equal-shaped block per tile of `tiles = [first, count]`."""

    name = "tilemap.buffer"
    block: ArrayAttr[IntAttr]
    element_type: Attribute
    first: IntAttr
    count: IntAttr
    memory: StringAttr

    def __init__(self, block: Sequence[int], element_type: Attribute, first: int, count: int, memory: str):
        super().__init__(
            ArrayAttr(IntAttr(b) for b in block),
            element_type,
            IntAttr(first),
            IntAttr(count),
            StringAttr(memory),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        shape, el = parser.parse_ranked_shape()
        parser.parse_punctuation(",")
        parser.parse_keyword("tiles")
        parser.parse_punctuation("=")
        first, count = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        parser.parse_punctuation(",")
        parser.parse_keyword("memory")
        parser.parse_punctuation("=")
        mem = parser.parse_identifier()
        parser.parse_punctuation(">")
        return BufferType(shape, el, first, count, mem).parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + "".join(f"{b.data}x" for b in self.block.data))
        printer.print_attribute(self.element_type)
        printer.print_string(f", tiles = [{self.first.data}, {self.count.data}], memory = {self.memory.data}>")

    def verify(self) -> None:
        if self.count.data <= 0 or self.first.data < 0:
            raise VerifyException("tilemap.buffer: tile range must be non-empty")
        if self.memory.data not in ("standard", "interleaved"):
            raise VerifyException("tilemap.buffer: memory must be standard or interleaved")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(b.data for b in self.block.data)

    @property
    def esize(self) -> int:
        return self.element_type.bitwidth // 8  # type: ignore[attr-defined]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.esize


AnyBuffer = BaseAttr(BufferType)


@irdl_attr_definition
class MappingAttr(ParametrizedAttribute):
    """`#tilemap.mapping<block = 64, width = 8>` (or `<identity>`): the logical-to-physical tile
    mapping of a function (`ipu.target.mapping.TileMapping`); two integers at any tile count."""

    name = "tilemap.mapping"
    block: IntAttr
    width: IntAttr

    def __init__(self, block: int, width: int):
        super().__init__(IntAttr(block), IntAttr(width))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        if parser.parse_optional_keyword("identity"):
            parser.parse_punctuation(">")
            return MappingAttr(1, 1).parameters
        vals = []
        for i, key in enumerate(("block", "width")):
            if i:
                parser.parse_punctuation(",")
            parser.parse_keyword(key)
            parser.parse_punctuation("=")
            vals.append(parser.parse_integer(allow_negative=False))
        parser.parse_punctuation(">")
        return MappingAttr(*vals).parameters

    def print_parameters(self, printer: Printer) -> None:
        if self.mapping.identity:
            printer.print_string("<identity>")
        else:
            printer.print_string(f"<block = {self.block.data}, width = {self.width.data}>")

    def verify(self) -> None:
        b, w = self.block.data, self.width.data
        if b < 1 or w < 1 or b % w:
            raise VerifyException(f"tilemap.mapping: width {w} must be positive and divide block {b}")

    @property
    def mapping(self) -> TileMapping:
        return TileMapping(self.block.data, self.width.data)


MAPPING_ATTR = "tilemap.mapping"  # a mapped function's MappingAttr (its presence marks it mapped)
PLAN_MAPPING_ATTR = "plan.tile_mapping"  # a plan function's screened mapping, applied by map-tiles


def mapping_of(op: Operation) -> TileMapping:
    a = op.attributes.get(MAPPING_ATTR)
    return a.mapping if isinstance(a, MappingAttr) else TileMapping()


def _check_view(op: IRDLOperation, tensor: TensorType, layout: LayoutAttr, buf: BufferType) -> None:
    lay = layout.layout(tuple(tensor.get_shape()))
    if lay.block != buf.shape:
        raise VerifyException(f"{op.name}: layout block {lay.block} does not match buffer block {buf.shape}")
    if (lay.first_tile, lay.tiles) != (buf.first.data, buf.count.data):
        raise VerifyException(f"{op.name}: layout tiles do not match the buffer's tile range")
    if tensor.element_type != buf.element_type:
        raise VerifyException(f"{op.name}: element types differ")


@irdl_op_definition
class HostWriteOp(IRDLOperation):
    """Run input `index` streamed by the host into every holder's block."""

    name = "tilemap.host_write"
    sym_name = attr_def(StringAttr)
    index = attr_def(IntegerAttr[I64])
    tensor = attr_def(TensorType)
    layout = attr_def(LayoutAttr)
    result = result_def(AnyBuffer)
    assembly_format = "$sym_name `index` $index `:` $tensor `layout` qualified($layout) attr-dict `->` type($result)"

    def verify_(self) -> None:
        _check_view(self, self.tensor, self.layout, self.result.type)


@irdl_op_definition
class WeightOp(IRDLOperation):
    """A weight loaded by the `initialize` call."""

    name = "tilemap.weight"
    sym_name = attr_def(StringAttr)
    init = attr_def(AnyOf([BaseAttr(GaussianAttr), BaseAttr(DenseIntOrFPElementsAttr)]))
    tensor = attr_def(TensorType)
    layout = attr_def(LayoutAttr)
    result = result_def(AnyBuffer)
    assembly_format = "$sym_name $init `:` $tensor `layout` qualified($layout) attr-dict `->` type($result)"

    def verify_(self) -> None:
        _check_view(self, self.tensor, self.layout, self.result.type)


@irdl_op_definition
class HostReadOp(IRDLOperation):
    """Run output `index`, read by the host from one holder of each block."""

    name = "tilemap.host_read"
    sym_name = attr_def(StringAttr)
    index = attr_def(IntegerAttr[I64])
    input = operand_def(AnyBuffer)
    tensor = attr_def(TensorType)
    layout = attr_def(LayoutAttr)
    assembly_format = (
        "$sym_name `index` $index $input `:` type($input) `as` $tensor `layout` qualified($layout) attr-dict"
    )

    def verify_(self) -> None:
        _check_view(self, self.tensor, self.layout, self.input.type)


@irdl_op_definition
class CheckpointOp(IRDLOperation):
    """Sample graph value `value` (its stable name, `ipu.dialects.value_names`) for the numerical check."""

    name = "tilemap.checkpoint"
    sym_name = attr_def(StringAttr)
    index = attr_def(IntegerAttr[I64])
    value = attr_def(StringAttr)
    input = operand_def(AnyBuffer)
    tensor = attr_def(TensorType)
    layout = attr_def(LayoutAttr)
    aspect = opt_attr_def(StringAttr)
    assembly_format = (
        "$sym_name `index` $index `value` $value $input `:` type($input) `as` $tensor "
        "`layout` qualified($layout) attr-dict"
    )

    def verify_(self) -> None:
        _check_view(self, self.tensor, self.layout, self.input.type)


@irdl_op_definition
class RunOp(IRDLOperation):
    """Kernel `kernel` run by every tile of the result's group on its own blocks."""

    name = "tilemap.run"
    kernel = attr_def(StringAttr)
    inputs = var_operand_def(AnyBuffer)
    params = attr_def(DictionaryAttr)
    result = result_def(AnyBuffer)
    inplace = opt_attr_def(IntegerAttr[I64])
    assembly_format = "$kernel `(` $inputs `)` $params attr-dict `:` `(` type($inputs) `)` `->` type($result)"

    def inplace_operand(self) -> int | None:
        """Index of the operand whose buffer the result overwrites (read, then written)."""
        return self.inplace.value.data if self.inplace is not None else None

    def verify_(self) -> None:
        r = self.result.type
        ip = self.inplace_operand()
        if ip is not None and (not 0 <= ip < len(self.inputs) or self.inputs[ip].type != r):
            raise VerifyException("tilemap.run: the in-place operand must exist and have the result's type")
        for v in self.inputs:
            t = v.type
            if (t.first.data, t.count.data) != (r.first.data, r.count.data):
                raise VerifyException("tilemap.run: inputs must live on the result's tile group")

    def param(self, name: str) -> int:
        a = self.params.data.get(name)
        if not isinstance(a, IntegerAttr):
            raise VerifyException(f"tilemap.run: missing integer parameter '{name}'")
        return a.value.data


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A per-tile work buffer with no defined contents (kernel scratch)."""

    name = "tilemap.alloc"
    result = result_def(AnyBuffer)
    assembly_format = "attr-dict `:` type($result)"


@irdl_op_definition
class MoveOp(IRDLOperation):
    """A logical exchange: transfer families (offsets relative to the two buffers)."""

    name = "tilemap.move"
    input = operand_def(AnyBuffer)
    transfers = attr_def(DenseIntOrFPElementsAttr)
    reason = opt_attr_def(StringAttr)
    zero_fill = opt_attr_def(UnitAttr)  # zero the destination first (it has padding)
    result = result_def(AnyBuffer)
    assembly_format = "$input `transfers` `=` $transfers attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_transfers(self, table_of(self.transfers), MOVE_COLUMNS, self.input.type, self.result.type, 0)


def verify_transfers(op: IRDLOperation, t: np.ndarray, cols: int, src: BufferType, dst: BufferType, c0: int) -> None:
    """Shape, tile-range and buffer-bounds checks shared by moves and phases."""
    if t.ndim != 2 or t.shape[1] != cols:
        raise VerifyException(f"{op.name}: transfer table must be [n, {cols}]")
    if not len(t):
        return
    s_tile, s_off, s_str, d_tile, d_off, d_str, rows, words, pc, pss, pds, mc, mcs, pso, pdo, pts = (
        t[:, c0 + i] for i in range(16)
    )
    if (rows <= 0).any() or (words <= 0).any() or (pc <= 0).any() or (mc <= 0).any() or (pts < 0).any():
        raise VerifyException(f"{op.name}: rows, words and counts must be positive")
    s_last = s_tile + (pc - 1) * pss
    d_last = d_tile + (pc - 1) * pds + (mc - 1) * mcs
    for lo, hi, buf, what in ((s_tile, s_last, src, "source"), (d_tile, d_last, dst, "destination")):
        f, n = buf.first.data, buf.count.data
        bad = (np.minimum(lo, hi) < f) | (np.maximum(lo, hi) >= f + n)
        if bad.any():
            raise VerifyException(f"{op.name}: transfer {int(np.argmax(bad))} has a {what} tile outside [{f}, {f + n})")
    if c0 == 0:  # relative offsets: check against the buffers
        s_lo, d_lo = s_off + np.minimum((pc - 1) * pso, 0), d_off + np.minimum((pc - 1) * pdo, 0)
        s_end = s_off + np.maximum((pc - 1) * pso, 0) + (rows - 1) * s_str + words * 4
        d_end = d_off + np.maximum((pc - 1) * pdo, 0) + (rows - 1) * d_str + words * 4
        if (s_lo < 0).any() or (s_end > src.nbytes).any():
            raise VerifyException(f"{op.name}: a transfer reads outside the source buffer ({src.nbytes} bytes)")
        if (d_lo < 0).any() or (d_end > dst.nbytes).any():
            raise VerifyException(f"{op.name}: a transfer writes outside the destination buffer ({dst.nbytes} bytes)")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Buffers copied into the carried buffers for the next iteration of `tilemap.repeat`."""

    name = "tilemap.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(RepeatOp)))
    assembly_format = "($values^ `:` type($values))? attr-dict"


@irdl_op_definition
class RepeatOp(RepeatBase):
    """A structured loop of kernel runs and moves over carried per-tile buffers."""

    name = "tilemap.repeat"
    inits = var_operand_def(AnyBuffer)
    results_ = var_result_def(AnyBuffer)
    YIELD_NAME: ClassVar[str] = "tilemap.yield"


Tilemap = Dialect(
    "tilemap",
    [HostWriteOp, WeightOp, HostReadOp, CheckpointOp, RunOp, AllocOp, MoveOp, RepeatOp, YieldOp],
    [BufferType, MappingAttr],
)
