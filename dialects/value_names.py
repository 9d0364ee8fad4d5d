"""Stable names of graph values: the identity by which a checkpoint is matched with the golden
reference's value.

A graph op's value is named by its result's SSA name hint (`%h = graph.matmul …` is `h`). A
graph-level rewrite that keeps the names of the values it keeps (a reorder, a fusion that gives
the fused op the name of the value it replaces) therefore keeps every checkpoint matched with the
same reference value, where a pre-order op index would shift. Values without a usable hint
(unnamed `%0`, or a hint already taken in the function, as a builder or importer may produce, or
as xDSL makes of `%h` and `%h_1`: it drops a `_<digits>` suffix from every hint) get a generated
one, the op's name (`gelu`) or `<hint or op>.<k>`, the first not taken in the function: `name_values` writes
them into the IR once, at the graph level, so that every later level carries the same names and
the text form prints them verbatim (names are unique per function, so the printer adds no suffix).
"""

from __future__ import annotations

from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

_TERMINATORS = ("func.return", "graph.yield")

DERIVED = "ipu.derived"
"""A unit attribute on a graph op that a graph-level expansion introduced (`expand-conv`'s windows
and partial sums): its value is not in the model's reference, so it names no checkpoint."""


def named_ops(func_op: FuncOp) -> list[Operation]:
    """The function's value-producing graph ops in pre-order (a `graph.repeat` before its body)."""
    return [op for op in func_op.body.walk() if op.results and op.name not in _TERMINATORS]


def _values(func_op: FuncOp) -> list[tuple[SSAValue, Operation | None]]:
    """Every value of the function in the printer's order: arguments, then per op its results and
    its regions' block arguments, with the op that defines it (None for arguments)."""
    out: list[tuple[SSAValue, Operation | None]] = [(a, None) for a in func_op.args]
    for op in func_op.body.walk():
        if isinstance(op, ReturnOp):
            continue
        out += [(r, op) for r in op.results]
        for region in op.regions:
            for block in region.blocks:
                out += [(a, None) for a in block.args]
    return out


def _assign(func_op: FuncOp) -> dict[SSAValue, str]:
    """A unique name for every value that has a hint or is an op's first result; the first holder
    of a hint keeps it, later holders and unnamed first results get a generated one."""
    values = _values(func_op)
    taken = {v.name_hint for v, _ in values if v.name_hint}
    claimed: set[str] = set()
    names: dict[SSAValue, str] = {}
    pending: list[tuple[SSAValue, str]] = []
    for v, op in values:
        hint = v.name_hint
        if hint and hint not in claimed:
            claimed.add(hint)
            names[v] = hint
        elif hint or (op is not None and v is op.results[0]):
            pending.append((v, hint, hint or (op.name.split(".")[-1] if op is not None else "v")))
    for v, hint, base in pending:
        candidates = ([] if hint else [base]) + [f"{base}.{k}" for k in range(1, len(values) + 2)]
        name = next(c for c in candidates if c not in taken and c not in claimed)
        claimed.add(name)
        names[v] = name
    return names


def value_names(func_op: FuncOp) -> dict[Operation, str]:
    """The stable name of every value-producing op (its first result), without changing the IR;
    after `name_values`, exactly the result name hints."""
    names = _assign(func_op)
    return {op: names[op.results[0]] for op in named_ops(func_op)}


def name_values(func_op: FuncOp) -> None:
    """Write the stable names into the function's name hints (idempotent)."""
    for v, name in _assign(func_op).items():
        v.name_hint = name


__all__ = ["DERIVED", "name_values", "named_ops", "value_names"]
