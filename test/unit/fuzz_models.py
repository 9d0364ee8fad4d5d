"""Hypothesis strategies for random, well-typed `graph` models that fit the sim16/sim64 targets.

`graph_models()` draws MLIR text of one `func.func @main`: random chains of elementwise, matmul,
row (softmax, layer/rms norm, reduce), layout (transpose, reshape, cast) and attention blocks
(grouped heads, materialized or streamed, causal or not), optionally under `graph.repeat`, in f16
or f32. Models stay inside what the planner supports (row-vector broadcasts only, rank-2
transposes, even last dimensions for f16 reshapes, last-axis softmax/reduce, untransposed matmul
operands) and keep every value's magnitude bounded (`Value.scale`), so the dtype tolerances of the
reference comparison hold and any failure is a compiler bug rather than rounding noise. Simpler
choices come first in every list, so hypothesis shrinks towards small models.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st

F16, F32 = "f16", "f32"
ROWS = (8, 4, 16, 2, 32, 6, 64, 12)
COLS = (8, 16, 4, 32, 2, 64, 12, 24)
MAX_SCALE = 8.0  # bound on |value| kept by every op (inputs are standard normal: about 4)


def tensor(shape: tuple[int, ...], dtype: str) -> str:
    """`tensor<AxBxf16>` text."""
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"


@dataclass(frozen=True)
class Value:
    """An SSA value of the model being built: its name, type and a rough bound on its magnitude."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    scale: float

    @property
    def type(self) -> str:
        return tensor(self.shape, self.dtype)


@dataclass
class Builder:
    """Accumulates the lines of one function (nested regions indent further)."""

    lines: list[str] = field(default_factory=list)
    indent: int = 1
    counter: int = 0
    seed: int = 100

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.indent + line)

    def op(self, text: str, shape: tuple[int, ...], dtype: str, scale: float, prefix: str = "v") -> Value:
        """Emit `%new = <text>` and return the new value."""
        v = Value(self.fresh(prefix), shape, dtype, scale)
        self.emit(f"{v.name} = {text}")
        return v

    def gaussian(self, shape: tuple[int, ...], dtype: str, std: float) -> Value:
        """A seeded Gaussian parameter (its std sets the scale bound at 4 sigma)."""
        self.seed += 1
        name = self.fresh("w")
        s = f"{std:.4g}"
        s = s if any(ch in s for ch in ".en") else f"{s}.0"  # a float literal (1 -> 1.0)
        init = f"#graph.gaussian<seed = {self.seed}, std = {s}>"
        return self.op(
            f'graph.parameter "{name[1:]}" {init} : {tensor(shape, dtype)}',
            shape,
            dtype,
            4 * std,
            "p",
        )

    def dense(self, shape: tuple[int, ...], dtype: str, value: float) -> Value:
        """A splat dense parameter."""
        name = self.fresh("c")
        t = tensor(shape, dtype)
        return self.op(f'graph.parameter "{name[1:]}" dense<{value!r}> : {t} : {t}', shape, dtype, abs(value), "p")


Draw = Callable[[st.SearchStrategy], object]


def _unary(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    kind = draw(st.sampled_from(("relu", "gelu", "tanh", "exp", "sigmoid")))
    if kind == "exp" and x.scale > 2.0:
        kind = "tanh"
    bound = {"tanh": min(1.0, x.scale), "exp": math.exp(x.scale), "sigmoid": 1.0}
    scale = bound.get(kind, x.scale)  # relu and gelu keep their input's scale
    return b.op(f"graph.{kind} {x.name} : {x.type} -> {x.type}", x.shape, x.dtype, scale)


def _binary(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    kind = draw(st.sampled_from(("add", "mul", "sub", "max")))
    how = draw(st.sampled_from(("vector", "same", "param")))
    same = [v for v in pool if v.shape == x.shape and v.dtype == x.dtype]
    if how == "same" and same:
        y = draw(st.sampled_from(same))
    elif how == "param":
        y = b.gaussian(x.shape, x.dtype, 0.5)
    else:  # a row vector [n] broadcast over the rows
        vecs = [v for v in pool if v.shape == x.shape[-1:] and v.dtype == x.dtype]
        y = draw(st.sampled_from(vecs)) if vecs and draw(st.booleans()) else b.gaussian(x.shape[-1:], x.dtype, 0.5)
    scale = x.scale * y.scale if kind == "mul" else max(x.scale, y.scale) if kind == "max" else x.scale + y.scale
    if scale > MAX_SCALE:
        return None
    t = f"({x.type}, {y.type}) -> {x.type}"
    return b.op(f"graph.{kind} {x.name}, {y.name} : {t}", x.shape, x.dtype, scale)


def _matmul(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    m, k = x.shape
    n = draw(st.sampled_from(COLS))
    # weights with std 1/sqrt(k) keep the output's magnitude near the input's
    w = b.gaussian((k, n), x.dtype, 1.0 / math.sqrt(k))
    t = f"({x.type}, {w.type}) -> {tensor((m, n), x.dtype)}"
    return b.op(f"graph.matmul {x.name}, {w.name} : {t}", (m, n), x.dtype, min(MAX_SCALE, x.scale * 1.5))


def _matmul_activations(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    """x [m,k] times another activation [k,n] (or the transpose of one [n,k])."""
    m, k = x.shape
    direct = [v for v in pool if len(v.shape) == 2 and v.shape[0] == k and v.dtype == x.dtype]
    flipped = [v for v in pool if len(v.shape) == 2 and v.shape[1] == k and v.dtype == x.dtype]
    if direct and draw(st.booleans()):
        y = draw(st.sampled_from(direct))
    elif flipped:
        z = draw(st.sampled_from(flipped))
        y = b.op(
            f"graph.transpose {z.name} {{perm = array<i64: 1, 0>}} : {z.type} -> {tensor(z.shape[::-1], z.dtype)}",
            z.shape[::-1],
            z.dtype,
            z.scale,
        )
    else:
        return None
    scale = x.scale * y.scale * math.sqrt(k)
    if scale > MAX_SCALE:
        return None
    n = y.shape[1]
    t = f"({x.type}, {y.type}) -> {tensor((m, n), x.dtype)}"
    return b.op(f"graph.matmul {x.name}, {y.name} : {t}", (m, n), x.dtype, scale)


def _rowwise(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    kind = draw(st.sampled_from(("softmax", "layer_norm", "rms_norm")))
    n = x.shape[-1]
    eps = draw(st.sampled_from(("", " {epsilon = 1.0e-03 : f64}")))
    if kind == "softmax":
        ax = draw(st.sampled_from(("", " {axis = -1 : i64}", " {axis = 1 : i64}")))
        return b.op(f"graph.softmax {x.name}{ax} : {x.type} -> {x.type}", x.shape, x.dtype, 1.0)
    gamma = b.dense((n,), x.dtype, 1.0) if draw(st.booleans()) else b.gaussian((n,), x.dtype, 0.25)
    scale = max(1.0, gamma.scale) * min(4.0, math.sqrt(n))
    if kind == "rms_norm":
        t = f"({x.type}, {gamma.type}) -> {x.type}"
        return b.op(f"graph.rms_norm {x.name}, {gamma.name}{eps} : {t}", x.shape, x.dtype, scale)
    beta = b.dense((n,), x.dtype, 0.0) if draw(st.booleans()) else b.gaussian((n,), x.dtype, 0.1)
    t = f"({x.type}, {gamma.type}, {beta.type}) -> {x.type}"
    return b.op(f"graph.layer_norm {x.name}, {gamma.name}, {beta.name}{eps} : {t}", x.shape, x.dtype, scale + 0.5)


def _transpose(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    r = x.shape[::-1]
    return b.op(
        f"graph.transpose {x.name} {{perm = array<i64: 1, 0>}} : {x.type} -> {tensor(r, x.dtype)}", r, x.dtype, x.scale
    )


def _permute(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    """[a*c, d] seen as [a, c, d] (or [a, c, e, d]) with its leading axes permuted, the last kept
    (a plan.permute), then collapsed back."""
    rows, d = x.shape
    splits = [(a, rows // a) for a in (2, 4, 3) if rows % a == 0 and rows // a > 1]
    if not splits:
        return None
    a, c = draw(st.sampled_from(splits))
    shape, perm = (a, c, d), (1, 0, 2)
    if c % 2 == 0 and c > 2 and draw(st.booleans()):
        shape, perm = (a, 2, c // 2, d), draw(st.sampled_from(((2, 0, 1, 3), (1, 2, 0, 3))))
    v = b.op(f"graph.reshape {x.name} : {x.type} -> {tensor(shape, x.dtype)}", shape, x.dtype, x.scale)
    out = tuple(shape[i] for i in perm)
    p = ", ".join(map(str, perm))
    t = b.op(
        f"graph.transpose {v.name} {{perm = array<i64: {p}>}} : {v.type} -> {tensor(out, x.dtype)}",
        out,
        x.dtype,
        x.scale,
    )
    return b.op(f"graph.reshape {t.name} : {t.type} -> {x.type}", x.shape, x.dtype, x.scale)


def _reshape(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    total = x.shape[0] * x.shape[1]
    options = [c for c in COLS if total % c == 0 and (c % 2 == 0 or x.dtype == F32) and c != x.shape[1]]
    if not options:
        return None
    c = draw(st.sampled_from(options))
    r = (total // c, c)
    return b.op(f"graph.reshape {x.name} : {x.type} -> {tensor(r, x.dtype)}", r, x.dtype, x.scale)


def _cast(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    dt = F32 if x.dtype == F16 else F16
    return b.op(f"graph.cast {x.name} : {x.type} -> {tensor(x.shape, dt)}", x.shape, dt, x.scale)


def _attention(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    """q/k/v projections of x (keys optionally from another activation), split heads, attention,
    merge heads and optionally an output projection."""
    s, dm = x.shape
    hkv = draw(st.sampled_from((1, 2, 4)))
    hq = hkv * draw(st.sampled_from((1, 2, 4)))
    d = draw(st.sampled_from((8, 4, 16)))
    form = draw(st.sampled_from(("materialized", "streamed")))
    src = [v for v in pool if len(v.shape) == 2 and v.shape[1] == dm and v.dtype == x.dtype]
    kv_src = draw(st.sampled_from(src)) if src and draw(st.booleans()) else x
    causal = kv_src.shape[0] == s and draw(st.booleans())
    dt, sk = x.dtype, kv_src.shape[0]

    def proj(v: Value, heads: int) -> Value:
        w = b.gaussian((dm, heads * d), dt, 1.0 / math.sqrt(dm))
        rows = v.shape[0]
        p = b.op(
            f"graph.matmul {v.name}, {w.name} : ({v.type}, {w.type}) -> {tensor((rows, heads * d), dt)}",
            (rows, heads * d),
            dt,
            v.scale,
        )
        h = (heads, rows, d)
        return b.op(f"graph.split_heads {p.name} {{heads = {heads} : i64}} : {p.type} -> {tensor(h, dt)}", h, dt, 1)

    q, k, v = proj(x, hq), proj(kv_src, hkv), proj(kv_src, hkv)
    attrs = [f'form = "{form}"'] + (["causal"] if causal else [])
    if draw(st.booleans()):
        attrs.append(f"scale = {draw(st.sampled_from((0.25, 0.125, 0.5)))} : f64")
    t = f"({q.type}, {k.type}, {v.type}) -> {q.type}"
    a = b.op(f"graph.attention {q.name}, {k.name}, {v.name} {{{', '.join(attrs)}}} : {t}", q.shape, dt, kv_src.scale)
    merged = (s, hq * d)
    m = b.op(f"graph.merge_heads {a.name} : {a.type} -> {tensor(merged, dt)}", merged, dt, a.scale)
    del sk
    if draw(st.booleans()):
        return m
    wo = b.gaussian((hq * d, dm), dt, 1.0 / math.sqrt(hq * d))
    t = f"({m.type}, {wo.type}) -> {x.type}"
    return b.op(f"graph.matmul {m.name}, {wo.name} : {t}", x.shape, dt, min(MAX_SCALE, m.scale * 1.5))


def _image(draw: Draw, x: Value) -> tuple[int, int] | None:
    """An [H, W] image view of x's rows (x [H W, C] seen as [1, H, W, C]), or None."""
    rows = x.shape[0]
    shapes = [(h, rows // h) for h in (2, 3, 4, 6, 8) if rows % h == 0 and rows // h >= 2]
    return draw(st.sampled_from(shapes)) if shapes else None


def _window_attrs(
    draw: Draw, h: int, w: int
) -> tuple[int, int, tuple[int, int], tuple[int, int], tuple[int, ...]] | None:
    """(kernel rows, columns, strides, dilations, pads) of a window that fits an h x w image (a
    dilation of 2 where the dilated kernel still fits)."""
    kh, kw = draw(st.integers(1, min(3, h))), draw(st.integers(1, min(3, w)))
    st_ = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dl = tuple(draw(st.integers(1, 2)) if k > 1 and 2 * (k - 1) + 1 <= n else 1 for k, n in ((kh, h), (kw, w)))
    pads = tuple(draw(st.integers(0, k - 1)) for k in (kh, kw, kh, kw))
    return kh, kw, st_, (dl[0], dl[1]), pads


def _out(n: int, k: int, s: int, lo: int, hi: int, d: int = 1) -> int:
    return (n + lo + hi - (k - 1) * d - 1) // s + 1


def _windowed(draw: Draw, b: Builder, x: Value):  # noqa: ANN202 -- a tuple of the window's parts
    """x [H W, C] viewed as a [1, H, W, C] image, with a drawn window: (the image, C, KH, KW,
    strides, dilations, pads, (OH, OW)), or None when x's rows are no image."""
    hw = _image(draw, x)
    if hw is None:
        return None
    h, w = hw
    c = x.shape[1]
    kh, kw, (sh, sw), (dh, dw), pads = _window_attrs(draw, h, w)  # type: ignore[misc]
    out = (_out(h, kh, sh, pads[0], pads[2], dh), _out(w, kw, sw, pads[1], pads[3], dw))
    img = b.op(f"graph.reshape {x.name} : {x.type} -> {tensor((1, h, w, c), x.dtype)}", (1, h, w, c), x.dtype, x.scale)
    return img, c, kh, kw, (sh, sw), (dh, dw), pads, out


def _conv(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    """x [H W, C] as a [1, H, W, C] image through a graph.conv (strides, dilations, pads, groups
    or depthwise: the conv family's AMP and vector paths and the expansion), collapsed back to
    [OH OW, O]."""
    win = _windowed(draw, b, x)
    if win is None:
        return None
    img, c, kh, kw, (sh, sw), (dh, dw), pads, (oh, ow) = win
    groups = draw(st.sampled_from([g for g in (1, 2, c) if c % g == 0]))
    o = c if groups == c else draw(st.sampled_from([d for d in (c, 2 * c, 8) if d % groups == 0]))
    fan = kh * kw * (c // groups)
    f = b.gaussian((kh, kw, c // groups, o), x.dtype, 1.0 / fan**0.5)
    r = (1, oh, ow, o)
    attrs = (
        f"strides = array<i64: {sh}, {sw}>, dilations = array<i64: {dh}, {dw}>, "
        f"pads = array<i64: {', '.join(map(str, pads))}>, groups = {groups} : i64"
    )
    y = b.op(
        f"graph.conv {img.name}, {f.name} {{{attrs}}} : ({img.type}, {f.type}) -> {tensor(r, x.dtype)}",
        r,
        x.dtype,
        min(MAX_SCALE, x.scale * 4),
    )
    return b.op(f"graph.reshape {y.name} : {y.type} -> {tensor((oh * ow, o), x.dtype)}", (oh * ow, o), x.dtype, y.scale)


def _pool(draw: Draw, b: Builder, x: Value, pool: list[Value]) -> Value | None:
    """x [H W, C] as a [1, H, W, C] image through a max or average graph.pool."""
    win = _windowed(draw, b, x)
    if win is None:
        return None
    img, c, kh, kw, (sh, sw), (dh, dw), pads, (oh, ow) = win
    kind = draw(st.sampled_from(("max", "avg")))
    r = (1, oh, ow, c)
    attrs = (
        f'kind = "{kind}", kernel = array<i64: {kh}, {kw}>, strides = array<i64: {sh}, {sw}>, '
        f"dilations = array<i64: {dh}, {dw}>, pads = array<i64: {', '.join(map(str, pads))}>"
        + (", count_include_pad" if kind == "avg" and draw(st.booleans()) else "")
    )
    y = b.op(f"graph.pool {img.name} {{{attrs}}} : {img.type} -> {tensor(r, x.dtype)}", r, x.dtype, x.scale)
    return b.op(f"graph.reshape {y.name} : {y.type} -> {tensor((oh * ow, c), x.dtype)}", (oh * ow, c), x.dtype, y.scale)


OPS: dict[str, Callable[[Draw, Builder, Value, list[Value]], Value | None]] = {
    "conv": _conv,
    "pool": _pool,
    "unary": _unary,
    "binary": _binary,
    "matmul": _matmul,
    "rowwise": _rowwise,
    "transpose": _transpose,
    "reshape": _reshape,
    "permute": _permute,
    "cast": _cast,
    "matmul_activations": _matmul_activations,
    "attention": _attention,
}
# ops whose result keeps its input's type (usable to close a repeat body)
SHAPE_KEEPING = ("unary", "binary", "rowwise", "attention", "permute")
BOUNDED = ("tanh", "softmax", "layer_norm", "rms_norm")


def _steps(draw: Draw, b: Builder, pool: list[Value], count: int, kinds: tuple[str, ...]) -> None:
    """Apply `count` random ops to values of `pool` (rank 2), appending their results."""
    for _ in range(count):
        kind = draw(st.sampled_from(kinds))
        srcs = [v for v in pool if len(v.shape) == 2]
        x = draw(st.sampled_from(srcs[::-1]))  # the newest value first
        v = OPS[kind](draw, b, x, pool)
        if v is not None:
            pool.append(v)


def _repeat(draw: Draw, b: Builder, pool: list[Value], permute: bool) -> None:
    """A `graph.repeat` carrying one or two values through a body of shape-keeping ops that ends
    in a bounded op (so magnitudes stay bounded over the iterations); with `permute` a carried value
    may be yielded in another's place."""
    srcs = [v for v in pool if len(v.shape) == 2]
    carried = draw(st.lists(st.sampled_from(srcs[::-1]), min_size=1, max_size=2, unique_by=lambda v: v.name))
    count = draw(st.integers(1, 3))
    args = [Value(b.fresh("c"), v.shape, v.dtype, max(v.scale, 4.0)) for v in carried]
    results = [b.fresh("r") for _ in carried]
    inits = ", ".join(f"{a.name} = {v.name}" for a, v in zip(args, carried, strict=True))
    types = ", ".join(v.type for v in carried)
    head = ", ".join(results) if len(results) == 1 else ", ".join(results)
    b.emit(f"{head} = graph.repeat {count} iter({inits}) : ({types}) {{")
    b.indent += 1
    body = list(args)
    _steps(draw, b, body, draw(st.integers(0, 3)), SHAPE_KEEPING)
    yields = []
    for a in args:
        same = [v for v in body if v.type == a.type and (permute or v is a or v not in args)]
        y = draw(st.sampled_from(same[::-1]))
        if y.scale > a.scale:  # bound it: the next iteration assumes the carried scale
            y = b.op(f"graph.tanh {y.name} : {y.type} -> {y.type}", y.shape, y.dtype, 1.0)
        yields.append(y)
    b.emit(f"graph.yield {', '.join(y.name for y in yields)} : {', '.join(y.type for y in yields)}")
    b.indent -= 1
    b.emit("}")
    for r, a in zip(results, args, strict=True):
        pool.append(Value(r, a.shape, a.dtype, a.scale))


@st.composite
def graph_models(
    draw: Draw, kinds: tuple[str, ...] = tuple(OPS), repeats: bool = True, known_bugs: bool = False
) -> str:
    """MLIR text of a random graph-level model (`func.func @main`) using the op families `kinds` and
    `graph.repeat` regions (`repeats`). Constructs that hit open compiler bugs are drawn only with
    `known_bugs` (see test/fuzz/regressions/*.mlir marked XFAIL): repeats that yield one carried
    value in another's place."""
    dtype = draw(st.sampled_from((F16, F32)))
    rows, cols = draw(st.sampled_from(ROWS)), draw(st.sampled_from(COLS))
    b = Builder()
    args = [Value("%x", (rows, cols), dtype, 4.0)]
    extra = draw(st.sampled_from(("", "matrix", "vector", "other")))
    if extra == "matrix":
        args.append(Value("%y", (rows, cols), dtype, 4.0))
    elif extra == "vector":
        args.append(Value("%y", (cols,), dtype, 4.0))
    elif extra == "other":
        args.append(Value("%y", (draw(st.sampled_from(ROWS)), cols), dtype, 4.0))
    pool = list(args)
    for _ in range(draw(st.integers(1, 3))):
        if repeats and draw(st.integers(0, 3)) == 0:
            _repeat(draw, b, pool, known_bugs)
        else:
            _steps(draw, b, pool, draw(st.integers(1, 3)), kinds)
    if pool[-1] in args:  # at least one operation (a function of only arguments is no graph model)
        pool.append(_unary(draw, b, pool[-1], pool))
    outs = [pool[-1]]
    extra_outs = draw(st.lists(st.sampled_from(pool), max_size=2, unique_by=lambda v: v.name))
    outs += [v for v in extra_outs if v.name != outs[0].name]
    if draw(st.integers(0, 4)) == 0:  # a row reduction as an extra output (rank 1)
        x = draw(st.sampled_from([v for v in pool if len(v.shape) == 2][::-1]))
        kind = draw(st.sampled_from(("mean", "max", "sum")))
        r = x.shape[:1]
        outs.append(
            b.op(
                f'graph.reduce {x.name} {{kind = "{kind}", axis = 1 : i64}} : {x.type} -> {tensor(r, x.dtype)}',
                r,
                x.dtype,
                x.scale,
            )
        )
    b.emit(f"func.return {', '.join(v.name for v in outs)} : {', '.join(v.type for v in outs)}")
    sig = ", ".join(f"{a.name}: {a.type}" for a in args)
    results = ", ".join(v.type for v in outs)
    results = results if len(outs) == 1 else f"({results})"
    return "\n".join([f"func.func @main({sig}) -> {results} {{", *b.lines, "}", ""])


__all__ = ["OPS", "Value", "graph_models", "tensor"]
