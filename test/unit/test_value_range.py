"""`value_range.nonnegative` and `max_pool_planned`: which values are >= 0 by construction, and
which max pools the pool family may run on zero-filled patches."""

from __future__ import annotations

import pytest
from xdsl.dialects import func

from ipu import api
from ipu.dialects import graph
from ipu.transforms.graph.value_range import max_pool_planned, nonnegative

T = "tensor<1x4x4x8xf16>"


def _values(body: str) -> dict[str, object]:
    """The named values of `func.func @main(%x: T, %y: T)` with `body`."""
    m = api.parse(f"func.func @main(%x: {T}, %y: {T}) -> {T} {{\n{body}\n}}")
    f = next(op for op in m.walk() if isinstance(op, func.FuncOp))
    out = {a.name_hint: a for a in f.args}
    for op in f.walk():
        for r in op.results:
            if r.name_hint:
                out[r.name_hint] = r
    return out


CASES = [
    (f"%r = graph.relu %x : {T} -> {T}", "r", True),
    (f"%r = graph.sigmoid %x : {T} -> {T}", "r", True),
    (f"%r = graph.neg %x : {T} -> {T}", "r", False),
    (f"%r = graph.relu %x : {T} -> {T}\n%v = graph.reshape %r : {T} -> tensor<16x8xf16>", "v", True),
    (f"%r = graph.relu %x : {T} -> {T}\n%s = graph.add %r, %r : ({T}, {T}) -> {T}", "s", True),
    (f"%r = graph.relu %x : {T} -> {T}\n%s = graph.add %r, %y : ({T}, {T}) -> {T}", "s", False),
    (f"%r = graph.relu %x : {T} -> {T}\n%s = graph.max %y, %r : ({T}, {T}) -> {T}", "s", True),
    (f"%s = graph.max %x, %y : ({T}, {T}) -> {T}", "s", False),
]


@pytest.mark.parametrize(
    ("body", "name", "want"), CASES, ids=[c[0].split("\n")[-1].split(" = ")[1][:24] for c in CASES]
)
def test_nonnegative(body: str, name: str, want: bool) -> None:
    v = _values(body + f"\nfunc.return %x : {T}")
    assert nonnegative(v[name]) is want  # type: ignore[arg-type]
    assert nonnegative(v["x"]) is False  # type: ignore[arg-type]


POOL = (
    '%p = graph.pool {src} {{kind = "{kind}", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, '
    "dilations = array<i64: 1, 1>, pads = array<i64: {pads}>}} : {T} -> tensor<1x{o}x{o}x8xf16>"
)


@pytest.mark.parametrize(
    ("kind", "relu", "pads", "out", "want"),
    [
        ("max", True, "1, 1, 1, 1", 2, True),  # a ReLU's: padding never wins
        ("max", False, "1, 1, 1, 1", 2, False),  # a signed value, padded: expanded
        ("max", False, "0, 0, 0, 0", 1, True),  # no padding, no window past the input
        ("max", False, "0, 0, 0, 0", 2, False),  # ceil mode: the second window reaches past the input
        ("avg", True, "1, 1, 1, 1", 2, False),  # average pools are expanded
    ],
)
def test_max_pool_planned(kind: str, relu: bool, pads: str, out: int, want: bool) -> None:
    body = f"%r = graph.relu %x : {T} -> {T}\n" if relu else ""
    body += POOL.format(src="%r" if relu else "%x", kind=kind, pads=pads, T=T, o=out)
    r = f"tensor<1x{out}x{out}x8xf16>"
    m = api.parse(f"func.func @main(%x: {T}) -> {r} {{\n{body}\nfunc.return %p : {r}\n}}")
    pool = next(op for op in m.walk() if isinstance(op, graph.PoolOp))
    assert max_pool_planned(pool) is want
