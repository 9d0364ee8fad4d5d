"""The `tasm` (tile-asm) dialect: final tile programs, phase tables, host streams.

Tiles that run identical code share one `tasm.program`; what differs per tile lives in the
phase transfer tables and the placements of streams, weights and checkpoints. Addresses are
absolute tile byte addresses. `ipu-translate --to-ipuexe` encodes this level.

A binding (stream, weight, checkpoint) is placed in one of two forms: `layout #plan.layout<...>
at ADDRESS` (compiler output), or `slices = dense<...> : tensor<Nx9xi64>`, the package's slice
table itself (`ipu-translate --from-ipuexe`, whose weights carry their bytes as `dense<"0x...">`).
"""

from __future__ import annotations

import io

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
    i64,
)
from xdsl.ir import Dialect
from xdsl.irdl import (
    AnyAttr,
    AnyOf,
    BaseAttr,
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from ipu.dialects.exchange import PHASE_COLUMNS
from ipu.dialects.graph import GaussianAttr
from ipu.dialects.plan import LayoutAttr
from ipu.dialects.tilemap import table_of


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """Code run by tiles [first, first + count), loaded at `code_address` (default: the start of
    the target's executable region)."""

    name = "tasm.program"
    sym_name = prop_def(SymbolNameConstraint())
    first = prop_def(IntegerAttr[I64])
    count = prop_def(IntegerAttr[I64])
    code_address = opt_prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove(), SymbolOpInterface())
    assembly_format = "$sym_name `tiles` `(` $first `,` $count `)` (`at` $code_address^)? attr-dict-with-keyword $body"

    def verify_(self) -> None:
        if self.first.value.data < 0 or self.count.value.data <= 0:
            raise VerifyException("tasm.program: tile range must be non-empty")
        if self.code_address is not None and self.code_address.value.data < 0:
            raise VerifyException("tasm.program: code address must be non-negative")


def _in_program():
    return lazy_traits_def(lambda: (HasParent(ProgramOp, LoopOp),))


@irdl_op_definition
class KernelCallOp(IRDLOperation):
    """Kernel call: `tasm.call "gelu" out(524288) in(589824) {elements = 64} : f16 -> f16`."""

    name = "tasm.call"
    kernel = prop_def(StringAttr)
    out = prop_def(IntegerAttr[I64])
    ins = prop_def(DenseArrayBase)
    params = prop_def(DictionaryAttr)
    in_type = prop_def(AnyAttr())
    out_type = prop_def(AnyAttr())
    traits = _in_program()
    assembly_format = (
        "$kernel `out` `(` $out `)` `in` `(` qualified($ins) `)` $params attr-dict `:` $in_type `->` $out_type"
    )

    def verify_(self) -> None:
        from ipu.runtime.isa import KERNELS

        for t in (self.in_type, self.out_type):
            if not isinstance(t, AnyFloat):
                raise VerifyException("tasm.call: element types must be floats")
        spec = KERNELS.get(self.kernel.data)
        if spec is None:
            raise VerifyException(f"tasm.call: unknown kernel '{self.kernel.data}'")
        bad = [n for n in spec[1] if not isinstance(self.params.data.get(n), IntegerAttr)]
        if bad:
            raise VerifyException(f"tasm.call: kernel '{self.kernel.data}' needs integer parameters {bad}")


@irdl_op_definition
class LoopOp(IRDLOperation):
    """`tasm.loop 4 { ... }`: the enclosed code (and its syncs and exchanges) runs `count` times."""

    name = "tasm.loop"
    count = prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "$count attr-dict-with-keyword $body"

    def verify_(self) -> None:
        if self.count.value.data < 1:
            raise VerifyException("tasm.loop: count must be positive")
        p = self.parent_op()
        while p is not None and not isinstance(p, ProgramOp):
            if not isinstance(p, LoopOp):
                raise VerifyException("tasm.loop: must be nested in a tasm.program")
            p = p.parent_op()
        if p is None:
            raise VerifyException("tasm.loop: must be nested in a tasm.program")


@irdl_op_definition
class SyncOp(IRDLOperation):
    name = "tasm.sync"
    traits = _in_program()
    assembly_format = "attr-dict"


class _IndexedOp(IRDLOperation):
    index = prop_def(IntegerAttr[I64])
    traits = _in_program()
    assembly_format = "$index attr-dict"


@irdl_op_definition
class ExchangeOp(_IndexedOp):
    name = "tasm.exchange"


@irdl_op_definition
class HostInOp(_IndexedOp):
    name = "tasm.host_in"


@irdl_op_definition
class HostOutOp(_IndexedOp):
    name = "tasm.host_out"


@irdl_op_definition
class CheckpointOp(_IndexedOp):
    name = "tasm.checkpoint"


@irdl_op_definition
class PhaseOp(IRDLOperation):
    """A phase's scheduled transfer families with absolute addresses."""

    name = "tasm.phase"
    index = prop_def(IntegerAttr[I64])
    lower_bound = prop_def(IntegerAttr[I64])
    horizon = prop_def(IntegerAttr[I64])
    scheduler = prop_def(StringAttr)
    transfers = prop_def(DenseIntOrFPElementsAttr)
    assembly_format = (
        "$index `lower_bound` $lower_bound `horizon` $horizon `scheduler` $scheduler "
        "`transfers` `=` $transfers attr-dict"
    )

    def verify_(self) -> None:
        t = table_of(self.transfers)
        if t.ndim != 2 or t.shape[1] != PHASE_COLUMNS:
            raise VerifyException(f"tasm.phase: transfer table must be [n, {PHASE_COLUMNS}]")
        if len(t) and int((t[:, 0] + t[:, 7] * t[:, 8] + (t[:, 9] - 1) * t[:, 16]).max()) > self.horizon.value.data:
            raise VerifyException("tasm.phase: a transfer ends after the horizon")


SLICE_COLUMNS = 9  # len(runtime.package.SLICE_COLUMNS): the dialect does not import the runtime

_PLACEMENT = "(`layout` qualified($layout)^ `at` $address)? (`slices` `=` $slices^)?"


def slice_table(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The int64 [n, SLICE_COLUMNS] table of a `slices = dense<...> : tensor<nx9xi64>` property."""
    return np.frombuffer(attr.data.data, dtype="<i8").reshape(tuple(attr.get_shape())).astype(np.int64)


class _BoundValue(IRDLOperation):
    """A host-visible value placed either by a layout at an address (compiler output) or by an
    explicit package slice table (`runtime.package.SLICE_COLUMNS`, absolute addresses; the
    disassembly of a package)."""

    sym_name = prop_def(StringAttr)
    tensor = prop_def(TensorType)
    layout = opt_prop_def(LayoutAttr)
    address = opt_prop_def(IntegerAttr[I64])
    slices = opt_prop_def(DenseIntOrFPElementsAttr)

    def verify_(self) -> None:
        if (self.layout is None) == (self.slices is None):
            raise VerifyException(f"{self.name}: exactly one of a layout or a slice table is required")
        if (self.layout is None) != (self.address is None):
            raise VerifyException(f"{self.name}: a layout needs an address, a slice table takes none")
        if self.slices is None:
            return
        if self.slices.get_element_type() != i64 or len(self.slices.get_shape()) != 2:
            raise VerifyException(f"{self.name}: the slice table must be a 2-d i64 tensor")
        t = slice_table(self.slices)
        if t.shape[1] != SLICE_COLUMNS:
            raise VerifyException(f"{self.name}: the slice table must be [n, {SLICE_COLUMNS}], not {list(t.shape)}")
        if (t < 0).any():
            r, c = (int(x) for x in np.argwhere(t < 0)[0])
            raise VerifyException(f"{self.name}: slice {r} column {c} is negative ({t[r, c]})")


@irdl_op_definition
class StreamInOp(_BoundValue):
    """Run input `index`: host bytes written to every holder of each element."""

    name = "tasm.stream_in"
    index = prop_def(IntegerAttr[I64])
    assembly_format = f"$index $sym_name `:` $tensor {_PLACEMENT} attr-dict"


@irdl_op_definition
class StreamOutOp(_BoundValue):
    """Run output `index`: host bytes read from one holder of each element."""

    name = "tasm.stream_out"
    index = prop_def(IntegerAttr[I64])
    assembly_format = f"$index $sym_name `:` $tensor {_PLACEMENT} attr-dict"


def _prints_exactly(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether the builtin syntax of `attr` parses back to the same bytes: it does not for NaN or
    infinite elements of a short list (printed as integers), nor for -0.0 among 0.0 (a splat)."""
    if len(attr) > 100 and not attr.is_splat():
        return True  # printed as the hex of its bytes
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
        if isinstance(attr, DenseIntOrFPElementsAttr) and not _prints_exactly(attr):
            printer.print_string(f'dense<"0x{attr.data.data.hex().upper()}"> : ')
            printer.print_attribute(attr.get_type())
        else:
            printer.print_attribute(attr)


@irdl_op_definition
class WeightOp(_BoundValue):
    """A weight: a seeded initializer (compiler output) or its bytes as a dense attribute."""

    name = "tasm.weight"
    init = prop_def(AnyOf([BaseAttr(GaussianAttr), BaseAttr(DenseIntOrFPElementsAttr)]))
    custom_directives = (ExactInit,)
    assembly_format = f"$sym_name custom<ExactInit>($init) `:` $tensor {_PLACEMENT} attr-dict"

    def verify_(self) -> None:
        super().verify_()
        if isinstance(self.init, DenseIntOrFPElementsAttr):
            shape, want = tuple(self.init.get_shape()), tuple(self.tensor.get_shape())
            if shape != want and len(self.init) != 1:
                raise VerifyException(f"tasm.weight: dense initializer shape {list(shape)} is not {list(want)}")


@irdl_op_definition
class CheckpointDefOp(_BoundValue):
    """Checkpoint `index`: graph value `value` (its stable name), or one of its aspects."""

    name = "tasm.checkpoint_def"
    index = prop_def(IntegerAttr[I64])
    value = prop_def(StringAttr)
    aspect = opt_prop_def(StringAttr)
    assembly_format = f"$index $sym_name `value` $value (`aspect` $aspect^)? `:` $tensor {_PLACEMENT} attr-dict"


Tasm = Dialect(
    "tasm",
    [
        ProgramOp,
        LoopOp,
        KernelCallOp,
        SyncOp,
        ExchangeOp,
        HostInOp,
        HostOutOp,
        CheckpointOp,
        PhaseOp,
        StreamInOp,
        StreamOutOp,
        WeightOp,
        CheckpointDefOp,
    ],
    [],
)
