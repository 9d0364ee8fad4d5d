"""`host-layout`: an input whose first ops only rearrange its axes is written rearranged by the host.

An image model's input arrives NCHW and the importer turns it channels last (`transpose`,
`reshape`, `transpose`, `reshape`: NCHW -> NHWC) before the first convolution. On the device
that is an all-to-all exchange of single elements: at ResNet-50's batch 16 one phase of 10.4M
transfer rows, 14,099 transfer families on its busiest tile (395 KB of exchange instructions
in a 208 KB executable region). The host writes every input element anyway, so it can write
them where the permuted tensor wants them: the chain's result becomes the function's argument
(of the permuted shape) and `ipu.host_perms` records the axis order the host applies
(`Binding.perm` in the package; Poplar's `createHostWrite(..., rearrangeOnHost = true)`).

A chain is followed from an argument while each op is the single user of the value before it
and is a `graph.transpose`, a `graph.reshape` or a `graph.cast` (a cast commutes with moving
elements: it is kept, on the new argument); the longest prefix whose composite is a permutation
of the argument's axes is removed, unless that permutation is the identity. The reference and the host keep the
model's own input shape. Inputs written by another chip (a pipeline stage's boundary values:
`skip_prefix`) keep their layout: the link writes the device's bytes as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from ipu.dialects import graph
from ipu.dialects.value_names import DERIVED
from ipu.transforms.graph.graph_match import MAX_VIEW_ELEMENTS, VIEW_OPS, composite
from ipu.transforms.levels import expect_level

HOST_PERMS = "ipu.host_perms"
"""Function attribute: input name -> the axis order the host writes it in (the device tensor is
`array.transpose(perm)`)."""

HOST_PADS = "ipu.host_pads"
"""Function attribute: input name -> the zeros the host writes around it (each axis's low pads,
then the high ones, on the device tensor's axes)."""


def _chain(a: BlockArgument) -> list[Operation]:
    """The ops after `a` that only move its elements (or cast them), each the sole user of the last;
    a zero `graph.pad` ends it."""
    ops: list[Operation] = []
    v = a
    while v.has_one_use():
        op = next(iter(v.uses)).operation
        if not isinstance(op, (*VIEW_OPS, graph.CastOp, graph.PadOp)):
            break
        ops.append(op)
        if isinstance(op, graph.PadOp):
            break
        v = op.results[0]
    return ops


def _as_permutation(index: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The axis order `p` with `index == arange(shape).transpose(p)`, or None: each axis of
    `index` steps by the stride of the source axis it is (unit axes taken in order), checked once."""
    if index.ndim != len(shape):
        return None
    strides = [math.prod(shape[a + 1 :]) for a in range(len(shape))]
    flat = index.reshape(-1)
    here = [math.prod(index.shape[i + 1 :]) for i in range(index.ndim)]
    units = iter(a for a, n in enumerate(shape) if n == 1)
    p: list[int] = []
    for i, n in enumerate(index.shape):
        if n == 1:
            p.append(next(units, -1))
            continue
        step = int(flat[here[i]] - flat[0])
        a = next((a for a in range(len(shape)) if strides[a] == step and shape[a] == n), -1)
        p.append(a)
    if sorted(p) != list(range(len(shape))) or not np.array_equal(
        index, np.arange(index.size, dtype=index.dtype).reshape(shape).transpose(p)
    ):
        return None
    return tuple(p)


def rearranged_prefix(a: BlockArgument) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """How many ops of `a`'s chain the host's rearrangement replaces: the longest prefix that
    permutes its axes, and a zero `graph.pad` right after it; with the permutation and the pads
    (each axis's low pads, then the high ones; empty without a pad)."""
    shape = tuple(a.type.get_shape()) if isinstance(a.type, TensorType) else ()
    ops = _chain(a)
    if not ops or not shape or math.prod(shape) > MAX_VIEW_ELEMENTS:
        return None
    moves = ops[:-1] if isinstance(ops[-1], graph.PadOp) else ops
    identity = tuple(range(len(shape)))
    k, p = 0, identity
    for n in range(len(moves), 0, -1):  # the longest prefix first: the whole chain, usually
        if isinstance(moves[n - 1], graph.CastOp):
            continue
        q = _as_permutation(composite(a, moves[:n]), shape)
        if q is not None:
            k, p = n, q
            break
    rest = ops[k:]
    j = next((i for i, op in enumerate(rest) if not isinstance(op, graph.CastOp)), None)
    if j is not None and isinstance(rest[j], graph.PadOp):
        pad = rest[j]
        low = pad.offsets()
        inner, outer = pad.input.type.get_shape(), pad.result.type.get_shape()
        high = tuple(o - i - lo for i, o, lo in zip(inner, outer, low, strict=True))
        return k + j + 1, p, (*low, *high)
    # a chain that permutes back to the input's own order leaves the host nothing to do
    return None if p == identity else (k, p, ())


def host_layout(f: func.FuncOp, skip_prefix: str = "") -> int:
    """Rewrite every argument of `f` whose chain starts with a permutation or a zero pad; returns
    how many."""
    names = [s.data for s in f.attributes["ipu.inputs"].data] if "ipu.inputs" in f.attributes else []  # type: ignore[union-attr]
    tables: dict[str, dict[str, Attribute]] = {}
    for key in (HOST_PERMS, HOST_PADS):
        old = f.attributes.get(key)
        tables[key] = dict(old.data) if isinstance(old, DictionaryAttr) else {}
    done = 0
    block = f.body.block
    for i, a in enumerate(list(block.args)):
        name = names[i] if i < len(names) else (a.name_hint or f"arg{i}")
        if name in tables[HOST_PERMS] or name in tables[HOST_PADS] or (skip_prefix and name.startswith(skip_prefix)):
            continue
        found = rearranged_prefix(a)
        if found is None:
            continue
        k, p, pads = found
        ops = _chain(a)[:k]
        last = ops[-1].results[0]
        shape = last.type.get_shape()  # type: ignore[union-attr]
        new_arg = block.insert_arg(TensorType(a.type.element_type, shape), i)  # type: ignore[union-attr]
        new_arg.name_hint = a.name_hint
        v: SSAValue = new_arg
        for c in ops:  # a cast is kept, on the rearranged elements
            if isinstance(c, graph.CastOp):
                new = graph.CastOp(v, TensorType(c.result.type.element_type, shape))
                new.attributes.update(c.attributes)
                new.attributes[DERIVED] = UnitAttr()  # not the model's value (that one is NCHW): no checkpoint
                new.result.name_hint = c.result.name_hint
                block.insert_op_before(new, ops[-1])
                v = new.result
        last.replace_all_uses_with(v)
        for op in reversed(ops):
            op.detach()
            op.erase()
        block.erase_arg(a)
        if p != tuple(range(len(p))):
            tables[HOST_PERMS][name] = DenseArrayBase.from_list(i64, list(p))
        if pads:
            tables[HOST_PADS][name] = DenseArrayBase.from_list(i64, list(pads))
        done += 1
    if done:
        for key, table in tables.items():
            if table:
                f.attributes[key] = DictionaryAttr(table)
        outputs = list(f.function_type.outputs.data)
        f.function_type = builtin.FunctionType.from_lists([a.type for a in block.args], outputs)
    return done


@dataclass(frozen=True)
class HostLayoutPass(ModulePass):
    """Inputs whose first ops permute their axes or pad them with zeros are written so by the host."""

    name = "host-layout"
    skip_prefix: str = ""  # inputs named so are written by a link, not the host: left as they are

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        for f in op.ops:
            if isinstance(f, func.FuncOp) and f.body.blocks:
                host_layout(f, self.skip_prefix)


__all__ = ["HOST_PADS", "HOST_PERMS", "HostLayoutPass", "host_layout", "rearranged_prefix"]
