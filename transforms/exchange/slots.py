"""Storage slots as place-storage records them on the IR and later passes read them back.

A buffer-defining op carries its `#exchange.slot` as `slot`; a `tilemap.repeat` carries one per
carried buffer as `carried_slots` (its block arguments and results share them).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import exchange, tilemap

SLOT_ATTR = "slot"
CARRIED_SLOTS_ATTR = "carried_slots"


def set_slots(op: Operation, slots: list[exchange.SlotAttr]) -> None:
    """Record the slots of the buffers `op` defines (a repeat: its carried buffers)."""
    if isinstance(op, tilemap.RepeatOp):
        op.attributes[CARRIED_SLOTS_ATTR] = ArrayAttr(slots)
    else:
        op.attributes[SLOT_ATTR] = slots[0]


def slot(v: SSAValue) -> exchange.SlotAttr:
    """The storage slot of a buffer (carried buffers and repeat results: the repeat's)."""
    rep = v.block.parent_op() if isinstance(v, BlockArgument) else v.owner
    if isinstance(rep, tilemap.RepeatOp):
        slots = rep.attributes.get(CARRIED_SLOTS_ATTR)
        s = slots.data[v.index] if isinstance(slots, ArrayAttr) else None
    else:
        s = v.owner.attributes.get(SLOT_ATTR)  # type: ignore[union-attr]
    if not isinstance(s, exchange.SlotAttr):
        raise DiagnosticException(f"value %{v.name_hint} has no storage slot; run place-storage first")
    return s


def address(v: SSAValue) -> int:
    """The byte address of a buffer on every tile of its group."""
    return slot(v).address.data


def carried_in_place(op: Operation, src: SSAValue) -> bool:
    """`op` overwrites `src`, a carried value of the loop it sits in, and yields the result back
    in `src`'s place: the carried slot itself is updated (an iteration_store), so `src` may be
    live to the loop's end and no copy is made at the yield."""
    if not isinstance(src, BlockArgument) or op.parent_block() is not src.block:
        return False
    rep, term = src.block.parent_op(), src.block.last_op
    if not isinstance(rep, tilemap.RepeatOp) or not isinstance(term, tilemap.YieldOp):
        return False
    others = [u.operation for u in src.uses if u.operation is not op]
    return not others and term.values[src.index] is op.results[0]
