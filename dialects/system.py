"""The `system` dialect: a model cut into stages, one per chip of a system, and the values that
cross between chips.

`partition-stages` writes it beside the stage functions (each a graph-level `func.func`, compiled
by the single-chip ladder for the system's chip):

```mlir
builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 4 {
  ^bb0(%ids : tensor<1x32xi32>):
    %h = system.stage @main_stage0 chip 0 (%ids) : (tensor<1x32xi32>) -> tensor<32x64xf32>
    %h_1 = system.transfer %h from 0 to 1 : tensor<32x64xf32>
    %out = system.stage @main_stage1 chip 1 (%h_1) : (tensor<32x64xf32>) -> tensor<1x32x256xf32>
    system.output %out : tensor<1x32x256xf32>
  }
  func.func @main_stage0(...) ... {ipu.stage = 0}
  func.func @main_stage1(...) ... {ipu.stage = 1}
}
```

The pipeline's block arguments are the model's inputs (written by the host to the chip of each
stage that reads them); a stage reads only values on its own chip (a model input, a transfer to
its chip); `system.output` is the model's outputs. Micro-batches flow through the stages in
order: in pipeline step t, stage s works on micro-batch t - s.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    FlatSymbolRefAttrConstr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from ipu.abi.tables import LINK
from ipu.dialects.ipu import system_attr_of
from ipu.dialects.table import LinksAttr, table_attr

STAGE_ATTR = "ipu.stage"
"""On a stage function: its stage index. On a graph op before partitioning: a pin (the stage,
hence the chip, the op must run on)."""


def _chip_of(v: SSAValue) -> int | None:
    """The chip a pipeline value lives on (None: a model input, written by the host anywhere)."""
    op = v.owner
    if isinstance(op, StageOp):
        return op.chip.value.data
    if isinstance(op, TransferOp):
        return op.dst.value.data
    if isinstance(op, AllReduceOp):
        return op.chip_list()[list(op.results).index(v)]
    if isinstance(op, LinkOp):
        return op.dst.value.data
    return None


@irdl_op_definition
class PipelineOp(IRDLOperation):
    """A model as stages on chips and the transfers between them; `microbatches` is how many
    micro-batches one run pushes through."""

    name = "system.pipeline"
    sym_name = prop_def(SymbolNameConstraint())
    microbatches = prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface())
    assembly_format = "$sym_name `microbatches` $microbatches attr-dict-with-keyword $body"

    def __init__(self, name: str, microbatches: int, body) -> None:
        super().__init__(
            properties={"sym_name": StringAttr(name), "microbatches": IntegerAttr(microbatches, 64)},
            regions=[body],
        )

    @property
    def stages(self) -> list[StageOp]:
        return [op for op in self.body.block.ops if isinstance(op, StageOp)]

    def verify_(self) -> None:
        if self.microbatches.value.data < 1:
            raise VerifyException(f"system.pipeline: microbatches {self.microbatches.value.data} must be at least 1")
        last = self.body.block.last_op
        if not isinstance(last, OutputOp):
            raise VerifyException("system.pipeline: its body must end in system.output")
        module = self.parent_op()
        system = system_attr_of(module) if isinstance(module, ModuleOp) else None
        chips = [s.chip.value.data for s in self.stages]
        if system is not None:
            n = system.system.chips
            bad = [c for c in chips if c >= n]
            if bad:
                raise VerifyException(
                    f"system.pipeline: chip {bad[0]} is not one of the {n} chips of {system.system.name}"
                )
        collective = any(isinstance(op, AllReduceOp) for op in self.body.block.ops)
        if len(set(chips)) != len(chips) and not collective:
            raise VerifyException(
                "system.pipeline: two stages on one chip (a pipeline stage is a chip's whole program; a chip "
                "runs several only as the segments of a tensor-parallel group, between collectives)"
            )


@irdl_op_definition
class StageOp(IRDLOperation):
    """Runs the stage function `callee` on chip `chip`: its operands are the stage function's
    inputs, its results the stage function's outputs, in order."""

    name = "system.stage"
    callee = prop_def(FlatSymbolRefAttrConstr)
    chip = prop_def(IntegerAttr[I64])
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    traits = traits_def(HasParent(PipelineOp))
    assembly_format = (
        "$callee `chip` $chip `(` $inputs `)` attr-dict `:` `(` type($inputs) `)` `->` `(` type($outputs) `)`"
    )

    def __init__(self, callee: str, chip: int, inputs: list[SSAValue], result_types: list) -> None:
        super().__init__(
            properties={"callee": SymbolRefAttr(callee), "chip": IntegerAttr(chip, 64)},
            operands=[inputs],
            result_types=[result_types],
        )

    def function(self) -> func.FuncOp | ModuleOp | None:
        """The stage function this op runs, or once lowered its chip's module (a nested
        `builtin.module @name` of tasm); None when the module has neither."""
        pipe = self.parent_op()
        module = pipe.parent_op() if pipe is not None else None
        if not isinstance(module, ModuleOp):
            return None
        name = self.callee.root_reference.data
        for op in module.body.block.ops:
            if isinstance(op, func.FuncOp) and op.sym_name.data == name:
                return op
            if isinstance(op, ModuleOp) and op.sym_name is not None and op.sym_name.data == name:
                return op
        return None

    def verify_(self) -> None:
        chip = self.chip.value.data
        name = self.callee.root_reference.data
        for i, v in enumerate(self.inputs):
            c = _chip_of(v)
            if c is not None and c != chip:
                raise VerifyException(
                    f"system.stage @{name}: input {i} lives on chip {c}, the stage on chip {chip} (transfer it)"
                )
        f = self.function()
        if f is None:
            if isinstance(self.parent_op(), PipelineOp) and isinstance(self.parent_op().parent_op(), ModuleOp):
                raise VerifyException(f"system.stage: no function @{name} in the module")
            return
        if isinstance(f, ModuleOp):  # a lowered stage: its bindings, not a signature, say what it reads
            return
        want = (list(f.function_type.inputs.data), list(f.function_type.outputs.data))
        have = ([v.type for v in self.inputs], [r.type for r in self.outputs])
        if want != have:

            def text(ts: list) -> str:
                return "(" + ", ".join(str(t) for t in ts) + ")"

            raise VerifyException(
                f"system.stage @{name}: types {text(have[0])} -> {text(have[1])} do not match the function's "
                f"{text(want[0])} -> {text(want[1])}"
            )


@irdl_op_definition
class TransferOp(IRDLOperation):
    """The value `input`, on chip `src`, copied over the IPU-Links to chip `dst`."""

    name = "system.transfer"
    input = operand_def(TensorType)
    src = prop_def(IntegerAttr[I64])
    dst = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(HasParent(PipelineOp))
    assembly_format = "$input `from` $src `to` $dst attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, src: int, dst: int) -> None:
        super().__init__(
            operands=[input],
            properties={"src": IntegerAttr(src, 64), "dst": IntegerAttr(dst, 64)},
            result_types=[input.type],
        )

    def verify_(self) -> None:
        s, d = self.src.value.data, self.dst.value.data
        if self.input.type != self.result.type:
            raise VerifyException("system.transfer: the result's type must be the input's")
        if s == d:
            raise VerifyException(f"system.transfer: from chip {s} to itself")
        c = _chip_of(self.input)
        if c is None:
            raise VerifyException("system.transfer: a model input is written by the host to every chip that reads it")
        if c != s:
            raise VerifyException(f"system.transfer: its input lives on chip {c}, not {s}")


@irdl_op_definition
class LinkOp(IRDLOperation):
    """A lowered `system.transfer`: the value's bytes move over the IPU-Links as `rows`
    (`#table.links`: from which source tile and offset to which destination tile and offset, and
    when each row starts), with the phase's `lower_bound` (the busiest tile port or link
    direction) and `horizon` (when its last row ends). Each source tile streams one row at a
    time, and so does each destination tile, at the chip's exchange rate."""

    name = "system.link"
    input = operand_def(TensorType)
    src = prop_def(IntegerAttr[I64])
    dst = prop_def(IntegerAttr[I64])
    rows = prop_def(LinksAttr)
    lower_bound = prop_def(IntegerAttr[I64])
    horizon = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(HasParent(PipelineOp))
    assembly_format = (
        "$input `from` $src `to` $dst `rows` `=` qualified($rows) `bound` $lower_bound `horizon` $horizon attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue, src: int, dst: int, rows, lower_bound: int, horizon: int) -> None:
        super().__init__(
            operands=[input],
            properties={
                "src": IntegerAttr(src, 64),
                "dst": IntegerAttr(dst, 64),
                "rows": table_attr(rows, LINK),
                "lower_bound": IntegerAttr(lower_bound, 64),
                "horizon": IntegerAttr(horizon, 64),
            },
            result_types=[input.type],
        )

    def verify_(self) -> None:
        s, d = self.src.value.data, self.dst.value.data
        if s == d:
            raise VerifyException(f"system.link: from chip {s} to itself")
        if self.input.type != self.result.type:
            raise VerifyException("system.link: the result's type must be the input's")
        c = _chip_of(self.input)
        if c is not None and c != s:
            raise VerifyException(f"system.link: its input lives on chip {c}, not {s}")
        t = self.rows.table
        if len(t) and ((t[:, 0] < 0).any() or (t[:, 5] <= 0).any() or (t[:, [1, 2, 3, 4]] < 0).any()):
            raise VerifyException("system.link: rows need non-negative starts, tiles and offsets and positive bytes")
        port = _port_rate(self)
        ends = t[:, 0] + -(-t[:, 5] // port) if len(t) else t[:, 0]
        for col, side in ((1, "source"), (3, "destination")):
            order = np.lexsort((t[:, 0], t[:, col]))
            tiles, st, en = t[order, col], t[order, 0], ends[order]
            clash = (tiles[1:] == tiles[:-1]) & (st[1:] < en[:-1])
            if clash.any():
                k = int(np.argmax(clash))
                raise VerifyException(
                    f"system.link: {side} tile {int(tiles[k])} streams two rows at once (cycle {int(st[k + 1])})"
                )
        end = int(ends.max()) if len(t) else 0
        if self.horizon.value.data < end or self.lower_bound.value.data > self.horizon.value.data:
            raise VerifyException(
                f"system.link: horizon {self.horizon.value.data} must cover the last row's end ({end}) and the "
                f"lower bound {self.lower_bound.value.data}"
            )


def _port_rate(op: Operation) -> int:
    """Bytes a cycle a tile's exchange port moves, from the module's system (4 without one)."""
    p = op.parent_op()
    m = p.parent_op() if p is not None else None
    sa = system_attr_of(m) if isinstance(m, ModuleOp) else None
    return sa.system.chip.rates["exchange_bytes_per_cycle"] if sa is not None else 4


@irdl_op_definition
class AllReduceOp(IRDLOperation):
    """The sum of one partial value per chip of a group, left on every chip of the group (a ring
    all-reduce over the IPU-Links): operand i lives on `chips[i]`, and so does result i."""

    name = "system.all_reduce"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    chips = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(HasParent(PipelineOp))
    assembly_format = "$inputs `chips` $chips attr-dict `:` type($inputs) `->` type($outputs)"

    def __init__(self, inputs: list[SSAValue], chips: list[int]) -> None:
        super().__init__(
            operands=[inputs],
            properties={"chips": DenseArrayBase.from_list(i64, chips)},
            result_types=[[v.type for v in inputs]],
        )

    def chip_list(self) -> list[int]:
        return list(self.chips.get_values())

    def verify_(self) -> None:
        chips = self.chip_list()
        n = len(chips)
        if n < 2 or len(set(chips)) != n:
            raise VerifyException(f"system.all_reduce: needs two or more distinct chips, got {chips}")
        if len(self.inputs) != n or len(self.outputs) != n:
            raise VerifyException(f"system.all_reduce: one input and one result per chip ({n} chips)")
        types = {v.type for v in (*self.inputs, *self.outputs)}
        if len(types) != 1:
            raise VerifyException("system.all_reduce: every input and result has one type")
        for i, (v, c) in enumerate(zip(self.inputs, chips, strict=True)):
            have = _chip_of(v)
            if have != c:
                raise VerifyException(f"system.all_reduce: input {i} lives on chip {have}, not {c}")


@irdl_op_definition
class OutputOp(IRDLOperation):
    """The model's outputs, in order (each read by the host from the chip it lives on)."""

    name = "system.output"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(PipelineOp))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: list[SSAValue]) -> None:
        super().__init__(operands=[values])


def pipeline_of(module: ModuleOp) -> PipelineOp | None:
    """The module's pipeline, if it is partitioned."""
    return next((op for op in module.body.block.ops if isinstance(op, PipelineOp)), None)


System = Dialect("system", [PipelineOp, StageOp, TransferOp, LinkOp, AllReduceOp, OutputOp], [])
