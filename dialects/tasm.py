"""The `tasm` (tile-asm) dialect: final tile programs, phase tables, host streams.

Tiles that run identical code share one `tasm.program`; what differs per tile lives in the
phase transfer tables and the layouts of streams, weights and checkpoints. Addresses are
absolute tile byte addresses. `ipu-translate --to-ipuexe` encodes this level.
"""

from __future__ import annotations

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
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from ipu.dialects.exchange import PHASE_COLUMNS
from ipu.dialects.graph import GaussianAttr
from ipu.dialects.plan import LayoutAttr
from ipu.dialects.tilemap import table_of


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """Code run by tiles [first, first + count)."""

    name = "tasm.program"
    sym_name = prop_def(SymbolNameConstraint())
    first = prop_def(IntegerAttr[I64])
    count = prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove(), SymbolOpInterface())
    assembly_format = "$sym_name `tiles` `(` $first `,` $count `)` attr-dict-with-keyword $body"

    def verify_(self) -> None:
        if self.first.value.data < 0 or self.count.value.data <= 0:
            raise VerifyException("tasm.program: tile range must be non-empty")


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
        for t in (self.in_type, self.out_type):
            if not isinstance(t, AnyFloat):
                raise VerifyException("tasm.call: element types must be floats")


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


class _BoundValue(IRDLOperation):
    sym_name = prop_def(StringAttr)
    tensor = prop_def(TensorType)
    layout = prop_def(LayoutAttr)
    address = prop_def(IntegerAttr[I64])


@irdl_op_definition
class StreamInOp(_BoundValue):
    """Run input `index`: host bytes written to the layout's holders at `address`."""

    name = "tasm.stream_in"
    index = prop_def(IntegerAttr[I64])
    assembly_format = "$index $sym_name `:` $tensor `layout` qualified($layout) `at` $address attr-dict"


@irdl_op_definition
class StreamOutOp(_BoundValue):
    name = "tasm.stream_out"
    index = prop_def(IntegerAttr[I64])
    assembly_format = "$index $sym_name `:` $tensor `layout` qualified($layout) `at` $address attr-dict"


@irdl_op_definition
class WeightOp(_BoundValue):
    name = "tasm.weight"
    init = prop_def(AnyOf([BaseAttr(GaussianAttr), BaseAttr(DenseIntOrFPElementsAttr)]))
    assembly_format = "$sym_name qualified($init) `:` $tensor `layout` qualified($layout) `at` $address attr-dict"


@irdl_op_definition
class CheckpointDefOp(_BoundValue):
    name = "tasm.checkpoint_def"
    index = prop_def(IntegerAttr[I64])
    op = prop_def(IntegerAttr[I64])
    aspect = opt_prop_def(StringAttr)
    assembly_format = (
        "$index $sym_name `op` $op (`aspect` $aspect^)? `:` $tensor `layout` qualified($layout) `at` $address attr-dict"
    )


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
