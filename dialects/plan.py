"""The `plan` dialect: every value has a layout and every op a chosen implementation.

`!plan.tensor<512x2048xf16, #plan.layout<grid = [4, 46, 8], split = [[0], [2]], memory = interleaved>>`
is a logical tensor cut into blocks over a tile grid (see `layout.Layout`). Conversions between
layouts are explicit `plan.rearrange` / `plan.reduce` ops, so a plan is priced as emitted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Dialect, Operation, OpResult, ParametrizedAttribute, SSAValue, TypeAttribute
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
    opt_operand_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from ipu.abi.kernels import STACKED_BINARY, UNARY_KERNELS, pack_conv_window
from ipu.dialects.exact_init import ExactInit
from ipu.dialects.layout import Layout, Windows, conv_patch
from ipu.dialects.repeat import RepeatBase
from ipu.dialects.shared import GaussianAttr, LayoutAttr, format_ints, parse_ints

# the grid ranks each implementation takes (a serial gemm's may name its contraction parts)
CHOICE_GRID_RANKS = {"gemm": (3,), "gemm_serial": (2, 3), "attention": (4,), "gather": (2,), "conv": (4,), "pool": (4,)}
WEIGHT_MODES = ("resident", "fetched")
ORIENTATIONS = ("plain", "swapped")
PARTIALS = ("f32", "f16")
"""The AMP's partial-sum types: fp32 (the default) or fp16 (`half_partials`: twice the rate on
IPU2, the running sums rounded to half), for a gemm or convolution with half inputs."""


@irdl_attr_definition
class ChoiceAttr(ParametrizedAttribute):
    """A graph op's chosen implementation, recorded by `plan-decide` or pinned by hand:
    `#plan.choice<gemm, grid = [4, 4, 1], weight = resident>`,
    `#plan.choice<gemm_serial, grid = [2, 8], k_steps = 4>`,
    `#plan.choice<attention, grid = [1, 4, 16, 1], key_block = 64>`,
    `#plan.choice<gather, grid = [4, 4]>` (table row blocks, column blocks),
    `#plan.choice<conv, grid = [1, 8, 4, 1]>` (batch, output row, output and input channel blocks),
    `#plan.choice<pool, grid = [1, 8, 4, 1]>` (batch, output row and channel blocks).
    `weight` (gemm with a parameter rhs; empty: the planner's rule), `k_steps` and `key_block`
    (0: derived from the grid) are optional; so are `partials` (gemm and conv: `f32` or `f16`;
    empty: the function's `plan.partials`, else f32) and `orientation` (gemm: `swapped` runs the
    AMP on the product's transpose, `plain` or empty does not)."""

    name = "plan.choice"
    impl: StringAttr
    grid: ArrayAttr[IntAttr]
    weight: StringAttr
    k_steps: IntAttr
    key_block: IntAttr
    partials: StringAttr
    orientation: StringAttr

    def __init__(
        self,
        impl: str,
        grid: Sequence[int],
        weight: str = "",
        k_steps: int = 0,
        key_block: int = 0,
        partials: str = "",
        orientation: str = "",
    ):
        super().__init__(
            StringAttr(impl),
            ArrayAttr(IntAttr(g) for g in grid),
            StringAttr(weight),
            IntAttr(k_steps),
            IntAttr(key_block),
            StringAttr(partials),
            StringAttr(orientation),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        fields: dict[str, object] = {"impl": parser.parse_identifier()}
        while parser.parse_optional_punctuation(","):
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            if key == "grid":
                fields[key] = parse_ints(parser)
            elif key in ("weight", "partials", "orientation"):
                fields[key] = parser.parse_identifier()
            elif key in ("k_steps", "key_block"):
                fields[key] = parser.parse_integer()
            else:
                parser.raise_error(f"unknown plan.choice field '{key}'")
        parser.parse_punctuation(">")
        if "grid" not in fields:
            parser.raise_error("plan.choice needs a grid")
        return ChoiceAttr(**fields).parameters  # type: ignore[arg-type]

    def print_parameters(self, printer: Printer) -> None:
        s = f"<{self.impl.data}, grid = {format_ints(self.grid_dims)}"
        if self.weight.data:
            s += f", weight = {self.weight.data}"
        if self.k_steps.data:
            s += f", k_steps = {self.k_steps.data}"
        if self.key_block.data:
            s += f", key_block = {self.key_block.data}"
        if self.partials.data:
            s += f", partials = {self.partials.data}"
        if self.orientation.data:
            s += f", orientation = {self.orientation.data}"
        printer.print_string(s + ">")

    @property
    def grid_dims(self) -> tuple[int, ...]:
        return tuple(g.data for g in self.grid.data)

    def verify(self) -> None:
        impl = self.impl.data
        if impl not in CHOICE_GRID_RANKS:
            raise VerifyException(f"plan.choice: implementation must be one of {tuple(CHOICE_GRID_RANKS)}, got {impl}")
        ranks = CHOICE_GRID_RANKS[impl]
        if len(self.grid.data) not in ranks or any(g < 1 for g in self.grid_dims):
            raise VerifyException(f"plan.choice: {impl} takes a grid of {' or '.join(map(str, ranks))} positive parts")
        if self.weight.data and (impl != "gemm" or self.weight.data not in WEIGHT_MODES):
            raise VerifyException(f"plan.choice: weight (one of {WEIGHT_MODES}) applies to gemm only")
        if self.k_steps.data < 0 or self.k_steps.data and impl != "gemm_serial":
            raise VerifyException("plan.choice: k_steps (positive) applies to gemm_serial only")
        if self.key_block.data < 0 or self.key_block.data and impl != "attention":
            raise VerifyException("plan.choice: key_block (positive) applies to attention only")
        if self.partials.data and (impl not in ("gemm", "conv") or self.partials.data not in PARTIALS):
            raise VerifyException(f"plan.choice: partials (one of {PARTIALS}) applies to gemm and conv only")
        if self.orientation.data and (impl != "gemm" or self.orientation.data not in ORIENTATIONS):
            raise VerifyException(f"plan.choice: orientation (one of {ORIENTATIONS}) applies to gemm only")


@irdl_attr_definition
class PlanTensorType(ParametrizedAttribute, TypeAttribute):
    """A logical tensor with its layout: `!plan.tensor<512x2048xf16, #plan.layout<...>>`."""

    name = "plan.tensor"
    tensor: TensorType
    layout_attr: LayoutAttr

    def __init__(self, tensor: TensorType, layout: LayoutAttr):
        el = tensor.element_type
        if isinstance(el, IntegerType) and el.width.data == 1:  # bool: an i32 word 0/1 on the device
            tensor = TensorType(IntegerType(32), tensor.get_shape())
        super().__init__(tensor, layout)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        shape, el = parser.parse_ranked_shape()
        parser.parse_punctuation(",")
        lay = parser.parse_attribute()
        parser.parse_punctuation(">")
        if not isinstance(lay, LayoutAttr):
            parser.raise_error("expected #plan.layout")
        return (TensorType(el, shape), lay)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + "".join(f"{d}x" for d in self.tensor.get_shape()))
        printer.print_attribute(self.tensor.element_type)
        printer.print_string(", ")
        printer.print_attribute(self.layout_attr)
        printer.print_string(">")

    def verify(self) -> None:
        shape = tuple(self.tensor.get_shape())
        if len(shape) != len(self.layout_attr.split.data):
            raise VerifyException(
                f"plan.tensor: layout split has rank {len(self.layout_attr.split.data)}, tensor {len(shape)}"
            )
        if not shape:
            raise VerifyException("plan.tensor: rank-0 tensors are not planned (give the value a shape [1])")
        el = self.tensor.element_type
        if not isinstance(el, Float16Type | Float32Type) and not (isinstance(el, IntegerType) and el.width.data == 32):
            raise VerifyException(
                f"plan.tensor: element type {el}; the device holds f16, f32 and i32 (bool is an i32 word 0 or 1)"
            )

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensor.get_shape())

    @property
    def layout(self) -> Layout:
        return self.layout_attr.layout(self.shape)


AnyPlan = BaseAttr(PlanTensorType)


VALUE_ATTR = "value"
FINALIST_ATTR = "plan.finalist"  # on a plan-search finalist function: its rank
ENTRY_ATTR = "plan.entry"  # on a finalist function: the graph function it plans
"""A plan op's `value = "h"`: the stable name (`ipu.dialects.value_names`) of the graph value it
computes, by which its checkpoint is matched with the reference."""


def _value_attr() -> object:
    return opt_attr_def(StringAttr, attr_name=VALUE_ATTR)


def graph_value_of(op: Operation) -> str | None:
    """The stable name of the graph value this op computes, if it computes one."""
    a = op.attributes.get(VALUE_ATTR)
    return a.data if isinstance(a, StringAttr) else None


class _OneToOne(IRDLOperation):
    """One planned value in, one out; what differs is the verifier."""

    input = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def copies_block(self) -> bool:
        """Whether each tile copies its input block as it is (an op that says so overrides this)."""
        return False

    def is_view(self) -> bool:
        """Whether each tile's copy would write its input's bytes again (the same elements, dtype
        and memory on the same tiles) and nothing else reads the input: map-tiles then gives the
        result the input's buffer (`tilemap.view`), and no copy runs."""
        a, r = self.input.type, self.result.type
        return (
            self.copies_block()
            and self.input.has_one_use()
            and _own_result(self.input)
            and a.tensor.element_type == r.tensor.element_type
            and a.layout_attr.memory == r.layout_attr.memory
            and (a.layout.first_tile, a.layout.tiles, a.layout.block_elements)
            == (r.layout.first_tile, r.layout.tiles, r.layout.block_elements)
        )


def _own_result(v: SSAValue) -> bool:
    """Whether `v` (seen through map-tiles' casts of values already mapped to buffers) is an op's
    own result: a loop's carried value or result keeps the loop's slot, so no view takes it over."""
    while isinstance(v, OpResult) and isinstance(v.owner, UnrealizedConversionCastOp):
        v = v.owner.operands[0]
    return isinstance(v, OpResult) and not isinstance(v.owner, RepeatBase)


@irdl_op_definition
class ParameterOp(IRDLOperation):
    """A weight, loaded by the `initialize` call directly in the layout its consumer wants."""

    name = "plan.parameter"
    sym_name = attr_def(StringAttr)
    init = attr_def(AnyOf([BaseAttr(GaussianAttr), BaseAttr(DenseIntOrFPElementsAttr)]))
    result = result_def(AnyPlan)
    traits = traits_def(Pure())
    custom_directives = (ExactInit,)
    assembly_format = "$sym_name custom<ExactInit>($init) attr-dict `:` type($result)"

    def __init__(self, name: str, init: Attribute, type: PlanTensorType):
        super().__init__(attributes={"sym_name": StringAttr(name), "init": init}, result_types=[type])

    def verify_(self) -> None:
        if self.result.type.layout.partial >= 0:
            raise VerifyException("plan.parameter: a weight cannot be a partial sum")


@irdl_op_definition
class GemmOp(IRDLOperation):
    """Per-tile AMP GEMM of aligned blocks: A split [rows, k], B split [k, cols]."""

    name = "plan.gemm"
    lhs = operand_def(AnyPlan)
    rhs = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    half_partials = opt_attr_def(UnitAttr)  # fp16 partials (`PARTIALS`)
    swapped = opt_attr_def(UnitAttr)  # the AMP runs on the transpose (`amp_matmul_swapped`)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def __init__(
        self,
        lhs,
        rhs,
        result_type: PlanTensorType,
        value: str | None = None,
        half_partials: bool = False,
        swapped: bool = False,
    ):
        attrs: dict[str, Attribute] = {VALUE_ATTR: StringAttr(value)} if value is not None else {}
        if half_partials:
            attrs["half_partials"] = UnitAttr()
        if swapped:
            attrs["swapped"] = UnitAttr()
        super().__init__(operands=[lhs, rhs], result_types=[result_type], attributes=attrs)

    @property
    def kernel(self) -> str:
        return gemm_kernel(self.swapped is not None, self.half_partials is not None)

    def verify_(self) -> None:
        a, b, r = self.lhs.type.layout, self.rhs.type.layout, self.result.type.layout
        if len(a.shape) != 2 or len(b.shape) != 2:
            raise VerifyException("plan.gemm: operands must be rank 2")
        if a.shape[1] != b.shape[0] or r.shape != (a.shape[0], b.shape[1]):
            raise VerifyException(f"plan.gemm: shapes {a.shape} x {b.shape} -> {r.shape} do not match")
        if not (a.grid == b.grid == r.grid and a.first_tile == b.first_tile == r.first_tile):
            raise VerifyException("plan.gemm: operands and result must share one tile grid")
        if a.split[0] != r.split[0] or b.split[1] != r.split[1] or a.split[1] != b.split[0]:
            raise VerifyException("plan.gemm: operand splits do not align with the result (rows, k, cols)")
        if a.block[0] != r.block[0] or b.block[1] != r.block[1] or a.block[1] != b.block[0]:
            raise VerifyException(f"plan.gemm: blocks {a.block} x {b.block} -> {r.block} do not align")
        k_dims = a.split[1]
        if (math.prod(a.grid[d] for d in k_dims) > 1) != (r.partial >= 0):
            raise VerifyException("plan.gemm: a split contraction must produce a partial result and vice versa")
        if r.partial >= 0 and r.partial not in k_dims:
            raise VerifyException("plan.gemm: the partial dimension must be the contraction's grid dimension")
        _verify_partials(self, r.partial >= 0)
        for v in (self.rhs, self.result):
            if v.type.layout_attr.memory.data != "interleaved":
                raise VerifyException("plan.gemm: AMP weights (rhs) and result live in interleaved memory")
        if self.swapped is not None and self.lhs.type.layout_attr.memory.data != "interleaved":
            raise VerifyException("plan.gemm: a swapped gemm's lhs is the AMP's weights, in interleaved memory")


def _verify_partials(op: GemmOp | ConvOp, split: bool) -> None:
    """fp16 partials take half operands; a split result holds its partial sums in the partials'
    type (f16 with `half_partials`, else f32)."""
    half = op.half_partials is not None
    if half and not all(isinstance(v.type.tensor.element_type, Float16Type) for v in op.operands):
        raise VerifyException(f"{op.name}: half_partials needs f16 operands")
    if split and not isinstance(op.result.type.tensor.element_type, Float16Type if half else Float32Type):
        raise VerifyException(
            f"{op.name}: a split contraction's partial sums are {'f16 (half_partials)' if half else 'f32'}, "
            f"not {op.result.type.tensor.element_type}"
        )


def serial_k_share(k: int, parts: int) -> int:
    """The contraction columns each of `parts` parts of a serial GEMM steps through (an even
    count when split: the last part's window reaches past the contraction, zero-filled)."""
    kp = math.ceil(k / parts)
    return kp + kp % 2 if parts > 1 else kp


def serial_window(k: int, parts: int, steps: int) -> tuple[int, int]:
    """(each part's contraction columns, the columns of each of its `steps` windows: an even
    count, the last window the rest) of a serial GEMM over `k` contraction columns."""
    kp = serial_k_share(k, parts)
    kc = math.ceil(kp / steps)
    return kp, kc + kc % 2


def gemm_kernel(swapped: bool, half: bool) -> str:
    """A `plan.gemm`'s tile kernel: `amp_matmul`, `_swapped` when the AMP takes the lhs as its
    weights, `_half` with fp16 partials."""
    return ("amp_matmul_swapped" if swapped else "amp_matmul") + ("_half" if half else "")


@irdl_op_definition
class SerialGemmOp(IRDLOperation):
    """A GEMM too large for one step: output-stationary over a (rows, cols) grid, with the
    contraction in `k_steps` serial steps (SUMMA): each step exchanges a column window of the lhs
    and a row window of the rhs from where they live and accumulates in fp32. On a (rows, cols,
    parts) grid with a partial result (2.5-D), each contraction part steps through its own share
    of the contraction on its tiles, and the fp32 partials go to a `plan.reduce`."""

    name = "plan.gemm_serial"
    lhs = operand_def(AnyPlan)
    rhs = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    k_steps = attr_def(IntegerAttr)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def verify_(self) -> None:
        a, b, r = self.lhs.type.layout, self.rhs.type.layout, self.result.type.layout
        if len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0] or r.shape != (a.shape[0], b.shape[1]):
            raise VerifyException(f"plan.gemm_serial: shapes {a.shape} x {b.shape} -> {r.shape} do not match")
        if a.partial >= 0 or b.partial >= 0 or r.split != ((0,), (1,)):
            raise VerifyException("plan.gemm_serial: result must be split [[0], [1]], from whole operands")
        if (len(r.grid), r.partial) not in ((2, -1), (3, 2)):
            raise VerifyException(
                "plan.gemm_serial: result must lie on a 2-d grid, or be partial over dimension 2 of a 3-d grid"
            )
        if r.partial >= 0 and not isinstance(self.result.type.tensor.element_type, Float32Type):
            raise VerifyException("plan.gemm_serial: a split contraction's partial sums are f32")
        if self.k_steps.value.data < 1:
            raise VerifyException("plan.gemm_serial: k_steps must be positive")


def conv_kernel_params(
    patch: Layout,
    result: Layout,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    depthwise: bool = False,
) -> dict[str, int]:
    """The `amp_conv` (depthwise: `dw_conv`) parameters of a `plan.conv` tile: its patch block
    [n, rows, wp, c] and its result block [n, oh, OW, o]."""
    n, _, _, c = patch.block
    out = {"o": result.block[3]} if not depthwise else {}
    return {
        "n": n, "c": c, "oh": result.block[1], "ow": result.shape[2], **out,
        "kh": kernel[0], "kw": kernel[1], "window": pack_conv_window(tuple(strides), tuple(dilations)),
    }  # fmt: skip


@irdl_op_definition
class ConvOp(IRDLOperation):
    """A convolution on the AMP, channels last (`graph.conv` with one group): input [N, H, W, C],
    filters [KH, KW, C, O], result [N, OH, OW, O]. The grid's four dimensions split the batch,
    the output rows, the output channels and the input channels (a split contraction gives
    partial sums over dimension 3). The input is read from wherever it lives: each tile receives
    the zero-padded input rows its output rows reach, halo included (`conv_patch`), and loops
    the kernel positions (`amp_conv`); the filters (split as the channels, replicated over the
    batch and rows) and the result live in interleaved memory.

    With `depthwise` it is a depthwise convolution on the vector path (`graph.conv` with one
    group per channel): filters [KH, KW, 1, C], result [N, OH, OW, C], the channels split over
    grid dimension 2 for the input patch, the filters and the result alike (dimension 3 is 1),
    and the kernel positions looped by `dw_conv`.

    `%y = plan.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
    pads = array<i64: 1, 1, 1, 1>} : (…) -> !plan.tensor<…>`"""

    name = "plan.conv"
    input = operand_def(AnyPlan)
    filters = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    strides = attr_def(DenseArrayBase)
    dilations = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    depthwise = opt_attr_def(UnitAttr)
    half_partials = opt_attr_def(UnitAttr)  # fp16 partials (`PARTIALS`)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$input `,` $filters attr-dict `:` `(` type($input) `,` type($filters) `)` `->` type($result)"

    @property
    def kernel(self) -> str:
        """The tile kernel: `amp_conv` (`amp_conv_half` with fp16 partials), or `dw_conv` for a
        depthwise convolution."""
        if self.depthwise is not None:
            return "dw_conv"
        return "amp_conv_half" if self.half_partials is not None else "amp_conv"

    def window(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(strides, dilations, pads): two, two and four (top, left, bottom, right) values."""
        return tuple(self.strides.get_values()), tuple(self.dilations.get_values()), tuple(self.pads.get_values())

    def patch(self) -> tuple[Layout, Windows]:
        """The patch layout each tile receives and the windows placing it (`conv_patch`)."""
        st, dl, pd = self.window()
        x, r, k = self.input.type.layout.shape, self.result.type.layout, self.filters.type.shape[:2]
        return conv_patch(x, r, k, st, dl, pd, 2 if self.depthwise is not None else 3)

    def kernel_params(self) -> dict[str, int]:
        """One tile's `amp_conv` (`dw_conv`) parameters."""
        st, dl, _ = self.window()
        r, k = self.result.type.layout, self.filters.type.shape[:2]
        return conv_kernel_params(self.patch()[0], r, k, st, dl, self.depthwise is not None)

    def verify_(self) -> None:
        x, f, r = self.input.type.layout, self.filters.type.layout, self.result.type.layout
        if len(x.shape) != 4 or len(f.shape) != 4 or len(r.shape) != 4:
            raise VerifyException("plan.conv: input, filters and result must be rank 4 (NHWC, HWIO, NHWC)")
        st, dl, pd = self.window()
        if len(st) != 2 or len(dl) != 2 or len(pd) != 4 or min(st + dl) < 1 or min(pd) < 0:
            raise VerifyException("plan.conv: strides and dilations take 2 positive values, pads 4 non-negative")
        n, h, w, c = x.shape
        kh, kw, fc, o = f.shape
        oh = (h + pd[0] + pd[2] - dl[0] * (kh - 1) - 1) // st[0] + 1
        ow = (w + pd[1] + pd[3] - dl[1] * (kw - 1) - 1) // st[1] + 1
        if self.depthwise is not None:
            if fc != 1 or o != c or r.shape != (n, oh, ow, o):
                raise VerifyException(
                    f"plan.conv: a depthwise convolution of {x.shape} takes filters [KH, KW, 1, {c}] and gives "
                    f"[{n}, {oh}, {ow}, {c}]; got {list(f.shape)} and {list(r.shape)}"
                )
            if len(r.grid) != 4 or r.grid[3] != 1 or r.split != ((0,), (1,), (), (2,)) or r.partial >= 0:
                raise VerifyException(
                    "plan.conv: a depthwise result splits batch, rows and channels over grid dimensions 0, 1 and 2 "
                    "(dimension 3 of 1 part)"
                )
            if f.grid != r.grid or f.first_tile != r.first_tile or f.split != ((), (), (), (2,)) or f.partial >= 0:
                raise VerifyException("plan.conv: depthwise filters split their channels as the result does")
            if self.half_partials is not None:
                raise VerifyException("plan.conv: a depthwise convolution has no partial sums (half_partials)")
            return
        if fc != c or r.shape != (n, oh, ow, o):
            raise VerifyException(f"plan.conv: {x.shape} * {f.shape} gives [{n}, {oh}, {ow}, {o}], not {list(r.shape)}")
        if len(r.grid) != 4 or r.split != ((0,), (1,), (), (2,)) or r.partial != (3 if r.grid[3] > 1 else -1):
            raise VerifyException(
                "plan.conv: the result splits batch, rows and output channels over grid dimensions 0, 1 and 2, "
                "with partial sums over dimension 3 when it splits the input channels"
            )
        if f.grid != r.grid or f.first_tile != r.first_tile or f.split != ((), (), (3,), (2,)) or f.partial >= 0:
            raise VerifyException("plan.conv: the filters split input and output channels over the result's grid")
        if c % r.grid[3] or (c // r.grid[3]) % 2 or f.block[3] != r.block[3]:
            raise VerifyException(
                f"plan.conv: {r.grid[3]} input channel blocks of {c} must be even, and the filters' output blocks "
                "the result's"
            )
        for v in (self.filters, self.result):
            if v.type.layout_attr.memory.data != "interleaved":
                raise VerifyException("plan.conv: AMP filters and result live in interleaved memory")
        _verify_partials(self, r.partial >= 0)


@irdl_op_definition
class PoolOp(IRDLOperation):
    """A max pool on the vector path, channels last: input [N, H, W, C] -> result [N, OH, OW, C]
    over a KH x KW `kernel` window. The grid's four dimensions split the batch, the output rows
    and the channels (dimension 3 of one part), as a depthwise `plan.conv`'s: each tile receives
    the zero-filled input rows its output rows reach, halo included (`conv_patch`), and takes the
    running max over the kernel positions (`max_pool`). Zero padding never wins: the pool family
    plans only a pool whose input is non-negative or that has no padding.

    `%y = plan.pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations =
    array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : … -> !plan.tensor<…>`"""

    name = "plan.pool"
    input = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    kernel = attr_def(DenseArrayBase)
    strides = attr_def(DenseArrayBase)
    dilations = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def window(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(kernel, strides, dilations, pads): two, two, two and four (top, left, bottom, right) values."""
        return tuple(tuple(a.get_values()) for a in (self.kernel, self.strides, self.dilations, self.pads))  # type: ignore[return-value]

    def patch(self) -> tuple[Layout, Windows]:
        """The patch layout each tile receives and the windows placing it (`conv_patch`)."""
        k, st, dl, pd = self.window()
        return conv_patch(self.input.type.layout.shape, self.result.type.layout, k, st, dl, pd, 2)

    def kernel_params(self) -> dict[str, int]:
        """One tile's `max_pool` parameters (a depthwise convolution's, without filters)."""
        k, st, dl, _ = self.window()
        return conv_kernel_params(self.patch()[0], self.result.type.layout, k, st, dl, depthwise=True)

    def verify_(self) -> None:
        x, r = self.input.type.layout, self.result.type.layout
        if len(x.shape) != 4 or len(r.shape) != 4:
            raise VerifyException("plan.pool: input and result must be rank 4 (NHWC)")
        k, st, dl, pd = self.window()
        if len(k) != 2 or len(st) != 2 or len(dl) != 2 or len(pd) != 4:
            raise VerifyException("plan.pool: kernel, strides and dilations take 2 values, pads 4")
        if min(k + st + dl) < 1 or max(st + dl) > 255 or min(pd) < 0:
            raise VerifyException("plan.pool: kernel, strides and dilations must be positive (strides and "
                                  "dilations below 256), pads non-negative")  # fmt: skip
        if self.input.type.tensor.element_type != self.result.type.tensor.element_type:
            raise VerifyException("plan.pool: input and result element types differ")
        n, h, w, c = x.shape
        if r.shape[0] != n or r.shape[3] != c:
            raise VerifyException(f"plan.pool: {list(x.shape)} pools to [{n}, OH, OW, {c}], not {list(r.shape)}")
        for axis, size, lo, hi in ((1, h, pd[0], pd[2]), (2, w, pd[1], pd[3])):
            i = axis - 1
            floor = (size + lo + hi - dl[i] * (k[i] - 1) - 1) // st[i] + 1
            # ceil mode: one more window, which starts inside the input or its leading pad
            if not (1 <= r.shape[axis] <= floor + 1) or (r.shape[axis] - 1) * st[i] >= size + lo:
                raise VerifyException(
                    f"plan.pool: {r.shape[axis]} outputs on axis {axis} of {size} with this window "
                    f"(at most {floor + 1})"
                )
        if len(r.grid) != 4 or r.grid[3] != 1 or r.split != ((0,), (1,), (), (2,)) or r.partial >= 0:
            raise VerifyException(
                "plan.pool: the result splits batch, rows and channels over grid dimensions 0, 1 and 2 "
                "(dimension 3 of 1 part)"
            )


@irdl_op_definition
class ReduceOp(_OneToOne):
    """Sum partial blocks into a non-partial layout (a reduce-scatter plus a local sum)."""

    name = "plan.reduce"

    def __init__(self, input, result_type: PlanTensorType, value: str | None = None):
        attrs = {VALUE_ATTR: StringAttr(value)} if value is not None else {}
        super().__init__(operands=[input], result_types=[result_type], attributes=attrs)

    def verify_(self) -> None:
        if self.input.type.layout.partial < 0:
            raise VerifyException("plan.reduce: input must be a partial-sum layout")
        if self.result.type.layout.partial >= 0:
            raise VerifyException("plan.reduce: result must not be partial")
        if self.input.type.shape != self.result.type.shape:
            raise VerifyException("plan.reduce: shapes differ")


@irdl_op_definition
class RearrangeOp(IRDLOperation):
    """Move a value into another layout (an exchange phase)."""

    name = "plan.rearrange"
    input = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    reason = opt_attr_def(StringAttr)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input, result_type: PlanTensorType, reason: str | None = None):
        attrs = {"reason": StringAttr(reason)} if reason else {}
        super().__init__(operands=[input], result_types=[result_type], attributes=attrs)

    def verify_(self) -> None:
        if self.input.type.tensor != self.result.type.tensor:
            raise VerifyException("plan.rearrange: logical tensor types differ")
        if self.input.type.layout.partial >= 0 or self.result.type.layout.partial >= 0:
            raise VerifyException("plan.rearrange: partial sums are reduced with plan.reduce")


UNARY_KINDS = UNARY_KERNELS  # each kind is the elementwise kernel of that name (ipu.abi.kernels)
BINARY_KINDS = (
    "add", "sub", "mul", "max", "min", "div", "pow", "mod", "fmod", "and", "or", "xor", "shift_left", "shift_right",
    "equal", "less", "less_equal", "greater", "greater_equal", "add_relu",
)  # fmt: skip
# the binary kinds whose result is bool (an i32 word 0/1) whatever the operands' element type
COMPARE_KINDS = ("equal", "less", "less_equal", "greater", "greater_equal")
# the unary kinds whose result is bool whatever the input's element type
TO_BOOL_KINDS = ("to_bool",)


def _as_bool(t: PlanTensorType) -> PlanTensorType:
    """`t` with the bool element type (i32 on the device), the same layout."""
    return PlanTensorType(TensorType(IntegerType(32), t.tensor.get_shape()), t.layout_attr)


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """Elementwise map on each tile's block; result layout equals the input's."""

    name = "plan.unary"
    kind = attr_def(StringAttr)
    input = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: str, input, value: str | None = None):
        attrs: dict[str, Attribute] = {"kind": StringAttr(kind)}
        if value is not None:
            attrs[VALUE_ATTR] = StringAttr(value)
        rt = _as_bool(input.type) if kind in TO_BOOL_KINDS else input.type
        super().__init__(operands=[input], result_types=[rt], attributes=attrs)

    def verify_(self) -> None:
        if self.kind.data not in UNARY_KINDS:
            raise VerifyException(f"plan.unary: unknown kind '{self.kind.data}'")
        want = _as_bool(self.input.type) if self.kind.data in TO_BOOL_KINDS else self.input.type
        if self.result.type != want or self.input.type.layout.partial >= 0:
            what = "the input's layout with element type i32" if self.kind.data in TO_BOOL_KINDS else "the input type"
            raise VerifyException(f"plan.unary: {self.kind.data}: result type must be {what} (a non-partial input)")


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """Elementwise binary op; rhs is same-layout or a block-aligned broadcast row vector, or with
    `column` a column vector (one value per lhs row, split like the lhs rows)."""

    name = "plan.binary"
    kind = attr_def(StringAttr)
    lhs = operand_def(AnyPlan)
    rhs = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    column = opt_attr_def(UnitAttr)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def __init__(self, kind: str, lhs, rhs, value: str | None = None):
        attrs: dict[str, Attribute] = {"kind": StringAttr(kind)}
        if value is not None:
            attrs[VALUE_ATTR] = StringAttr(value)
        rt = _as_bool(lhs.type) if kind in COMPARE_KINDS else lhs.type
        super().__init__(operands=[lhs, rhs], result_types=[rt], attributes=attrs)

    def verify_(self) -> None:
        if self.kind.data not in BINARY_KINDS:
            raise VerifyException(f"plan.binary: unknown kind '{self.kind.data}'")
        a, b = self.lhs.type.layout, self.rhs.type.layout
        if self.lhs.type.tensor.element_type != self.rhs.type.tensor.element_type:
            raise VerifyException("plan.binary: operand element types differ")
        want = _as_bool(self.lhs.type) if self.kind.data in COMPARE_KINDS else self.lhs.type
        if self.result.type != want or a.partial >= 0 or b.partial >= 0:
            what = "the lhs layout with element type i32" if self.kind.data in COMPARE_KINDS else "the lhs type"
            raise VerifyException(f"plan.binary: {self.kind.data}: result type must be {what} (non-partial operands)")
        if a.grid != b.grid or a.first_tile != b.first_tile:
            raise VerifyException("plan.binary: operands must share one tile grid")
        if self.column is not None:
            if len(b.shape) != 1 or len(a.shape) != 2 or b.shape[0] != a.shape[0]:
                raise VerifyException(f"plan.binary: a column rhs {b.shape} must hold one value per row of {a.shape}")
            if b.split[0] != a.split[0] or b.block[0] != a.block[0]:
                raise VerifyException("plan.binary: broadcast column vector must be split like the lhs rows")
        elif b.shape == a.shape:
            if b != a:
                raise VerifyException("plan.binary: same-shape operands need the same layout")
        elif len(b.shape) == 1 and len(a.shape) == 2 and b.shape[0] == a.shape[1]:
            if b.split[0] != a.split[1] or b.block[0] != a.block[1]:
                raise VerifyException("plan.binary: broadcast row vector must be split like the lhs columns")
        else:
            raise VerifyException(f"plan.binary: rhs shape {b.shape} does not broadcast to {a.shape} here")


@irdl_op_definition
class TransposeOp(_OneToOne):
    """Local transpose of each tile's block; the result layout swaps the axes' splits."""

    name = "plan.transpose"

    def verify_(self) -> None:
        a, r = self.input.type.layout, self.result.type.layout
        if len(a.shape) != 2 or r.shape != a.shape[::-1] or r.split != a.split[::-1] or r.grid != a.grid:
            raise VerifyException("plan.transpose: result must swap the axes and their splits")
        if r.block != a.block[::-1]:
            raise VerifyException(f"plan.transpose: blocks {a.block} and {r.block} are not transposes")


def _row_split(lay: Layout) -> bool:
    """Grid dimension 0 splits one axis evenly, every axis before it has size 1, none after is split."""
    axes = [i for i, s in enumerate(lay.split) if s]
    if not axes:
        return lay.grid == (1,)
    (i,) = axes if len(axes) == 1 else (-1,)
    return i >= 0 and lay.split[i] == (0,) and all(d == 1 for d in lay.shape[:i]) and lay.shape[i] % lay.grid[0] == 0


def _prefix_split(lay: Layout) -> bool:
    """The leading axes split in order, grid dimension k on the k-th split axis, every split
    axis but the last wholly (one index a tile), the last axis whole: each tile's block is one
    contiguous range of the elements, in tile order."""
    axes = [i for i, s in enumerate(lay.split) if s]
    if not axes:
        return True
    if axes[-1] == len(lay.shape) - 1 or any(lay.split[i] != (k,) for k, i in enumerate(axes)):
        return False
    if any(d != 1 for i, d in enumerate(lay.shape[: axes[-1]]) if i not in axes):
        return False
    last = axes[-1]
    return all(lay.grid[k] == lay.shape[i] for k, i in enumerate(axes[:-1])) and lay.shape[last] % lay.grid[-1] == 0


@irdl_op_definition
class PermuteOp(_OneToOne):
    """Permute axes by exchange, the last axis staying last (result axis i is input axis
    `perm[i]`): rows move between tiles whole, so no kernel runs. `graph.transpose` of rank >= 3
    that keeps the last axis lowers to this (head splits, patch extraction)."""

    name = "plan.permute"
    perm = attr_def(DenseArrayBase)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def permutation(self) -> tuple[int, ...]:
        return tuple(self.perm.get_values())

    def verify_(self) -> None:
        a, r = self.input.type.layout, self.result.type.layout
        p = self.permutation()
        if sorted(p) != list(range(len(a.shape))) or p[-1] != len(a.shape) - 1:
            raise VerifyException(f"plan.permute: perm {list(p)} must permute the axes and keep the last one last")
        if r.shape != tuple(a.shape[i] for i in p):
            raise VerifyException(f"plan.permute: {a.shape} permuted by {list(p)} is not {r.shape}")
        if a.partial >= 0 or r.partial >= 0:
            raise VerifyException("plan.permute: no partial sums")


@irdl_op_definition
class WindowOp(_OneToOne):
    """A window of the input by exchange: result element i is input element i + offsets (per
    axis), zero where that lies outside the input. Non-negative offsets with the result inside
    the input are a slice; negative ones place the input inside a zero result (a pad, or one
    part of a concatenation). Rows move between tiles whole, so no kernel runs."""

    name = "plan.window"
    offsets = attr_def(DenseArrayBase)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def offset(self) -> tuple[int, ...]:
        return tuple(self.offsets.get_values())

    def covers(self) -> bool:
        """Whether every result element reads an input element (no zero fill needed)."""
        a, r = self.input.type.shape, self.result.type.shape
        return all(o >= 0 and o + n <= d for o, n, d in zip(self.offset(), r, a, strict=True))

    def verify_(self) -> None:
        a, r = self.input.type.layout, self.result.type.layout
        off = self.offset()
        if len(off) != len(a.shape) or len(r.shape) != len(a.shape):
            raise VerifyException(f"plan.window: {len(off)} offsets for {a.shape} -> {r.shape}")
        if self.input.type.tensor.element_type != self.result.type.tensor.element_type:
            raise VerifyException("plan.window: element types differ")
        if a.partial >= 0 or r.partial >= 0:
            raise VerifyException("plan.window: no partial sums")
        if any(o + n <= 0 or o >= d for o, n, d in zip(off, r.shape, a.shape, strict=True)):
            raise VerifyException(f"plan.window: offsets {list(off)} put {r.shape} outside {a.shape}")
        if window_misaligned(a.shape, r.shape, off, self.input.type.tensor.element_type):
            raise VerifyException(
                "plan.window: a 2-byte window that moves or cuts the last axis needs an even offset and even "
                "last-axis sizes (exchange moves whole words)"
            )


def window_misaligned(a: Sequence[int], r: Sequence[int], off: Sequence[int], el: Attribute) -> bool:
    """Whether a window of 2-byte elements changes the last axis at an odd word boundary (4-byte
    elements, f32 and the i32 words ints and bools live in, are whole words)."""
    if isinstance(el, Float32Type | IntegerType) or (off[-1] == 0 and a[-1] == r[-1]):
        return False
    return bool(off[-1] % 2 or a[-1] % 2 or r[-1] % 2)


def unit_axis_view(lay: Layout, shape: tuple[int, ...]) -> Layout | None:
    """`lay` for `shape` when the reshape only adds or drops unit axes (the last axis kept): the
    same grid and blocks, each split carried to its axis; None for any other reshape."""
    a = lay.shape
    ai = [i for i, d in enumerate(a) if d != 1]
    ri = [i for i, d in enumerate(shape) if d != 1]
    if [a[i] for i in ai] != [shape[i] for i in ri] or not a or not shape or a[-1] != shape[-1] or lay.partial >= 0:
        return None
    if any(lay.split[i] for i, d in enumerate(a) if d == 1):
        return None
    split: list[tuple[int, ...]] = [()] * len(shape)
    align = [1] * len(shape)
    al = lay.align or (1,) * len(a)
    for i, j in zip(ai, ri, strict=True):
        split[j], align[j] = lay.split[i], al[i]
    return Layout(shape, lay.grid, tuple(split), -1, lay.first_tile, tuple(align) if lay.align else ())


@irdl_op_definition
class ReshapeOp(_OneToOne):
    """Reinterpret row blocks: both layouts split one axis, with only unit axes before it, over
    the same 1-D grid, so every tile's block is one contiguous range of elements (its rows
    re-cut when the two last axes are padded differently)."""

    name = "plan.reshape"

    def copies_block(self) -> bool:
        """Each tile copies its block's elements in order (`copy`), where the rows are not re-cut
        (`repad`: both sides pad an odd last axis the same, or keep it whole)."""
        a, r = self.input.type.layout, self.result.type.layout
        return a.shape[-1] == r.shape[-1] or (a.block[-1] == a.shape[-1] and r.block[-1] == r.shape[-1])

    def verify_(self) -> None:
        a, r = self.input.type.layout, self.result.type.layout
        ok = (
            a.grid == r.grid
            and a.first_tile == r.first_tile
            and len(a.grid) == 1
            and all(_row_split(x) for x in (a, r))
            and math.prod(a.block) // a.block[-1] * a.shape[-1] == math.prod(r.block) // r.block[-1] * r.shape[-1]
            and all(x.block[-1] == x.shape[-1] + x.shape[-1] % 2 for x in (a, r))
        )
        ok = ok or (  # contiguous equal ranges in tile order on both sides (several leading axes cut)
            a.tiles == r.tiles
            and a.first_tile == r.first_tile
            and a.partial < 0
            and r.partial < 0
            and all(_prefix_split(x) for x in (a, r))
            and a.block_elements // a.block[-1] * a.shape[-1] == r.block_elements // r.block[-1] * r.shape[-1]
            and all(x.block[-1] == x.shape[-1] + x.shape[-1] % 2 for x in (a, r))
        )
        if not ok and unit_axis_view(a, r.shape) != r:
            raise VerifyException(
                "plan.reshape: layouts must be equal row blocks of one 1-D grid, leading axes cut in order into "
                "equal contiguous ranges on as many tiles, or the same layout with unit axes added or dropped"
            )


def heads_view(lay: Layout, head_dim: int) -> Layout:
    """The [S, H, D] view of a [S, H*D] layout whose column blocks hold whole heads."""
    s, hd = lay.shape
    bc = lay.block_size(1)
    if lay.split[1] and bc % head_dim:
        raise VerifyException(f"column block {bc} does not hold whole heads of {head_dim}")
    k = bc // head_dim if lay.split[1] else hd // head_dim
    return Layout(
        (s, hd // head_dim, head_dim),
        lay.grid,
        (lay.split[0], lay.split[1], ()),
        lay.partial,
        lay.first_tile,
        (lay.align[0] if lay.align else 1, k, 1),
    )


def one_head_blocks(lay: Layout) -> bool:
    """Whether each block of the [H, S, D] layout `lay` holds one head (head_dim whole): its
    bytes are then those of `heads_2d(lay)`'s block on the same tile ([S, D] either way), so a
    head split is a move from any [S, H*D] layout into `heads_2d(lay)`, with no second move."""
    return not lay.split[2] and lay.block_size(0) == 1


def heads_2d(lay: Layout) -> Layout:
    """The [S, H*D] layout whose heads view is `lay` ([H, S, D], head_dim whole): head splits
    become column splits of whole heads, so a head split or merge moves each block as is."""
    h, s, d = lay.shape
    if lay.split[2]:
        raise VerifyException("head_dim must not be split")
    rows_align = lay.align[1] if lay.align else 1
    cols_align = d * (lay.align[0] if lay.align else 1)
    return Layout((s, h * d), lay.grid, (lay.split[1], lay.split[0]), -1, lay.first_tile, (rows_align, cols_align))


def split_heads_in_place(src: Layout, dst: Layout) -> bool:
    """Whether a head split of an input in `src` to a result in `dst` needs no exchange: each
    result block is one head and the input lies in the result's 2-D twin (`heads_2d`), the same
    elements in the same order on the same tiles."""
    return one_head_blocks(dst) and src == heads_2d(dst) and src.block_elements == dst.block_elements


@irdl_op_definition
class CastOp(_OneToOne):
    """Precision change in place on every tile (same layout)."""

    name = "plan.cast"

    def verify_(self) -> None:
        a, r = self.input.type, self.result.type
        if a.layout != r.layout or a.shape != r.shape or a.layout.partial >= 0:
            raise VerifyException("plan.cast: the layout must not change")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`plan.select %a, %b, %cond`: a where cond (bool, an i32 word 0/1) else b, elementwise on
    each tile's block; all three and the result share one layout."""

    name = "plan.select"
    lhs = operand_def(AnyPlan)
    rhs = operand_def(AnyPlan)
    condition = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs `,` $condition attr-dict `:` `(` type($lhs) `,` type($rhs) `,` type($condition) `)` "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        a, b, c = self.lhs.type, self.rhs.type, self.condition.type
        if self.result.type != a or b != a:
            raise VerifyException("plan.select: the values and the result must have one type")
        if c != _as_bool(a):
            raise VerifyException("plan.select: the condition must be i32 (bool) in the values' layout")
        if a.layout.partial >= 0:
            raise VerifyException("plan.select: operands must not be partial sums")


ROW_KINDS = ("softmax", "layer_norm", "rms_norm", "sum", "max", "mean", "prod", "argmax", "argmin", "cumsum")
ARG_ROW_KINDS = ("argmax", "argmin")  # i32 results: the column index


MAX_NORM_PARTS = 64
"""Column blocks a norm's rows may be split in: every tile of a row group receives all the
group's statistics, so the gather grows with the square of the parts (at 64, 8 KB a row group
of 16 rows) and soon outweighs the norm it serves."""


def split_norm_parts(lay: Layout) -> int:
    """The column blocks a norm's rows are split in over tiles (1: whole rows per tile; 0: a
    split the norm cannot take: partial sums, or more than `MAX_NORM_PARTS` blocks). The last
    blocks may be padded (`split_norm_padded`)."""
    if lay.partial >= 0:
        return 0
    if not lay.split[-1]:
        return 1
    parts = math.prod(lay.grid[d] for d in lay.split[-1])
    return parts if parts <= MAX_NORM_PARTS else 0


def split_norm_padded(lay: Layout) -> bool:
    """Whether a split norm's column blocks reach past the row (`split_norm_parts` > 1): each
    tile's statistics then count only its own real columns (`norm_stats_valid`)."""
    parts = split_norm_parts(lay)
    return parts > 1 and lay.block[-1] * parts != lay.shape[-1]


def norm_stats_layouts(lay: Layout) -> tuple[Layout, Layout]:
    """The statistics of a norm over rows split in column blocks (`split_norm_parts`), as a
    tensor [parts, *rows, 2] of float pairs: (each tile's own block of them, where the row's
    tiles gather all its parts). Rows lie as in `lay`, so each tile's are its own rows, and a
    tile's block is one run of words (one transfer to each tile of its row group)."""
    lead, parts = lay.shape[:-1], split_norm_parts(lay)
    align = (1, *lay.align[:-1], 1) if lay.align else ()
    shape = (parts, *lead, 2)
    own = Layout(shape, lay.grid, (lay.split[-1], *lay.split[:-1], ()), -1, lay.first_tile, align)
    gathered = Layout(shape, lay.grid, ((), *lay.split[:-1], ()), -1, lay.first_tile, align)
    return own, gathered


def row_vector(n: int, lay: Layout) -> Layout:
    """A vector along `lay`'s rows (a norm's scale or shift): split like its columns (whole when
    the rows are), replicated over the rest of the grid."""
    return Layout((n,), lay.grid, lay.split[-1:], -1, lay.first_tile, lay.align[-1:] if lay.align else ())


@irdl_op_definition
class RowwiseOp(IRDLOperation):
    """A last-axis row operation on tiles that each hold whole rows.

    softmax / layer_norm / rms_norm / cumsum keep the input's layout; sum / max / mean / prod and
    the arg reductions drop the last axis. Norm scales and shifts are whole vectors replicated on
    every tile of the grid. A norm may also take rows split in whole column blocks over tiles
    (`split_norm_parts`): each tile then sums its block's statistics, the row's tiles exchange
    them, and each normalises its block; its scale and shift are then split like the columns.
    """

    name = "plan.rowwise"
    kind = attr_def(StringAttr)
    input = operand_def(AnyPlan)
    params = var_operand_def(AnyPlan)
    result = result_def(AnyPlan)
    epsilon = opt_attr_def(FloatAttr)
    select_last_index = opt_attr_def(UnitAttr)  # argmax / argmin: the last of equal values
    exclusive = opt_attr_def(UnitAttr)  # cumsum: each element's own value left out
    reverse = opt_attr_def(UnitAttr)  # cumsum: summed from the row's end
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$kind $input (`,` $params^)? attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        k = self.kind.data
        if k not in ROW_KINDS:
            raise VerifyException(f"plan.rowwise: unknown kind '{k}'")
        a, r = self.input.type.layout, self.result.type.layout
        split = k in ("layer_norm", "rms_norm") and split_norm_parts(a) >= 1
        if a.partial >= 0 or (a.split[-1] and not split):
            raise VerifyException(
                "plan.rowwise: every tile must hold whole rows (last axis unsplit), or for a norm, "
                f"whole column blocks (the last axis split in at most {MAX_NORM_PARTS} blocks)"
            )
        if k in ("sum", "max", "mean", "prod", *ARG_ROW_KINDS):
            if r.shape != a.shape[:-1] or r.split != a.split[:-1] or r.grid != a.grid:
                raise VerifyException("plan.rowwise: a row reduction drops the last axis and keeps the split")
            el = self.result.type.tensor.element_type
            if k in ARG_ROW_KINDS and not (isinstance(el, IntegerType) and el.width.data == 32):
                raise VerifyException(f"plan.rowwise: {k} gives i32 indices, not {el}")
        elif self.result.type != self.input.type:
            raise VerifyException("plan.rowwise: result type must equal the input type")
        want = {"layer_norm": 2, "rms_norm": 1}.get(k, 0)
        if len(self.params) != want:
            raise VerifyException(f"plan.rowwise: {k} takes {want} parameter vectors")
        for v in self.params:
            pl = v.type.layout
            if (
                pl.shape != a.shape[-1:]
                or pl.split != a.split[-1:]
                or pl.grid != a.grid
                or pl.first_tile != a.first_tile
            ):
                raise VerifyException(
                    "plan.rowwise: parameter vectors must be split like the rows' columns (whole when the rows"
                    " are) and replicated over the rest of the grid"
                )


@irdl_op_definition
class SplitHeadsOp(_OneToOne):
    """[S, H*D] -> [H, S, D] by one exchange: from any input layout when each result block holds
    one head (`one_head_blocks`: a move into `heads_2d` of the result), else from an input whose
    column blocks hold whole heads (a move of its heads view with the axes permuted)."""

    name = "plan.split_heads"

    def copies_block(self) -> bool:
        """The input lies in the result's 2-D twin already (`split_heads_in_place`)."""
        return split_heads_in_place(self.input.type.layout, self.result.type.layout)

    def verify_(self) -> None:
        a, r = self.input.type.layout, self.result.type.layout
        if len(a.shape) != 2 or len(r.shape) != 3 or r.shape != (a.shape[1] // r.shape[2], a.shape[0], r.shape[2]):
            raise VerifyException(f"plan.split_heads: {a.shape} -> {r.shape} is not a head split")
        if a.partial >= 0 or r.partial >= 0 or r.split[2]:
            raise VerifyException("plan.split_heads: no partial sums, and head_dim stays whole")
        if not one_head_blocks(r):
            try:
                heads_view(a, r.shape[2])
            except VerifyException as e:
                raise VerifyException(f"{e}, and a result block holds {r.block_size(0)} heads, not one") from None


@irdl_op_definition
class MergeHeadsOp(_OneToOne):
    """[H, S, D] -> [S, H*D] by exchange; the result's column blocks hold whole heads."""

    name = "plan.merge_heads"

    def copies_block(self) -> bool:
        """Each input block is one head and the result is its 2-D twin (`split_heads_in_place`
        read backwards): every tile keeps its block's bytes, so no exchange."""
        return split_heads_in_place(self.result.type.layout, self.input.type.layout)

    def verify_(self) -> None:
        a, r = self.input.type.layout, self.result.type.layout
        if len(a.shape) != 3 or r.shape != (a.shape[1], a.shape[0] * a.shape[2]):
            raise VerifyException(f"plan.merge_heads: {a.shape} -> {r.shape} is not a head merge")
        if a.partial >= 0 or r.partial >= 0:
            raise VerifyException("plan.merge_heads: no partial sums")
        heads_view(r, a.shape[2])


ATTENTION_FORMS = ("materialized", "streamed")


@irdl_op_definition
class AttentionOp(IRDLOperation):
    """Per-tile attention over a (kv_heads, group, query rows, key blocks) grid.

    Produces the online-softmax state [Hq, S, D + 2] f32 (accumulator, running max, running
    sum), partial over the key-block grid dimension; `plan.attention_combine` normalises.
    materialized: k and v are split over the key-block dimension and each tile keeps its
    whole score block. streamed: k and v stay where they are produced and windows of
    `key_block` keys are exchanged to every tile of a KV group, one phase per window.
    """

    name = "plan.attention"
    q = operand_def(AnyPlan)
    k = operand_def(AnyPlan)
    v = operand_def(AnyPlan)
    bias = opt_operand_def(AnyPlan)
    result = result_def(AnyPlan)
    form = attr_def(StringAttr)
    causal = opt_attr_def(UnitAttr)
    scale = attr_def(FloatAttr)
    key_block = attr_def(IntegerAttr)
    stripes = opt_attr_def(IntegerAttr)
    key_stripes = opt_attr_def(IntegerAttr)
    traits = traits_def(Pure())
    assembly_format = "$q `,` $k `,` $v (`bias` $bias^)? attr-dict `:` functional-type(operands, results)"

    def stripes_value(self) -> int | None:
        """The query rows' stripes (`graph.attention`'s): one per query block, so that each
        tile's rows step `stripes` positions apart, its first below `stripes`."""
        return self.stripes.value.data if self.stripes is not None else None

    def key_stripes_value(self) -> int | None:
        """The keys' stripes (`graph.attention`'s, materialized): one per key block, so that each
        tile's keys step `key_stripes` positions apart, its first below `key_stripes`."""
        return self.key_stripes.value.data if self.key_stripes is not None else None

    def verify_(self) -> None:
        q, k, v, r = (x.type.layout for x in (self.q, self.k, self.v, self.result))
        hq, s, d = q.shape
        hkv, sk, _ = k.shape
        if len(q.grid) != 4 or q.split != ((0, 1), (2,), ()):
            raise VerifyException("plan.attention: q must be split [[0, 1], [2], []] over a 4-d grid")
        if q.grid[0] != hkv or q.grid[0] * q.grid[1] != hq:
            raise VerifyException(f"plan.attention: grid {q.grid} does not match {hq} query and {hkv} KV heads")
        if r.shape != (hq, s, d + 2) or r.grid != q.grid or r.partial != 3 or r.split != q.split:
            raise VerifyException("plan.attention: result must be the [Hq, S, D + 2] state, partial over dim 3")
        if r.block[1] != q.block[1]:
            raise VerifyException("plan.attention: state rows must match the query block")
        if self.form.data not in ATTENTION_FORMS:
            raise VerifyException(f"plan.attention: form must be one of {ATTENTION_FORMS}")
        if self.form.data == "materialized":
            for x in (k, v):
                if x.grid != q.grid or x.split != ((0,), (3,), ()):
                    raise VerifyException("plan.attention: materialized k/v must be split [[0], [3], []]")
        elif q.grid[3] != 1:
            raise VerifyException("plan.attention: streamed attention does not split keys over tiles")
        if self.key_block.value.data <= 0:
            raise VerifyException("plan.attention: key_block must be positive")
        if self.bias is not None:
            self._verify_bias(self.bias.type.layout, q, sk)
        p, pk = self.stripes_value(), self.key_stripes_value()
        form = "streamed" if pk is None else "materialized"
        if p is not None and (self.form.data != form or self.causal is None or q.grid[2] != p or q.block[1] * p != s):
            raise VerifyException(
                f"plan.attention: {p} stripes need a causal {form} attention with {p} query blocks of "
                f"{s // p} rows (q is {q.grid[2]} blocks of {q.block[1]})"
            )
        if pk is not None and (p is None or q.grid[3] != pk or k.block[1] * pk != sk):
            raise VerifyException(
                f"plan.attention: {pk} key stripes need query stripes and {pk} key blocks of {sk // pk} keys "
                f"(k is {q.grid[3]} blocks of {k.block[1]})"
            )

    def _verify_bias(self, b: Layout, q: Layout, sk: int) -> None:
        """The bias is laid out like the scores it is added to: heads (unless shared) and query
        rows as q, keys as k when materialized, every key on each tile when streamed."""
        hq, s, _ = q.shape
        if len(b.shape) != 3 or b.shape[0] not in (1, hq) or b.shape[1:] != (s, sk):
            raise VerifyException(f"plan.attention: bias {list(b.shape)} is not [{hq} or 1, {s}, {sk}]")
        keys = (3,) if self.form.data == "materialized" else ()
        want = ((0, 1) if b.shape[0] == hq else (), (2,), keys)
        if b.grid != q.grid or b.split != want or b.partial >= 0:
            raise VerifyException(f"plan.attention: bias must be split {[list(x) for x in want]} over q's grid")
        if b.block[1] != q.block[1]:
            raise VerifyException("plan.attention: bias rows must match the query block")


@irdl_op_definition
class AttentionCombineOp(_OneToOne):
    """Combine partial online-softmax states across key blocks and normalise."""

    name = "plan.attention_combine"

    def verify_(self) -> None:
        a, r = self.input.type.layout, self.result.type.layout
        if a.partial < 0 or r.partial >= 0 or a.shape[:2] != r.shape[:2] or a.shape[2] != r.shape[2] + 2:
            raise VerifyException("plan.attention_combine: [H, S, D + 2] partial state -> [H, S, D]")


@irdl_op_definition
class EmbeddingSliceOp(IRDLOperation):
    """An embedding lookup the PopLibs multiSlice way, on a (row blocks pv, column blocks pd) grid.

    The table [V, D] stays where it lives, split [[0], [1]] (one block per tile, never whole on
    every tile); the indices [S] (or [1, S]) are replicated on every tile of the grid. Each tile
    writes, for every index, its block's row when the index falls in its rows and zeros
    otherwise: the result [S, D], split [[], [1]], is a partial sum over grid dimension 0 (f32,
    summed by `plan.reduce`) when pv > 1, and the lookup itself when pv = 1."""

    name = "plan.embedding_slice"
    table = operand_def(AnyPlan)
    indices = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$table `,` $indices attr-dict `:` `(` type($table) `,` type($indices) `)` `->` type($result)"

    def verify_(self) -> None:
        t, i, r = self.table.type.layout, self.indices.type.layout, self.result.type.layout
        el = self.indices.type.tensor.element_type
        if len(t.shape) != 2 or len(t.grid) != 2 or t.split != ((0,), (1,)) or t.partial >= 0:
            raise VerifyException("plan.embedding_slice: the table must be [V, D] split [[0], [1]] over a 2-d grid")
        if not isinstance(el, IntegerType) or el.width.data != 32:
            raise VerifyException(f"plan.embedding_slice: indices must be i32, got {el}")
        if len(i.shape) not in (1, 2) or len(i.shape) == 2 and i.shape[0] != 1:
            raise VerifyException(f"plan.embedding_slice: indices must be [S] or [1, S], got {list(i.shape)}")
        if i.grid != t.grid or i.first_tile != t.first_tile or any(i.split) or i.partial >= 0:
            raise VerifyException("plan.embedding_slice: indices must be replicated on every tile of the table's grid")
        s, d = i.shape[-1], t.shape[1]
        if r.shape != (s, d) or r.grid != t.grid or r.first_tile != t.first_tile or r.split != ((), (1,)):
            raise VerifyException(
                f"plan.embedding_slice: result must be [{s}, {d}] split [[], [1]] on the table's grid"
            )
        if r.block[1] != t.block[1]:
            raise VerifyException(
                f"plan.embedding_slice: result columns {r.block[1]} differ from the table's {t.block[1]}"
            )
        if (t.grid[0] > 1) != (r.partial == 0) or r.partial > 0:
            raise VerifyException(
                "plan.embedding_slice: more than one row block gives a result partial over grid dim 0, and vice versa"
            )
        want = Float32Type() if r.partial == 0 else self.table.type.tensor.element_type
        if self.result.type.tensor.element_type != want:
            raise VerifyException(f"plan.embedding_slice: result element type must be {want}")


def stacked_layout(lay: Layout, count: int) -> Layout:
    """`lay` with a leading axis of `count` slices added, not split: every tile keeps its block of
    each slice, one after another (a rolled layer's per-iteration weight)."""
    align = (1, *lay.align) if lay.align else ()
    return Layout((count, *lay.shape), lay.grid, ((), *lay.split), lay.partial, lay.first_tile, align)


def _one_slice_per_trip(op: IRDLOperation, slices: int) -> None:
    """`op` (an iteration_slice or _store of a stack of `slices`) sits directly in a plan.repeat
    of as many trips."""
    loop = op.parent_op()
    if not isinstance(loop, RepeatOp) or loop.count.value.data != slices:
        raise VerifyException(
            f"{op.name}: stacks {slices} slices; it must sit directly in a plan.repeat of {slices} iterations"
        )


@irdl_op_definition
class IterationSliceOp(_OneToOne):
    """This trip's slice of a stacked value, copied from each tile's own block (no exchange):
    the input's layout is the result's with the stacked axis added (`stacked_layout`)."""

    name = "plan.iteration_slice"

    def verify_(self) -> None:
        a, r = self.input.type, self.result.type
        if a.tensor.element_type != r.tensor.element_type or a.shape[1:] != r.shape:
            raise VerifyException(f"plan.iteration_slice: result {r.tensor} is not one slice of {a.tensor}")
        if r.layout.partial >= 0 or a.layout != stacked_layout(r.layout, a.shape[0]):
            raise VerifyException(
                "plan.iteration_slice: the input's layout must be the result's with the stacked axis added, unsplit"
            )
        _one_slice_per_trip(self, a.shape[0])

    def read_in_place(self) -> bool:
        """Whether every use reads this trip's block where it lies in the stack, so no copy is
        made: a `plan.gemm` reading the slice as its rhs from a stack in interleaved memory (where
        the AMP streams it from; map-tiles gives each AMP call the trip's block,
        `amp_matmul*_stacked`), a `plan.binary` of a `STACKED_BINARY` kind reading it as its rhs
        (a bias add: `add_stacked`), or a `plan.rearrange` (its exchange reads the trip's block:
        the phase's source addresses advance by a slice's bytes a trip, `trip_stride`)."""
        uses = list(self.result.uses)
        interleaved = self.input.type.layout_attr.memory.data == "interleaved"
        return bool(uses) and all(
            isinstance(u.operation, RearrangeOp)
            or (interleaved and isinstance(u.operation, GemmOp) and u.index == 1)
            or (stacked_binary(u.operation) and u.index == 1)
            for u in uses
        )


def stacked_binary(op: Operation) -> bool:
    """Whether `op` is a binary op whose rhs a rolled layer's stack can give in place (a kind of
    `STACKED_BINARY`, same-shape or a broadcast row: not a column vector)."""
    return isinstance(op, BinaryOp) and op.kind.data in STACKED_BINARY and op.column is None


@irdl_op_definition
class IterationStoreOp(IRDLOperation):
    """`stacked` with this trip's slice replaced by `value`, written into each tile's own block in
    place (no exchange): the stacked layout is the value's with the stacked axis added."""

    name = "plan.iteration_store"
    stacked = operand_def(AnyPlan)
    value = operand_def(AnyPlan)
    result = result_def(AnyPlan)
    graph_value = _value_attr()
    traits = traits_def(Pure())
    assembly_format = "$stacked `,` $value attr-dict `:` type($stacked) `,` type($value) `->` type($result)"

    def verify_(self) -> None:
        a, v = self.stacked.type, self.value.type
        if a.tensor.element_type != v.tensor.element_type or a.shape[1:] != v.shape or self.result.type != a:
            raise VerifyException(
                f"plan.iteration_store: {v.tensor} is not one slice of {a.tensor} (and the result has its type)"
            )
        if v.layout.partial >= 0 or a.layout != stacked_layout(v.layout, a.shape[0]):
            raise VerifyException(
                "plan.iteration_store: the stacked layout must be the value's with the stacked axis added, unsplit"
            )
        _one_slice_per_trip(self, a.shape[0])


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Values carried to the next iteration of `plan.repeat` (in the block arguments' layouts)."""

    name = "plan.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(RepeatOp)))
    assembly_format = "($values^ `:` type($values))? attr-dict"


@irdl_op_definition
class RepeatOp(RepeatBase):
    """A structured loop over planned ops; carried values keep one layout across iterations."""

    name = "plan.repeat"
    inits = var_operand_def(AnyPlan)
    results_ = var_result_def(AnyPlan)
    graph_value = _value_attr()
    YIELD_NAME: ClassVar[str] = "plan.yield"


Plan = Dialect(
    "plan",
    [
        ParameterOp,
        GemmOp,
        SerialGemmOp,
        ConvOp,
        PoolOp,
        ReduceOp,
        RearrangeOp,
        UnaryOp,
        SelectOp,
        BinaryOp,
        TransposeOp,
        WindowOp,
        PermuteOp,
        ReshapeOp,
        CastOp,
        RowwiseOp,
        SplitHeadsOp,
        MergeHeadsOp,
        AttentionOp,
        AttentionCombineOp,
        RepeatOp,
        IterationSliceOp,
        IterationStoreOp,
        YieldOp,
        EmbeddingSliceOp,
    ],
    [LayoutAttr, ChoiceAttr, PlanTensorType],
)
