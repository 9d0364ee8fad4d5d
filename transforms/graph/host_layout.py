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

from dataclasses import dataclass
from itertools import permutations

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from ipu.dialects import graph
from ipu.dialects.value_names import DERIVED
from ipu.transforms.levels import expect_level

HOST_PERMS = "ipu.host_perms"
"""Function attribute: input name -> the axis order the host writes it in (the device tensor is
`array.transpose(perm)`)."""

HOST_PADS = "ipu.host_pads"
"""Function attribute: input name -> the zeros the host writes around it (each axis's low pads,
then the high ones, on the device tensor's axes)."""

_MAX_ELEMENTS = 1 << 27  # an index array of this many int32 is 512 MB: larger inputs keep their chain


def _chain(a: BlockArgument) -> list[Operation]:
    """The ops after `a` that only move its elements (or cast them), each the sole user of the last."""
    ops: list[Operation] = []
    v = a
    while v.has_one_use():
        op = next(iter(v.uses)).operation
        if not isinstance(op, graph.TransposeOp | graph.ReshapeOp | graph.CastOp | graph.PadOp):
            break
        ops.append(op)
        if isinstance(op, graph.PadOp):  # zeros around the elements: the chain's last op
            break
        v = op.results[0]
    return ops


def _apply(op: Operation, x: np.ndarray) -> np.ndarray:
    if isinstance(op, graph.TransposeOp):
        return np.transpose(x, tuple(op.perm.get_values()))
    if isinstance(op, graph.ReshapeOp):
        return x.reshape(tuple(op.result.type.get_shape()))
    return x  # a cast moves nothing


def _as_permutation(index: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The axis order `p` with `index == arange(shape).transpose(p)`, or None."""
    if index.ndim != len(shape) or len(shape) > 6:
        return None
    base = np.arange(index.size, dtype=index.dtype).reshape(shape)
    for p in permutations(range(len(shape))):
        if tuple(shape[a] for a in p) == index.shape and np.array_equal(np.transpose(base, p), index):
            return p
    return None


def rearranged_prefix(a: BlockArgument) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """How many ops of `a`'s chain the host's rearrangement replaces: the longest prefix that
    permutes its axes, and a zero `graph.pad` right after it; with the permutation and the pads
    (each axis's low pads, then the high ones; empty without a pad)."""
    shape = tuple(a.type.get_shape()) if isinstance(a.type, TensorType) else ()
    ops = _chain(a)
    if not ops or not shape or int(np.prod(shape)) > _MAX_ELEMENTS:
        return None
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    identity = tuple(range(len(shape)))
    best: tuple[int, tuple[int, ...]] = (0, identity)
    for k, op in enumerate(ops):
        if isinstance(op, graph.PadOp):
            break
        x = _apply(op, x)
        if isinstance(op, graph.CastOp):
            continue
        p = _as_permutation(x, shape)
        if p is not None:
            best = (k + 1, p)
    k, p = best
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
