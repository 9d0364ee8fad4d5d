"""The `tasm` (tile-asm) dialect: final tile programs, phase tables, host streams.

Tiles that run identical code share one `tasm.program`; what differs per tile lives in the
phase transfer tables and the placements of streams, weights and checkpoints. Addresses are
absolute tile byte addresses. `ipu-translate --to-ipuexe` encodes this level.

Phases, host streams and checkpoints are defined once at module level under a name
(`tasm.phase @phase0 ...`, `tasm.stream_in @x ...`, `tasm.checkpoint_def @h ...`) that program
code refers to (`tasm.exchange @phase0`, `tasm.host_in @x`, `tasm.checkpoint @h`); each kind
has its own namespace, as in the package, whose writer numbers them in module order.

A binding (stream, weight, checkpoint) is placed in one of two forms: `layout #plan.layout<...>
at ADDRESS` (compiler output), or `slices = #table.slices<...>`, the package's slice table
itself (`ipu-translate --from-ipuexe`, whose weights carry their bytes as `dense<"0x...">`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Block, Dialect, Operation
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
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from ipu.abi.isa import MAX_TRIPS, SIMPLE_WORDS, Opcode
from ipu.abi.kernels import KERNELS
from ipu.abi.tables import SLICE, TRANSFER
from ipu.abi.transfers import phase_end
from ipu.dialects.exact_init import ExactInit
from ipu.dialects.shared import GaussianAttr, LayoutAttr, verify_host_layout, verify_host_shape, verify_table_init
from ipu.dialects.table import OffsetsAttr, SlicesAttr, TransfersAttr, verify_schema


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
        _check_references(self)

    def code_bytes(self) -> int:
        """The program's encoded size (`ipu.abi.isa`): a call its kernel's words, a sync one, a
        reference two, a loop three (begin, end), and the final END one."""

        def count(block: Block) -> int:
            n = 0
            for op in block.ops:
                if isinstance(op, LoopOp):
                    n += SIMPLE_WORDS[Opcode.LOOP_BEGIN] + SIMPLE_WORDS[Opcode.LOOP_END] + count(op.body.block)
                elif isinstance(op, KernelCallOp):
                    n += KERNELS[op.kernel.data].call_words
                elif isinstance(op, SyncOp):
                    n += SIMPLE_WORDS[Opcode.SYNC]
                elif isinstance(op, _RefOp):
                    n += SIMPLE_WORDS[Opcode.EXCHANGE]
            return n

        return (count(self.body.block) + SIMPLE_WORDS[Opcode.END]) * 4


def definitions(module: Operation | None) -> dict[type[IRDLOperation], dict[str, IRDLOperation]]:
    """The phases, streams and checkpoints of a module by kind and name; VerifyException when
    two of one kind share a name."""
    out: dict[type[IRDLOperation], dict[str, IRDLOperation]] = {k: {} for k in _REFERENCED}
    if module is None:
        return out
    for op in (op for region in module.regions for block in region.blocks for op in block.ops):
        names = out.get(type(op))
        if names is None:
            continue
        n = op.sym_name.data  # type: ignore[attr-defined]
        if n in names:
            raise VerifyException(f"{op.name}: @{n} is defined twice in the module")
        names[n] = op
    return out


def _check_references(program: ProgramOp) -> None:
    """Every exchange, host stream and checkpoint reference of `program` names a definition of
    its kind at module level; an exchange of a phase read by the trip sits directly in a loop of
    the phase's trips."""
    defs = definitions(program.parent_op())
    for op in program.walk():
        if not isinstance(op, _RefOp):
            continue
        d = defs[op.DEFINITION].get(op.ref.string_value())
        if d is None:
            raise VerifyException(
                f"{op.name} @{op.ref.string_value()}: no {op.DEFINITION.name} @{op.ref.string_value()} in the module"
            )
        if isinstance(d, PhaseOp) and d.trips is not None:
            n, loop = d.trips.value.data, op.parent_op()
            if not isinstance(loop, LoopOp) or loop.count.value.data != n:
                where = f"in a tasm.loop of {loop.count.value.data}" if isinstance(loop, LoopOp) else "outside loops"
                raise VerifyException(
                    f"tasm.exchange @{op.ref.string_value()}: its phase reads by the trip of {n} trips; it must sit "
                    f"directly in a tasm.loop of {n}; it is {where}"
                )


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
        spec = KERNELS.get(self.kernel.data)
        if spec is None:
            raise VerifyException(f"tasm.call: unknown kernel '{self.kernel.data}'")
        for t in (self.in_type, self.out_type):
            i32 = isinstance(t, IntegerType) and t.width.data == 32
            if not isinstance(t, AnyFloat) and not (i32 and spec.ints):
                what = "f16, f32 or i32" if spec.ints else "floats (the kernel computes on floats only)"
                raise VerifyException(f"tasm.call: {self.kernel.data}: element types must be {what}, got {t}")
        bad = [n for n in spec.param_names if not isinstance(self.params.data.get(n), IntegerAttr)]
        if bad:
            raise VerifyException(f"tasm.call: kernel '{self.kernel.data}' needs integer parameters {bad}")
        if spec.iterated:
            n = self.params.data["iterations"].value.data  # type: ignore[union-attr]
            loop = self.parent_op()
            if not isinstance(loop, LoopOp) or loop.count.value.data != n:
                where = f"in a tasm.loop of {loop.count.value.data}" if isinstance(loop, LoopOp) else "outside loops"
                raise VerifyException(
                    f"tasm.call: {self.kernel.data} of {n} iterations must sit directly in a tasm.loop of {n}; "
                    f"it is {where}"
                )


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


class _RefOp(IRDLOperation):
    """A reference from program code to a module-level definition of kind DEFINITION."""

    ref = prop_def(SymbolRefAttr)
    traits = _in_program()
    assembly_format = "$ref attr-dict"
    DEFINITION: ClassVar[type[IRDLOperation]]


@irdl_op_definition
class PhaseOp(IRDLOperation):
    """A phase's scheduled transfer families with absolute addresses. With `trip_stride`, its
    exchanges run in a loop of `trips`, and on trip i families [trip_begin, trip_end) read their
    sources i x trip_stride bytes further on (a stacked value's block for the trip, read where it
    lies; the rest of a joined exchange reads as scheduled)."""

    name = "tasm.phase"
    sym_name = prop_def(SymbolNameConstraint())
    lower_bound = prop_def(IntegerAttr[I64])
    horizon = prop_def(IntegerAttr[I64])
    scheduler = prop_def(StringAttr)
    transfers = prop_def(TransfersAttr)
    trip_stride = opt_prop_def(IntegerAttr[I64])
    trips = opt_prop_def(IntegerAttr[I64])
    trip_begin = opt_prop_def(IntegerAttr[I64])
    trip_end = opt_prop_def(IntegerAttr[I64])
    assembly_format = (
        "$sym_name `lower_bound` $lower_bound `horizon` $horizon `scheduler` $scheduler "
        "(`trip_stride` $trip_stride^ `trips` $trips `families` $trip_begin `to` $trip_end)? "
        "`transfers` `=` qualified($transfers) attr-dict"
    )

    def verify_(self) -> None:
        verify_schema(self.name, self.transfers, TRANSFER)
        t = self.transfers.table
        if len(t) and int(phase_end(t).max()) > self.horizon.value.data:
            raise VerifyException("tasm.phase: a transfer ends after the horizon")
        trip = (self.trip_stride, self.trips, self.trip_begin, self.trip_end)
        if any(x is None for x in trip) != all(x is None for x in trip):
            raise VerifyException("tasm.phase: trip_stride, trips and the families they move come together")
        if self.trip_stride is not None:
            stride, trips, begin, end = (x.value.data for x in trip)  # type: ignore[union-attr]
            if stride <= 0 or stride % 4 or not 1 <= trips <= MAX_TRIPS:
                raise VerifyException(
                    f"tasm.phase: trip_stride {stride} must be a positive whole number of words and trips "
                    f"{trips} between 1 and {MAX_TRIPS}"
                )
            if not 0 <= begin < end <= len(t):
                raise VerifyException(
                    f"tasm.phase: families {begin} to {end} read by the trip are not a range of its {len(t)}"
                )


_PLACEMENT = "(`layout` qualified($layout)^ `at` $address)? (`slices` `=` qualified($slices)^)?"


class _BoundValue(IRDLOperation):
    """A host-visible value placed either by a layout at an address (compiler output) or by an
    explicit package slice table (`#table.slices`, absolute addresses; the disassembly of a
    package)."""

    sym_name = prop_def(SymbolNameConstraint())
    tensor = prop_def(TensorType)
    layout = opt_prop_def(LayoutAttr)
    address = opt_prop_def(IntegerAttr[I64])
    slices = opt_prop_def(SlicesAttr)

    def verify_(self) -> None:
        if (self.layout is None) == (self.slices is None):
            raise VerifyException(f"{self.name}: exactly one of a layout or a slice table is required")
        if (self.layout is None) != (self.address is None):
            raise VerifyException(f"{self.name}: a layout needs an address, a slice table takes none")
        if self.slices is None:
            return
        t = self.slices.table
        if (t < 0).any():
            r, c = (int(x) for x in np.argwhere(t < 0)[0])
            raise VerifyException(f"{self.name}: slice {r} column {SLICE.columns[c]} is negative ({t[r, c]})")


class _StreamValue(_BoundValue):
    """A run input or output; `host_shape` is the shape the host sees when it differs from the
    device tensor's (a scalar carried as [1]): the same elements, in order."""

    host_shape = opt_prop_def(DenseArrayBase)

    def verify_(self) -> None:
        super().verify_()
        verify_host_shape(self, self.host_shape, self.tensor)


_HOST_SHAPE = "(`host_shape` qualified($host_shape)^)?"


@irdl_op_definition
class StreamInOp(_StreamValue):
    """Run input `@name`: host bytes written to every holder of each element."""

    name = "tasm.stream_in"
    # the host writes its array with the axes in this order, zeros around it (`Binding.perm`, `.pads`)
    host_perm = opt_prop_def(DenseArrayBase)
    host_pads = opt_prop_def(DenseArrayBase)
    assembly_format = (
        f"$sym_name `:` $tensor {_HOST_SHAPE} (`host_perm` qualified($host_perm)^)? "
        f"(`host_pads` qualified($host_pads)^)? {_PLACEMENT} attr-dict"
    )

    def verify_(self) -> None:
        super().verify_()
        verify_host_layout(self, self.host_perm, self.host_pads, self.host_shape, self.tensor)


@irdl_op_definition
class StreamOutOp(_StreamValue):
    """Run output `@name`: host bytes read from one holder of each element."""

    name = "tasm.stream_out"
    assembly_format = f"$sym_name `:` $tensor {_HOST_SHAPE} {_PLACEMENT} attr-dict"


@irdl_op_definition
class WeightOp(_BoundValue):
    """A weight: a seeded initializer (compiler output) or its bytes as a dense attribute."""

    name = "tasm.weight"
    init = prop_def(AnyOf([BaseAttr(GaussianAttr), BaseAttr(DenseIntOrFPElementsAttr), BaseAttr(OffsetsAttr)]))
    # the layout's padding is written too, as zeros (a kernel reads it as data): the package's
    # binding covers whole blocks (an explicit slice table already says what it writes)
    zero_padding = opt_prop_def(UnitAttr)
    custom_directives = (ExactInit,)
    assembly_format = (
        f"$sym_name custom<ExactInit>($init) `:` $tensor {_PLACEMENT} (`zero_padding` $zero_padding^)? attr-dict"
    )

    def verify_(self) -> None:
        super().verify_()
        if self.zero_padding is not None and self.layout is None:
            raise VerifyException("tasm.weight: zero_padding needs a layout (a slice table writes what it lists)")
        if isinstance(self.init, DenseIntOrFPElementsAttr):
            shape, want = tuple(self.init.get_shape()), tuple(self.tensor.get_shape())
            if shape != want and len(self.init) != 1:
                raise VerifyException(f"tasm.weight: dense initializer shape {list(shape)} is not {list(want)}")
        verify_table_init(self, self.init, self.tensor)


@irdl_op_definition
class CheckpointDefOp(_BoundValue):
    """Checkpoint `@name`: graph value `value` (its stable name), or one of its aspects."""

    name = "tasm.checkpoint_def"
    value = prop_def(StringAttr)
    aspect = opt_prop_def(StringAttr)
    assembly_format = f"$sym_name `value` $value (`aspect` $aspect^)? `:` $tensor {_PLACEMENT} attr-dict"


@irdl_op_definition
class ExchangeOp(_RefOp):
    """Run exchange phase `@phase` (all tiles, after a sync)."""

    name = "tasm.exchange"
    DEFINITION: ClassVar[type[IRDLOperation]] = PhaseOp


@irdl_op_definition
class HostInOp(_RefOp):
    """Receive run input `@name` from the host."""

    name = "tasm.host_in"
    DEFINITION: ClassVar[type[IRDLOperation]] = StreamInOp


@irdl_op_definition
class HostOutOp(_RefOp):
    """Send run output `@name` to the host."""

    name = "tasm.host_out"
    DEFINITION: ClassVar[type[IRDLOperation]] = StreamOutOp


@irdl_op_definition
class CheckpointOp(_RefOp):
    """Sample checkpoint `@name` (its value as the program reaches this point)."""

    name = "tasm.checkpoint"
    DEFINITION: ClassVar[type[IRDLOperation]] = CheckpointDefOp


_REFERENCED: tuple[type[IRDLOperation], ...] = (PhaseOp, StreamInOp, StreamOutOp, CheckpointDefOp)

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
