"""Helpers the graph-level raise patterns share: reading constants (`splat`), walking
producers, and replacing a matched chain by its fused op (which keeps the root's name and
provenance; the interior ops nothing reads any more go)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from ipu.dialects import graph

PROVENANCE = ("onnx.node",)  # attributes the fused op inherits from the chain's root
VIEW_OPS = (graph.TransposeOp, graph.ReshapeOp)  # ops that move elements, computing none
MAX_VIEW_ELEMENTS = 1 << 24  # a view chain over more elements is left alone (its index map would be large)


def splat(v: SSAValue) -> float | None:
    """The one value a constant holds everywhere (a `graph.parameter` with a dense splat), else None."""
    op = v.owner
    if not isinstance(op, graph.ParameterOp) or not isinstance(op.init, DenseIntOrFPElementsAttr):
        return None
    values = graph.dense_values(op.init)
    bits = values.view(f"u{values.itemsize}")  # compared as stored: -0.0 is not 0.0, a NaN is itself
    if bits.size == 0 or (bits.size > 1 and not (bits[1] == bits[0] and (bits == bits[0]).all())):
        return None  # the second element first: a weight of millions is told apart at once
    return float(values[0])


def near(v: float | None, want: float, rel: float = 1e-3) -> bool:
    """`v` is `want` to within a rounding of fp16 (a half model's constants are stored rounded)."""
    return v is not None and abs(v - want) <= rel * abs(want)


def sole_use(v: SSAValue) -> bool:
    """`v` is read once (by the chain): folding it into a fused op loses no other reader."""
    return v.has_one_use()


def producer(v: SSAValue, cls: type[Operation]) -> Operation | None:
    """The op of class `cls` computing `v`."""
    return v.owner if isinstance(v.owner, cls) else None


def mul_leaves(v: SSAValue, depth: int = 3) -> list[SSAValue]:
    """The factors of a product tree of `graph.mul`s whose interior values have one reader."""
    op = producer(v, graph.MulOp)
    if op is None or depth == 0 or not sole_use(v) or op.lhs.type != op.rhs.type:
        return [v]
    return [*mul_leaves(op.lhs, depth - 1), *mul_leaves(op.rhs, depth - 1)]


def split_factors(factors: list[SSAValue]) -> tuple[float, list[SSAValue]]:
    """(the product of the constant factors, the other factors)."""
    scale, rest = 1.0, []
    for f in factors:
        s = splat(f)
        if s is None:
            rest.append(f)
        else:
            scale *= s
    return scale, rest


def replace_root(rewriter: PatternRewriter, root: Operation, new: Operation) -> None:
    """Replace the chain's root by `new`, which keeps its name and provenance; the chain's
    interior ops and constants, now read by nothing, go."""
    for k in PROVENANCE:
        if k in root.attributes:
            new.attributes[k] = root.attributes[k]
    new.results[0].name_hint = root.results[0].name_hint
    below = [v.owner for v in root.operands]
    rewriter.replace(root, new)
    erase_dead(rewriter, below)


def erase_dead(rewriter: PatternRewriter, stack: list) -> None:
    """Erase the graph ops of `stack` that nothing reads any more, and theirs in turn."""
    while stack:
        o = stack.pop()
        if (
            isinstance(o, Operation)
            and o.parent is not None
            and o.dialect_name() == "graph"
            and o.results
            and not o.regions
            and all(r.first_use is None for r in o.results)
        ):
            stack.extend(v.owner for v in o.operands)
            rewriter.erase(o)


def shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())  # type: ignore[attr-defined]


def shared_param(rewriter: PatternRewriter, op: Operation, name: str, values: np.ndarray, dtype: Attribute) -> SSAValue:
    """The constant `values` for `op`, declared once per function under `name` at the top of its
    body (the planner meets a parameter before its readers) and shared by every raised op that
    needs the same one; a single value is kept as a splat."""
    f = op.parent_op()
    while f is not None and not isinstance(f, func.FuncOp):
        f = f.parent_op()
    assert f is not None, "a graph op outside a function"
    t = builtin.TensorType(dtype, values.shape)
    for p in f.body.block.ops:
        if isinstance(p, graph.ParameterOp) and p.sym_name.data == name and p.result.type == t:
            return p.result
    taken = {o.sym_name.data for o in f.walk() if isinstance(o, graph.ParameterOp)}
    base, k = name, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    flat = values.reshape(-1)
    splat_value = flat.size > 0 and bool((flat == flat[0]).all())
    init_type = builtin.TensorType(dtype, (1,) if splat_value else values.shape)
    init = DenseIntOrFPElementsAttr.from_list(init_type, [float(v) for v in (flat[:1] if splat_value else flat)])
    new = graph.ParameterOp(name, init, t)
    new.result.name_hint = name
    rewriter.insert(new, InsertPoint.at_start(f.body.block))
    return new.result


def composite(src: SSAValue, chain: list[Operation]) -> np.ndarray:
    """Where each element of the chain's result comes from, as flat indices into `src`: the
    chain's transposes and reshapes replayed on element indices (any other op, such as a scalar
    scale, moves no element)."""
    a = np.arange(math.prod(shape(src)), dtype=np.int64).reshape(shape(src))
    for o in chain:
        if isinstance(o, graph.TransposeOp):
            a = np.transpose(a, tuple(o.perm.get_values()))
        elif isinstance(o, graph.ReshapeOp):
            a = a.reshape(shape(o.results[0]))
    return a


__all__ = [
    "MAX_VIEW_ELEMENTS",
    "VIEW_OPS",
    "composite",
    "erase_dead",
    "mul_leaves",
    "near",
    "producer",
    "replace_root",
    "shape",
    "shared_param",
    "sole_use",
    "splat",
    "split_factors",
]
