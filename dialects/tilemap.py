"""The `tilemap` dialect: per-tile buffers, kernel runs over tile groups, logical moves.

A `!tilemap.buffer<64x48xf16, tiles = [0, 1472], memory = interleaved>` is one block of that
shape on every tile of the group, at one shared address. Host streams and weights keep their
logical view (`tensor` type + `#plan.layout`) and name the function's input or output they are;
moves carry their transfer families as a `#table.transfers` table (principle 1: the IR does not
grow with the tile count).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
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

from ipu.abi.tables import MOVE
from ipu.dialects.exact_init import ExactInit
from ipu.dialects.repeat import RepeatBase
from ipu.dialects.shared import (
    AnyBuffer,
    BufferType,
    GaussianAttr,
    LayoutAttr,
    trip_reach,
    verify_host_layout,
    verify_host_shape,
    verify_table_init,
    verify_transfers,
    verify_zero_span,
)
from ipu.dialects.table import OffsetsAttr, TransfersAttr, verify_schema
from ipu.target.mapping import TileMapping


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


def _check_stream(op: IRDLOperation, name: str, key: str) -> None:
    """A host stream names one of its function's run inputs (`ipu.inputs`) or outputs (`ipu.outputs`)."""
    f = op.parent_op()
    while f is not None and key not in f.attributes:
        f = f.parent_op()
    names = f.attributes[key] if f is not None else None
    if isinstance(names, ArrayAttr) and StringAttr(name) not in names.data:
        have = ", ".join(f'"{n.data}"' for n in names.data if isinstance(n, StringAttr))
        raise VerifyException(f'{op.name}: "{name}" is not in the function\'s {key} [{have}]')


@irdl_op_definition
class HostWriteOp(IRDLOperation):
    """Run input `sym_name` (one of the function's `ipu.inputs`) streamed by the host into every
    holder's block."""

    name = "tilemap.host_write"
    sym_name = attr_def(StringAttr)
    tensor = attr_def(TensorType)
    layout = attr_def(LayoutAttr)
    host_shape = opt_attr_def(DenseArrayBase)  # the host's shape when it differs (a scalar carried as [1])
    # the host writes its array with the axes in this order and zeros around it (low pads of each
    # axis, then high ones): rearranged on the host, no exchange (`host-layout`)
    host_perm = opt_attr_def(DenseArrayBase)
    host_pads = opt_attr_def(DenseArrayBase)
    result = result_def(AnyBuffer)
    assembly_format = "$sym_name `:` $tensor `layout` qualified($layout) attr-dict `->` type($result)"

    def verify_(self) -> None:
        _check_view(self, self.tensor, self.layout, self.result.type)
        verify_host_shape(self, self.host_shape, self.tensor)
        verify_host_layout(self, self.host_perm, self.host_pads, self.host_shape, self.tensor)
        _check_stream(self, self.sym_name.data, "ipu.inputs")


@irdl_op_definition
class WeightOp(IRDLOperation):
    """A weight loaded by the `initialize` call: seeded, dense, or a table of the compiler's
    (e.g. `#table.offsets`, stored at the tensor's element type)."""

    name = "tilemap.weight"
    sym_name = attr_def(StringAttr)
    init = attr_def(AnyOf([BaseAttr(GaussianAttr), BaseAttr(DenseIntOrFPElementsAttr), BaseAttr(OffsetsAttr)]))
    tensor = attr_def(TensorType)
    layout = attr_def(LayoutAttr)
    # the padding some kernel reads as data: the initialize call writes it as zeros
    zero_padding = opt_attr_def(UnitAttr)
    result = result_def(AnyBuffer)
    custom_directives = (ExactInit,)
    assembly_format = (
        "$sym_name custom<ExactInit>($init) `:` $tensor `layout` qualified($layout) attr-dict `->` type($result)"
    )

    def verify_(self) -> None:
        _check_view(self, self.tensor, self.layout, self.result.type)
        verify_table_init(self, self.init, self.tensor)


@irdl_op_definition
class HostReadOp(IRDLOperation):
    """Run output `sym_name` (one of the function's `ipu.outputs`), read by the host from one
    holder of each block."""

    name = "tilemap.host_read"
    sym_name = attr_def(StringAttr)
    input = operand_def(AnyBuffer)
    tensor = attr_def(TensorType)
    layout = attr_def(LayoutAttr)
    host_shape = opt_attr_def(DenseArrayBase)  # the host's shape when it differs (a scalar carried as [1])
    assembly_format = "$sym_name $input `:` type($input) `as` $tensor `layout` qualified($layout) attr-dict"

    def verify_(self) -> None:
        _check_view(self, self.tensor, self.layout, self.input.type)
        verify_host_shape(self, self.host_shape, self.tensor)
        _check_stream(self, self.sym_name.data, "ipu.outputs")


@irdl_op_definition
class CheckpointOp(IRDLOperation):
    """Sample graph value `value` (its stable name, `ipu.dialects.value_names`) for the numerical
    check, as checkpoint `sym_name`."""

    name = "tilemap.checkpoint"
    sym_name = attr_def(StringAttr)
    value = attr_def(StringAttr)
    input = operand_def(AnyBuffer)
    tensor = attr_def(TensorType)
    layout = attr_def(LayoutAttr)
    aspect = opt_attr_def(StringAttr)
    assembly_format = (
        "$sym_name `value` $value $input `:` type($input) `as` $tensor `layout` qualified($layout) attr-dict"
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

    def call_inputs(self) -> list[SSAValue]:
        """The inputs the kernel CALL addresses after its output (the in-place one is the output)."""
        return [v for j, v in enumerate(self.inputs) if j != self.inplace_operand()]

    def call_in_buffer(self) -> BufferType:
        """The buffer type that sets the CALL's in dtype: its first input's (the output's when it
        has none)."""
        ins = self.call_inputs()
        return ins[0].type if ins else self.result.type

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
class ViewOp(IRDLOperation):
    """The input's buffer seen as another block shape: the same bytes at the same address on the
    same tiles, in the same memory (a head split or reshape whose copy would rewrite them). No
    code runs; the input is read by nothing else, so the two are one allocation."""

    name = "tilemap.view"
    input = operand_def(AnyBuffer)
    result = result_def(AnyBuffer)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        a, r = self.input.type, self.result.type
        if (a.element_type, a.first, a.count, a.memory) != (r.element_type, r.first, r.count, r.memory) or (
            math.prod(b.data for b in a.block) != math.prod(b.data for b in r.block)
        ):
            raise VerifyException(
                "tilemap.view: the result must hold the input's elements (dtype, count, tiles and memory)"
            )


@irdl_op_definition
class MoveOp(IRDLOperation):
    """A logical exchange: transfer families without `start` (addresses relative to the two buffers).
    With `trip_stride`, directly in a repeat: every source address advances by that many bytes a
    trip (trip i reads the table's sources + i x stride: this trip's block of a stacked value, read
    where it lies rather than copied out first)."""

    name = "tilemap.move"
    input = operand_def(AnyBuffer)
    transfers = attr_def(TransfersAttr)
    reason = opt_attr_def(StringAttr)
    zero_fill = opt_attr_def(UnitAttr)  # zero the destination first (it has padding)
    zero_from = opt_attr_def(IntegerAttr[I64])  # ... from this element on (all before it is data)
    trip_stride = opt_attr_def(IntegerAttr[I64])  # source bytes a trip of the enclosing repeat
    result = result_def(AnyBuffer)
    assembly_format = "$input `transfers` `=` qualified($transfers) attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        verify_schema(self.name, self.transfers, MOVE)
        verify_transfers(self, self.transfers.table, self.input.type, self.result.type, reach=trip_reach(self))
        verify_zero_span(self)


def zero_span(op: IRDLOperation) -> tuple[int, int] | None:
    """(first element, elements) a move or phase zeroes in its destination before writing it,
    or None: the whole buffer, or with `zero_from` only its tail (the elements before it hold
    data on every tile, so the move writes them)."""
    if op.zero_fill is None:
        return None
    n = math.prod(op.result.type.shape)
    first = op.zero_from.value.data if op.zero_from is not None else 0
    return first, n - first


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
    [HostWriteOp, WeightOp, HostReadOp, CheckpointOp, RunOp, AllocOp, ViewOp, MoveOp, RepeatOp, YieldOp],
    [BufferType, MappingAttr],
)
