"""StableHLO (JAX) -> `graph`: JAX's text is read into the `stablehlo` dialect, then each op is
lowered straight to `graph` ops through the value-level builder the ONNX importer uses too
(`value_builder.ValueBuilder` and the value cores of `onnx_import`, `onnx_datamove`, `onnx_cnn`,
`onnx_routing`): values in, graph values out, so each op's graph construction (the rank >= 3 row
collapse, broadcasting, head reshapes into split/merge heads, convolutions and pools channels
last, integer handling) is defined once for both frontends. The fusions (GeLU, norms, SiLU,
rsqrt, attention, grouped KV heads) are raised afterwards on graph IR by `raise-graph-ops`, the
same for both frontends.

Each StableHLO op has one rule here (`_RULES`), keyed by op class; an op whose operands are all
constants is folded (NumPy) instead. Peepholes over the StableHLO ops restore what JAX
decomposes: `reduce(add) / n` is a mean, the max-subtract-exp-sum-divide chain of
`jax.nn.softmax` a `graph.softmax`, Flax's `mean(x^2) - mean(x)^2` the two-pass variance, and
`erfc(-x / sqrt 2)` the `1 + erf(x / sqrt 2)` of the exact GeLU. `broadcast_in_dim` feeding
elementwise ops stays an implicit (NumPy) broadcast, no copy, so the fused patterns see the
operands they expect. Private functions are inlined at every `func.call`.

Function arguments are the inputs `arg0, arg1, …`, results the outputs `out0, out1, …`.
Anything without a rule raises `StablehloImportError` naming the StableHLO op.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import chlo
from ipu.dialects import graph as g
from ipu.dialects import stablehlo as sh
from ipu.frontends import onnx_cnn, onnx_datamove, onnx_import, onnx_routing
from ipu.frontends.value_builder import (
    Val,
    ValueBuilder,
    _tt,
    cast_value,
    collapsed,
    transpose_value,
    value_shape,
)
from ipu.ir_text import looks_like_stablehlo
from ipu.transforms.graph.raise_graph_ops import RaiseGraphOpsPass


class StablehloImportError(DiagnosticException):
    """A StableHLO program (or one op of it) the importer cannot express in the `graph` dialect."""


# ---------------------------------------------------------------------------------------------
# reading JAX's text


def _strip_locations(text: str) -> str:
    """`text` without `loc(...)` locations and `#loc… = loc(...)` alias definitions (JAX's
    `as_text(debug_info=True)`): xDSL cannot read aliases defined after their use, and source
    locations carry nothing the compiler keeps."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':  # copy string literals verbatim
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if text.startswith("loc(", i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.#")):
            depth, j = 0, i + 3
            while j < n:
                if text[j] == '"':
                    j += 1
                    while j < n and text[j] != '"':
                        j += 2 if text[j] == "\\" else 1
                elif text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            i = j + 1
            continue
        out.append(c)
        i += 1
    lines = [ln for ln in "".join(out).splitlines() if not re.match(r"\s*#loc[\w.$-]*\s*=\s*$", ln)]
    return "\n".join(lines) + "\n"


def clean_text(text: str) -> str:
    """JAX's StableHLO text made readable by xDSL: locations stripped (hex float literals such
    as `dense<0xFF800000> : tensor<f32>`, -inf, read as bits: `ipu.xdsl_fixes`)."""
    return _strip_locations(text)


def parse_stablehlo(text: str, name: str = "<stablehlo>") -> ModuleOp:
    """The verified `stablehlo` module of JAX's pretty or generic text."""
    from ipu.context import make_context
    from ipu.ir_text import ApiError, parse_text

    try:
        return parse_text(make_context(), clean_text(text), name)
    except ApiError as e:
        raise StablehloImportError(str(e)) from None


# ---------------------------------------------------------------------------------------------
# types and constants


def _np_dtype(et) -> type:
    if isinstance(et, builtin.Float32Type):
        return np.float32
    if isinstance(et, builtin.Float16Type):
        return np.float16
    if isinstance(et, builtin.Float64Type):
        return np.float64
    if isinstance(et, IntegerType):
        w, unsigned = et.width.data, et.signedness.data == builtin.Signedness.UNSIGNED
        if w == 1:
            return np.bool_
        return np.dtype(f"{'u' if unsigned else ''}int{w}").type
    raise StablehloImportError(f"stablehlo import: element type {et} is not supported (use f32, f16 or integers)")


def dense_value(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The numpy value of a dense literal (its type's shape and element type)."""
    t = attr.type
    dt = _np_dtype(t.element_type)
    shape = tuple(t.get_shape())
    if dt is np.bool_:
        vals = np.asarray([bool(v) for v in attr.get_values()], np.bool_)
    else:
        vals = np.asarray(attr.get_values(), dtype=dt)
    return vals.reshape(shape) if vals.size == math.prod(shape) else np.broadcast_to(vals.reshape(()), shape).copy()


def _shape(v: SSAValue) -> tuple[int, ...]:
    return sh.shape(v.type)


def _dtype(v: SSAValue) -> type:
    return _np_dtype(sh.element(v.type))


def _device_dtype(dt: type) -> type:
    """float64 is computed in float32 (the device has no f64), as the host narrows it."""
    return np.float32 if np.dtype(dt) == np.float64 else dt


# ---------------------------------------------------------------------------------------------
# the translation


@dataclass
class Entry:
    """What a StableHLO value is lowered to: a graph value or a constant (`v`, named `name`).
    Without `bcast` it holds the same elements in the same order (its shape may differ by unit
    dimensions, e.g. a `keepdims` reduction); with `bcast` it broadcasts, NumPy-style, to the
    StableHLO value (an unmaterialized `broadcast_in_dim`)."""

    v: Val | np.ndarray
    name: str = ""
    bcast: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return value_shape(self.v)


def _strip1(s: tuple[int, ...]) -> tuple[int, ...]:
    i = 0
    while i < len(s) and s[i] == 1:
        i += 1
    return s[i:]


def _through(v: SSAValue, *kinds: type) -> SSAValue:
    """Walk back through ops of `kinds` (broadcasts, unit reshapes) to their source."""
    while isinstance(v.owner, kinds):
        v = v.owner.operands[0]
    return v


def _uses(v: SSAValue) -> int:
    return len(list(v.uses))


def _reduce_kind(op: Operation) -> tuple[str, tuple[int, ...]] | None:
    if isinstance(op, sh.ReduceOp) and len(op.inputs) == 1:
        kind = op.simple_reducer()
        if kind is not None:
            return kind, sh._arr(op.dimensions)
    return None


def _key(x: Val | np.ndarray) -> int:
    return id(x.ssa) if isinstance(x, Val) else id(x)


class _Builder(ValueBuilder):
    """The graph builder of one StableHLO import: its diagnostics name the StableHLO op being
    lowered, and every op it emits carries that op (`onnx.node`, the provenance attribute)."""

    def __init__(self) -> None:
        super().__init__()
        self.current = ""  # the StableHLO op being lowered

    def fail(self, msg: str) -> StablehloImportError:
        return StablehloImportError(f"stablehlo import: {self.current or 'module'}: {msg}")

    def provenance(self) -> str | None:
        return self.node_label or None


# NumPy folds of the graph ops a rule computes on constants (what the ONNX importer folds)
_FOLD_BINARY: dict[str, Callable] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": lambda a, b: np.fix(np.true_divide(a, b)).astype(a.dtype) if a.dtype.kind in "iu" else a / b,
    "max": np.maximum,
    "min": np.minimum,
    "pow": np.power,
    "and": np.logical_and,
    "or": np.logical_or,
    "fmod": np.fmod,
    "mod": np.mod,
    "equal": np.equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}
_FOLD_UNARY: dict[type, Callable] = {
    g.ExpOp: np.exp,
    g.TanhOp: np.tanh,
    g.NegOp: np.negative,
    g.SqrtOp: np.sqrt,
    g.SigmoidOp: lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype),
    g.LogOp: np.log,
    g.AbsOp: np.abs,
    g.SinOp: np.sin,
    g.CosOp: np.cos,
    g.FloorOp: np.floor,
    g.SignOp: np.sign,
    g.NotOp: np.logical_not,
    g.ReciprocalOp: lambda x: (np.ones((), x.dtype) / x).astype(x.dtype),
    g.ErfOp: lambda x: np.vectorize(math.erf, otypes=[x.dtype])(x),
}


class _Translator:
    def __init__(self, module: ModuleOp):
        self.module = module
        self.funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        self.b = _Builder()
        self.count = 0
        self.softmaxes: set[SSAValue] = set()  # results of the softmax peephole
        self.transposes: dict[SSAValue, tuple[Val, list[int]]] = {}  # transposes' results: (input, perm)
        self.memo: dict[tuple, Val | np.ndarray] = {}  # one graph value per computation
        self.made: dict[SSAValue, tuple] = {}  # peephole results: ("mean", x, axes), ("square", x)
        self.bcast_src: dict[SSAValue, Val] = {}  # broadcast_in_dim's unit-dimension reshapes: their input
        self.repeats: dict[SSAValue, tuple[Val, int]] = {}  # jnp.repeat of [b, s, hkv, d] heads: (x, r)
        self.depth = 0
        self.skip: set[Operation] = set()  # ops not translated (a loop's counter step)
        self.loop: Block | None = None  # the graph.repeat body being built (`_while_as_repeat`)
        self.around: Block | None = None  # the block that loop's repeat goes into

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, value: np.ndarray, hint: str = "c", bcast: bool = False) -> Entry:
        """A constant entry (registered under a fresh name: one parameter per constant)."""
        name = self.fresh(hint)
        self.b.consts[name] = a = np.asarray(value)
        return Entry(a, name, bcast)

    def scalar(self, v: SSAValue, env: dict[SSAValue, Entry]) -> float | None:
        """The value of `v` when it is a known constant with all elements equal."""
        c = env[v].v if v in env else None
        if not isinstance(c, np.ndarray) or not c.size or not (c == c.reshape(-1)[0]).all():
            return None
        return float(c.reshape(-1)[0])

    # --- the main function ---------------------------------------------------------------

    def main(self) -> func.FuncOp:
        pub = [f for f in self.funcs.values() if f.sym_visibility is None or f.sym_visibility.data == "public"]
        main = self.funcs.get("main") or (pub[0] if len(pub) == 1 else None)
        if main is None:
            raise StablehloImportError("stablehlo import: no @main function (and not exactly one public function)")
        return main

    def run(self) -> ModuleOp:
        main = self.main()
        b = self.b
        nres = len(main.function_type.outputs.data)
        b.hints = {f"arg{i}" for i in range(len(main.body.block.args))} | {f"out{i}" for i in range(nres)}
        args, env, ins = [], {}, []
        for i, a in enumerate(main.body.block.args):
            if not isinstance(a.type, TensorType):
                raise StablehloImportError(f"stablehlo import: argument {i} of @main has type {a.type}, not a tensor")
            dt = _dtype(a)
            arg, v = b.argument(f"arg{i}", _shape(a), _device_dtype(dt))
            args.append((f"arg{i}", arg))
            ins.append(np.dtype(dt))
            env[a] = Entry(v, f"arg{i}")
        results = self.block(main.body.block, env)
        outs, out_dtypes = [], {}
        b.current, b.node_label = "func.return", "func.return"
        for i, (v, e) in enumerate(results):
            name, dt = f"out{i}", _dtype(v)
            x = self.mat(v, e).v
            if isinstance(x, np.ndarray):  # known at compile time: a weight the programs copy out
                outs.append((name, b.constant_output(name, x.astype(_device_dtype(dt)), _shape(v), _device_dtype(dt))))
            else:
                outs.append((name, b.output(x, _shape(v), _device_dtype(dt), name)))
            out_dtypes[name] = np.dtype(dt)
        f = b.function(args, outs)
        narrowed = {n: d for n, d in [*zip((n for n, _ in args), ins, strict=True), *out_dtypes.items()]}
        if any(d == np.float64 for d in narrowed.values()):  # computed in float32, as the host narrows them
            f.attributes["ipu.narrowed"] = DictionaryAttr(
                {n: StringAttr("f64") for n, d in narrowed.items() if d == np.float64}
            )
        b.record_dtypes(f, ins, out_dtypes)
        return ModuleOp([f])

    def block(self, block, env: dict[SSAValue, Entry]) -> list[tuple[SSAValue, Entry]]:
        """Translate a function body; its returned values and their entries."""
        for op in block.ops:
            if isinstance(op, func.ReturnOp | sh.ReturnOp):
                return [(v, env[v]) for v in op.operands]
            if op in self.skip:
                continue
            if isinstance(op, func.CallOp):
                self.call(op, env)
                continue
            rule = _RULES.get(type(op))
            if rule is None:
                raise StablehloImportError(
                    f"stablehlo import: {op.name} is not supported (no graph-level equivalent)"
                    + (f": {_why[type(op)]}" if type(op) in _why else "")
                )
            self.b.current, self.b.node_label = op.name, self.fresh(op.name)
            try:
                out = rule(self, op, env)
            except StablehloImportError:
                raise
            except (ValueError, KeyError, IndexError) as e:
                raise StablehloImportError(f"stablehlo import: {op.name}: {e}") from None
            for r, e in zip(op.results, out if isinstance(out, list) else [out], strict=True):
                env[r] = e
        raise StablehloImportError("stablehlo import: a function body does not end in a return")

    def call(self, op: func.CallOp, env: dict[SSAValue, Entry]) -> None:
        callee = self.funcs.get(op.callee.string_value())
        if callee is None:
            raise StablehloImportError(f"stablehlo import: func.call of unknown function @{op.callee.string_value()}")
        self.depth += 1
        if self.depth > 64:
            raise StablehloImportError(f"stablehlo import: @{callee.sym_name.data} calls itself (recursion)")
        inner = {a: env[v] for a, v in zip(callee.body.block.args, op.arguments, strict=True)}
        results = self.block(callee.body.block, inner)
        self.depth -= 1
        for r, (_, e) in zip(op.results, results, strict=True):
            env[r] = e

    # --- values: each graph construction through the builder, constants folded ------------

    def once(self, key: tuple, make: Callable[[], Val | np.ndarray], hint: str = "v") -> Entry:
        """The entry of the computation `key`, made once (a peephole may rebuild one JAX also has)."""
        if key not in self.memo:
            self.memo[key] = make()
        v = self.memo[key]
        if isinstance(v, np.ndarray):
            name = next((k for k, c in self.b.consts.items() if c is v), None)
            if name is None:
                return self.const(v, hint)
            return Entry(v, name)
        return Entry(v, hint)

    def binary(self, kind: str, a: Entry, c: Entry) -> Entry:
        """a <kind> c, NumPy-broadcast (`binary_values`; a division `div_values`, a power
        `pow_values`); folded when both are constants."""
        if isinstance(a.v, np.ndarray) and isinstance(c.v, np.ndarray):
            x, y = a.v, c.v
            return self.once(("bin", kind, _key(x), _key(y)), lambda: np.asarray(_FOLD_BINARY[kind](x, y)), kind)
        b, hint = self.b, kind

        def make() -> Val:
            if kind == "div":
                return onnx_import.div_values(b, a.v, c.v, a.name, c.name, hint)
            if kind == "pow" and isinstance(a.v, Val):
                return onnx_import.pow_values(b, a.v, c.v, a.name, c.name, hint)
            return b.binary_values(kind, a.v, c.v, a.name, c.name, hint)

        return self.once(("bin", kind, _key(a.v), _key(c.v)), make, kind)

    def unary(self, cls: type[g.ElementwiseUnaryOp], x: Entry) -> Entry:
        hint = cls.name.removeprefix("graph.")
        if isinstance(x.v, np.ndarray):
            xv = x.v
            return self.once(("un", cls, _key(xv)), lambda: np.asarray(_FOLD_UNARY[cls](xv)), hint)
        return self.once(("un", cls, _key(x.v)), lambda: onnx_import.unary_value(self.b, cls, x.v, hint), hint)

    def square(self, x: Entry) -> Entry:
        """x * x (`pow_values` of 2: the product), recorded for the variance peephole."""
        two = self.const(np.asarray(2, x.v.dtype))
        out = self.binary("pow", x, two)
        if isinstance(out.v, Val) and isinstance(x.v, Val):
            self.made[out.v.ssa] = ("square", x.v)
        return out

    def reshape(self, x: Entry, shape: tuple[int, ...], hint: str = "reshape") -> Entry:
        """x at `shape` (the same elements): token ids keep their graph value (`index_view`)."""
        shape = tuple(shape)
        if isinstance(x.v, np.ndarray):
            xv = x.v
            return self.once(("reshape", _key(xv), shape), lambda: np.reshape(xv, shape), hint)

        def make() -> Val:
            alias = onnx_import.index_view(x.v, shape)
            return alias if alias is not None else self.b.reshape(x.v, shape, hint)

        return self.once(("reshape", _key(x.v), shape), make, hint)

    def expand(self, x: Entry, shape: tuple[int, ...], hint: str = "expand") -> Entry:
        shape = tuple(shape)
        if isinstance(x.v, np.ndarray):
            xv = x.v
            return self.once(("expand", _key(xv), shape), lambda: np.broadcast_to(xv, shape).copy(), hint)
        return self.once(
            ("expand", _key(x.v), shape), lambda: onnx_import.expand_value(self.b, x.v, shape, x.name, hint), hint
        )

    def transpose(self, x: Entry, perm: list[int], hint: str = "transpose") -> Entry:
        """x with its axes permuted (a transpose of a transpose reads the first one's input)."""
        perm = [int(p) for p in perm]
        if isinstance(x.v, Val) and x.v.ssa in self.transposes:
            src, first = self.transposes[x.v.ssa]
            x, perm = Entry(src, x.name), [first[i] for i in perm]
        if perm == sorted(perm):
            return x
        if isinstance(x.v, np.ndarray):
            xv = x.v
            return self.once(("transpose", _key(xv), tuple(perm)), lambda: np.transpose(xv, perm).copy(), hint)
        src = x.v

        def make() -> Val:
            y = transpose_value(self.b, src, perm, hint)
            self.transposes[y.ssa] = (src, perm)
            return y

        return self.once(("transpose", _key(src), tuple(perm)), make, hint)

    def slice(self, x: Entry, starts: list[int], ends: list[int], steps: list[int] | None = None) -> Entry:
        """x[starts:ends:steps] on every axis (x of the StableHLO value's own shape)."""
        steps = steps or [1] * len(starts)
        if isinstance(x.v, np.ndarray):
            return self.const(
                x.v[tuple(slice(a, e, k) for a, e, k in zip(starts, ends, steps, strict=True))].copy(), "slice"
            )
        axes = list(range(len(starts)))
        return Entry(
            onnx_datamove.slice_values(self.b, x.v, list(starts), list(ends), axes, list(steps), "slice"), "slice"
        )

    def cast(self, x: Entry, dt: type) -> Entry:
        dt = _device_dtype(dt)
        if isinstance(x.v, np.ndarray):
            return self.const(x.v.astype(dt), "cast", x.bcast)
        return Entry(cast_value(self.b, x.v, dt, "cast"), "cast", x.bcast)

    # --- entries -------------------------------------------------------------------------

    def mat(self, v: SSAValue, e: Entry) -> Entry:
        """The value of exactly v's shape."""
        s = _shape(v)
        if e.shape == s:
            return e
        # a folded constant of broadcast operands keeps their NumPy-broadcast shape (fewer
        # elements than v's): expanded, not reshaped
        folded = isinstance(e.v, np.ndarray) and e.v.size != math.prod(s)
        if not e.bcast and not folded:
            return self.reshape(e, s)
        return self.expand(e, s)

    def operands(self, vs, env: dict[SSAValue, Entry], like: tuple[int, ...]) -> list[Entry]:
        """The entries of an elementwise op's operands, computed in the shape of operands held
        with unit dimensions (a `keepdims` reduction) when every other operand is a broadcast
        scalar, so a norm's statistics stay in their reduced shape; else in `like`."""
        es = [env[v] for v in vs]
        rest = {e.shape for e in es if not (e.bcast and math.prod(e.shape) == 1)}
        if len(rest) == 1 and all(not e.bcast for e in es if e.shape in rest) and rest.pop() != like:
            return es
        return [self.operand(v, env, like) for v in vs]

    def operand(self, v: SSAValue, env: dict[SSAValue, Entry], like: tuple[int, ...]) -> Entry:
        """v's entry for an elementwise op of result shape `like` (NumPy broadcasting applies)."""
        e = env[v]
        return e if e.bcast or e.shape == like else self.mat(v, e)


_RULES: dict[type, Callable[[_Translator, Operation, dict[SSAValue, Entry]], Entry | list[Entry]]] = {}
_why: dict[type, str] = {}


def rule(*kinds: type):
    def reg(fn):
        for k in kinds:
            _RULES[k] = fn
        return fn

    return reg


def _bcast_of(es: list[Entry]) -> bool:
    """Whether an elementwise result of `es` is itself only a broadcast (every operand is)."""
    return all(e.bcast for e in es)


_BINARY = {
    sh.AddOp: "add",
    sh.SubtractOp: "sub",
    sh.MultiplyOp: "mul",
    sh.DivideOp: "div",
    sh.MaximumOp: "max",
    sh.MinimumOp: "min",
    sh.PowerOp: "pow",
    sh.AndOp: "and",
    sh.OrOp: "or",
}
_UNARY: dict[type, type[g.ElementwiseUnaryOp]] = {
    sh.ExponentialOp: g.ExpOp,
    sh.TanhOp: g.TanhOp,
    sh.NegateOp: g.NegOp,
    sh.SqrtOp: g.SqrtOp,
    sh.LogisticOp: g.SigmoidOp,
    sh.LogOp: g.LogOp,
    sh.AbsOp: g.AbsOp,
    sh.SineOp: g.SinOp,
    sh.CosineOp: g.CosOp,
    sh.FloorOp: g.FloorOp,
    sh.SignOp: g.SignOp,
    sh.NotOp: g.NotOp,
    chlo.ErfOp: g.ErfOp,
}


@rule(*_BINARY)
def _binary(t: _Translator, op: Operation, env) -> Entry:
    s = _shape(op.results[0])
    if isinstance(op, sh.DivideOp):
        fused = _mean(t, op, env) or _softmax(t, op, env)
        if fused is not None:
            return fused
    if isinstance(op, sh.AndOp | sh.OrOp) and _dtype(op.results[0]) is not np.bool_:
        raise StablehloImportError(f"stablehlo import: {op.name} of integers (bitwise) is not supported")
    if isinstance(op, sh.MultiplyOp) and op.lhs is op.rhs and np.dtype(_dtype(op.lhs)).kind == "f":
        users = [u.operation for u in op.result.uses]
        if len(users) == 1 and isinstance(users[0], sh.ReduceOp):  # a variance: see `_square`
            return _square(t, op, env)
    if isinstance(op, sh.MaximumOp):
        fused = _fast_variance(t, op, env)
        if fused is not None:
            return fused
    if isinstance(op, sh.MultiplyOp):
        fused = _scaled_rsqrt(t, op, env)
        if fused is not None:
            return fused
    if isinstance(op, sh.DivideOp) and np.dtype(_dtype(op.results[0])).kind in "iu":
        raise StablehloImportError(f"stablehlo import: {op.name} of integers (truncating) is not supported")
    a, c = t.operands(op.operands, env, s)
    return t.binary(_BINARY[type(op)], a, c)


@rule(*_UNARY)
def _unary(t: _Translator, op: Operation, env) -> Entry:
    e = env[op.operands[0]]
    return Entry(t.unary(_UNARY[type(op)], e).v, "", e.bcast)


@rule(chlo.SquareOp)
def _square(t: _Translator, op: Operation, env) -> Entry:
    """x * x: the norm patterns see x read once by the square."""
    e = env[op.operands[0]]
    return Entry(t.square(e).v, "", e.bcast)


@rule(chlo.ErfcOp)
def _erfc(t: _Translator, op: Operation, env) -> Entry:
    """erfc(u) = 1 + erf(-u); JAX's exact GeLU writes erfc(-x / sqrt 2), which becomes the
    `1 + erf(x / sqrt 2)` the GeLU pattern knows."""
    u = op.operands[0]
    e = env[u]
    one = t.const(np.asarray(1, _dtype(op.results[0])))
    m = u.owner
    if isinstance(m, sh.MultiplyOp):
        for p, q in ((m.lhs, m.rhs), (m.rhs, m.lhs)):
            if isinstance(env[q].v, np.ndarray) and isinstance(p.owner, sh.NegateOp):
                inner = t.binary("mul", env[p.owner.operand], env[q])
                return Entry(t.binary("add", one, t.unary(g.ErfOp, inner)).v, "", e.bcast)
    if isinstance(m, sh.NegateOp):
        return Entry(t.binary("add", one, t.unary(g.ErfOp, env[m.operand])).v, "", e.bcast)
    return Entry(t.binary("sub", one, t.unary(g.ErfOp, e)).v, "", e.bcast)


@rule(sh.IsFiniteOp)
def _is_finite(t: _Translator, op: Operation, env) -> Entry:
    """x - x == 0: true for every finite x, false for infinities and NaN (IEEE arithmetic)."""
    e = env[op.operands[0]]
    zero = t.const(np.asarray(0, _dtype(op.operands[0])))
    return Entry(t.binary("equal", t.binary("sub", e, e), zero).v, "", e.bcast)


@rule(sh.RsqrtOp)
def _rsqrt(t: _Translator, op: Operation, env) -> Entry:
    e = env[op.operands[0]]  # 1 / sqrt(x): raised to graph.rsqrt
    return Entry(t.unary(g.ReciprocalOp, t.unary(g.SqrtOp, e)).v, "", e.bcast)


@rule(sh.Expm1Op, sh.Log1pOp)
def _plus_minus_one(t: _Translator, op: Operation, env) -> Entry:
    e = env[op.operands[0]]
    one = t.const(np.asarray(1, _dtype(op.results[0])))
    if isinstance(op, sh.Expm1Op):
        return Entry(t.binary("sub", t.unary(g.ExpOp, e), one).v, "", e.bcast)
    return Entry(t.unary(g.LogOp, t.binary("add", e, one)).v, "", e.bcast)


@rule(sh.RemainderOp)
def _remainder(t: _Translator, op: Operation, env) -> Entry:
    s = _shape(op.results[0])
    a, c = (t.operand(v, env, s) for v in op.operands)
    return t.binary("fmod" if np.dtype(_dtype(op.results[0])).kind == "f" else "mod", a, c)


@rule(sh.ConvertOp)
def _convert(t: _Translator, op: sh.ConvertOp, env) -> Entry:
    e = env[op.operand]
    if _dtype(op.operand) == _dtype(op.result):
        return e
    return t.cast(e, _dtype(op.result))


@rule(sh.ClampOp)
def _clamp(t: _Translator, op: sh.ClampOp, env) -> Entry:
    s = _shape(op.result)
    x = t.operand(op.operand, env, s)
    lo, hi = (t.operand(v, env, s) for v in (op.min, op.max))
    return t.binary("max", t.binary("min", x, hi), lo)


_COMPARE = {"EQ": "equal", "GT": "greater", "LT": "less", "GE": "greater_equal", "LE": "less_equal"}


@rule(sh.CompareOp)
def _compare(t: _Translator, op: sh.CompareOp, env) -> Entry:
    a, c = t.operands((op.lhs, op.rhs), env, _shape(op.result))
    d = op.comparison_direction.data.value
    if op.compare_type is not None and op.compare_type.data.value == "UNSIGNED" and _dtype(op.lhs) is not np.bool_:
        if np.dtype(_dtype(op.lhs)).kind != "u":
            raise StablehloImportError(
                "stablehlo import: stablehlo.compare UNSIGNED of signed integers is not supported"
            )
    if d == "NE":
        return t.unary(g.NotOp, t.binary("equal", a, c))
    return t.binary(_COMPARE[d], a, c)


MAX_UNROLLED_OPS = 100_000  # a while loop unrolls to at most this many StableHLO ops


def _scalar_const(v: SSAValue, env: dict[SSAValue, Entry]) -> int | None:
    """The integer a rank-0 value holds when it is a constant (an op of its region, or outside)."""
    if isinstance(v.owner, sh.ConstantOp):
        a = dense_value(v.owner.value)
    elif v in env and isinstance(env[v].v, np.ndarray):
        a = env[v].v
    else:
        return None
    return int(a.reshape(-1)[0]) if a.size == 1 and np.dtype(a.dtype).kind in "iu" else None


def _trip_count(op: sh.WhileOp, env: dict[SSAValue, Entry]) -> int | None:
    """A `fori_loop`'s trips: a carried counter that starts at a constant, is compared LT (or
    NE) against a constant by the condition and stepped by 1 in the body; else None."""
    ret = op.cond.block.last_op
    if not isinstance(ret, sh.ReturnOp) or len(ret.operands) != 1:
        return None
    cmp = ret.operands[0].owner
    if not isinstance(cmp, sh.CompareOp) or cmp.comparison_direction.data.value not in ("LT", "NE"):
        return None
    args = list(op.cond.block.args)
    if cmp.lhs not in args:
        return None
    k, end = args.index(cmp.lhs), _scalar_const(cmp.rhs, env)
    start = _scalar_const(op.operand[k], env)
    body_ret = op.body.block.last_op
    if end is None or start is None or not isinstance(body_ret, sh.ReturnOp):
        return None
    step = body_ret.operands[k].owner
    if not isinstance(step, sh.AddOp):
        return None
    counter = op.body.block.args[k]
    one = step.rhs if step.lhs is counter else step.lhs if step.rhs is counter else None
    if one is None or _scalar_const(one, env) != 1:
        return None
    return max(0, end - start)


@dataclass(frozen=True)
class _Counter:
    """The trip counter of a `while` being translated as a `graph.repeat`: it may only index the
    loop's slices (`dynamic_slice` -> `graph.iteration_slice`) and stores (`dynamic_update_slice`
    -> `graph.iteration_store`) along their leading axis; any other use abandons the loop form."""

    trips: int


class _NotALoop(Exception):
    """A `while` body the loop form cannot express: it is unrolled instead."""


MIN_LOOP_TRIPS = 2  # a while of fewer trips is unrolled


@rule(sh.WhileOp)
def _while(t: _Translator, op: sh.WhileOp, env) -> list[Entry]:
    """A loop of a static trip count (`jax.lax.fori_loop`, `scan` over a fixed length). As one
    `graph.repeat` when its counter starts at 0 and only indexes the leading axis of slices and
    stores (`_while_as_repeat`: a scan's xs row and ys row); else unrolled: the body translated
    once per trip, its counter a constant in each (so a slice at the counter is a static slice),
    bounded in size (`MAX_UNROLLED_OPS`)."""
    trips = _trip_count(op, env)
    if trips is None:
        raise StablehloImportError(
            "stablehlo import: stablehlo.while: only a loop with a static trip count imports (a counter from a "
            "constant, compared LT with a constant and stepped by 1: jax.lax.fori_loop, scan); it is unrolled"
        )
    if trips >= MIN_LOOP_TRIPS:
        looped = _while_as_repeat(t, op, env, trips)
        if looped is not None:
            return looped
    body = op.body.block
    size = trips * sum(1 for _ in body.walk())
    if size > MAX_UNROLLED_OPS:
        raise StablehloImportError(
            f"stablehlo import: stablehlo.while: {trips} trips of its body would unroll to {size} ops "
            f"(at most {MAX_UNROLLED_OPS})"
        )
    carried = [env[v] for v in op.operand]
    for _ in range(trips):  # each trip rebinds the body's arguments and values in env itself
        env.update(zip(body.args, carried, strict=True))
        carried = [e for _, e in t.block(body, env)]
    return carried


_LOOP_STATE = ("memo", "made", "bcast_src", "repeats", "transposes", "softmaxes")
_BUILDER_STATE = ("param_of", "param_cache", "views", "channels_last")


def _while_as_repeat(t: _Translator, op: sh.WhileOp, env, trips: int) -> list[Entry] | None:
    """The loop as one `graph.repeat` of `trips`, or None (nothing emitted) when its body needs
    the counter's value elsewhere, carries integers, or has an op the loop form cannot take.
    Carried values the body returns unchanged (a scan's xs and its closed-over weights) stay
    outside the loop; a carried float whose leading axis is the trip count is typed [T, rows,
    cols], so a store into it is an in-place `graph.iteration_store`."""
    body = op.body.block
    ret = body.last_op
    k = next(
        (j for j, (a, r) in enumerate(zip(body.args, ret.operands, strict=True)) if _is_step(r, a, env)),
        None,
    )
    if k is None or _scalar_const(op.operand[k], env) != 0:
        return None
    carried: list[int] = []  # indices the repeat carries
    inner: dict[SSAValue, Entry] = dict(env)
    for j, (a, r) in enumerate(zip(body.args, ret.operands, strict=True)):
        if j == k:
            inner[a] = Entry(_Counter(trips), "trip")  # type: ignore[arg-type]
        elif r is a:
            inner[a] = env[op.operand[j]]  # loop-invariant: the value from outside
        elif np.dtype(_dtype(a)).kind != "f":
            return None
        else:
            carried.append(j)
    if not carried:
        return None
    types = [_tt(_loop_shape(_shape(body.args[j]), trips), _device_dtype(_dtype(body.args[j]))) for j in carried]
    loop = Block(arg_types=types)
    for j, arg in zip(carried, loop.args, strict=True):
        inner[body.args[j]] = Entry(Val(arg, _shape(body.args[j]), _device_dtype(_dtype(body.args[j]))), "carried")
    saved = {n: getattr(t, n) for n in _LOOP_STATE}, {n: getattr(t.b, n) for n in _BUILDER_STATE}
    outer_block, outer_loop, outer_around, outer_skip = t.b.block, t.loop, t.around, t.skip
    label = t.b.current, t.b.node_label  # the while's: names the repeat
    for n, v in saved[0].items():
        setattr(t, n, type(v)(v))  # copies: what the body adds is not seen after it
    for n in _BUILDER_STATE:
        setattr(t.b, n, {})
    t.b.block, t.loop, t.around, t.skip = loop, loop, outer_block, t.skip | {ret.operands[k].owner}
    inner[ret.operands[k]] = inner[body.args[k]]
    try:
        results = t.block(body, inner)
        ys = []
        for j, arg in zip(carried, loop.args, strict=True):
            v, e = results[j]
            m = t.mat(v, e).v
            ys.append(_as_type(t, m, arg.type, "carried"))
        loop.add_op(g.YieldOp.create(operands=ys))
    except Exception:  # noqa: BLE001 - whatever the loop form cannot take is unrolled instead
        return None
    finally:
        for n, v in saved[0].items():
            setattr(t, n, v)
        for n, v in saved[1].items():
            setattr(t.b, n, v)
        t.b.block, t.loop, t.around, t.skip = outer_block, outer_loop, outer_around, outer_skip
    t.b.current, t.b.node_label = label
    inits = [_loop_init(t, op.operand[j], env[op.operand[j]], a.type) for j, a in zip(carried, loop.args, strict=True)]
    rep = g.RepeatOp(trips, inits, Region(loop))
    t.b.emit(rep, t.fresh("loop"))
    out: list[Entry] = []
    for j, a in enumerate(body.args):
        if j == k:
            out.append(t.const(np.array(trips, _dtype(a)), "trips"))
        elif j in carried:
            r = rep.results[carried.index(j)]
            out.append(Entry(Val(r, _shape(a), _device_dtype(_dtype(a))), "loop"))
        else:
            out.append(env[op.operand[j]])
    return out


def _is_step(r: SSAValue, a: SSAValue, env) -> bool:
    """`r` is `a + 1` (a loop counter's step)."""
    add = r.owner
    if not isinstance(add, sh.AddOp):
        return False
    one = add.rhs if add.lhs is a else add.lhs if add.rhs is a else None
    return one is not None and _scalar_const(one, env) == 1


def _loop_shape(shape: tuple[int, ...], trips: int) -> tuple[int, ...]:
    """The graph shape of a value a loop carries: a stack of one row per trip keeps its leading
    axis ([T, rows, cols], what `graph.iteration_store` writes into); others their collapse."""
    if len(shape) >= 2 and shape[0] == trips:
        return (trips, *collapsed(shape[1:]))
    return collapsed(shape)


def _as_type(t: _Translator, m: Val | np.ndarray, ty: TensorType, hint: str) -> SSAValue:
    """`m` (a value or a constant of the same elements) as a graph value of type `ty`."""
    shape, dt = tuple(ty.get_shape()), ty.element_type
    if isinstance(m, np.ndarray):
        return t.b.param(np.asarray(m).astype(g.numpy_dtype(dt)), g.numpy_dtype(dt), shape, t.fresh(hint))
    return t.b.raw_reshape(m.ssa, shape, m.dtype)


def _loop_init(t: _Translator, v: SSAValue, e: Entry, ty: TensorType) -> SSAValue:
    """The initial value of a carried value, outside the loop, in the type the loop carries it."""
    return _as_type(t, t.mat(v, e).v, ty, "init")


def _comparator_order(t: _Translator, op: sh.SortOp) -> bool | None:
    """Whether the comparator sorts ascending (True) or descending (False) by the first operand
    alone, found by running it on constant pairs (its NaN and signed-zero canonicalization folds
    away); None when it is anything else (a second key, a custom order)."""
    block = op.comparator.block
    dt = np.dtype(_dtype(op.operand[0]))

    def less(a: float, b: float, rest: tuple[int, int]) -> bool | None:
        env: dict[SSAValue, Entry] = {}
        for k, arg in enumerate(block.args):
            if k < 2:
                env[arg] = t.const(np.array((a, b)[k], dt), "cmp")
            else:
                env[arg] = t.const(np.array(rest[k % 2], _dtype(arg)), "cmp")
        try:
            [(_, e)] = t.block(block, env)
        except StablehloImportError:
            return None
        return bool(e.v) if isinstance(e.v, np.ndarray) else None

    outcomes = {(less(1, 2, r), less(2, 1, r), less(1, 1, r)) for r in ((0, 0), (0, 1), (1, 0))}
    if outcomes == {(True, False, False)}:
        return True
    if outcomes == {(False, True, False)}:
        return False
    return None


@rule(sh.SortOp)
def _sort(t: _Translator, op: sh.SortOp, env) -> list[Entry]:
    """`jnp.sort`, `jnp.argsort` (descending too): the first operand sorted along `dimension` as
    top-k of all of it (stable: among equal values the first comes first); every further operand
    a constant table of positions along that dimension (an iota, or a reversed one as a
    descending argsort makes), affine in the position: it takes the sorting's indices through
    that affine map."""
    dim = op.dimension.value.data
    x = env[op.operand[0]]
    ascending = _comparator_order(t, op)
    if ascending is None:
        raise StablehloImportError(
            "stablehlo import: stablehlo.sort: only a comparator ordering by the first operand (ascending or "
            "descending, as jnp.sort and argsort emit) is supported"
        )
    n = _shape(op.operand[0])[dim]
    maps = [_position_map(env[v], dim, n) for v in op.operand[1:]]
    if any(m is None for m in maps):
        raise StablehloImportError(
            "stablehlo import: stablehlo.sort: a further operand must be a constant affine in the position along "
            "the sorted dimension (argsort's iota); sorting by several keys is not supported"
        )
    if isinstance(x.v, np.ndarray):  # a constant sorts with NumPy (stable)
        order = np.argsort(x.v if ascending else -x.v, axis=dim, kind="stable")
        out = [t.const(np.take_along_axis(x.v, order, axis=dim), "sort")]
        idx: Entry = t.const(order, "argsort")
    else:
        values, indices = onnx_routing.top_k_values(t.b, t.mat(op.operand[0], x).v, n, dim, not ascending, "sort")
        out, idx = [Entry(values, "sort")], Entry(indices, "argsort")
    for v, (a, b) in zip(op.operand[1:], maps, strict=True):  # type: ignore[misc]
        dt = _dtype(v)
        e = t.cast(idx, dt)
        if b != 1:
            e = t.binary("mul", e, t.const(np.array(b, dt), "c", True))
        if a != 0:
            e = t.binary("add", e, t.const(np.array(a, dt), "c", True))
        out.append(e)
    return out


def _position_map(e: Entry, dim: int, n: int) -> tuple[int, int] | None:
    """(a, b) when the constant `e` holds a + b * j at every position j along `dim` (the same
    across the other dimensions); None otherwise."""
    if not isinstance(e.v, np.ndarray) or e.v.ndim <= dim or e.v.shape[dim] != n:
        return None
    first = np.take(e.v, [0], axis=dim).astype(np.int64)
    step = np.take(e.v, [1], axis=dim).astype(np.int64) - first if n > 1 else np.zeros_like(first)
    if first.min() != first.max() or step.min() != step.max():
        return None
    a, b = int(first.reshape(-1)[0]), int(step.reshape(-1)[0])
    j = np.arange(n).reshape([n if k == dim else 1 for k in range(e.v.ndim)])
    return (a, b) if np.array_equal(e.v.astype(np.int64), np.broadcast_to(a + b * j, e.v.shape)) else None


@rule(sh.ReverseOp)
def _reverse(t: _Translator, op: sh.ReverseOp, env) -> Entry:
    """The listed dimensions in reverse order: each a pick of its rows in reverse (an exact
    one-hot product, `pick_rows`; integers through float32, exact below 2^24, as argsort's
    positions are); a constant with NumPy."""
    x = t.mat(op.operand, env[op.operand])
    dims = [int(d) for d in op.dimensions.get_values()]
    if isinstance(x.v, np.ndarray):
        return t.const(np.flip(x.v, axis=tuple(dims)), "reverse")
    dt = _dtype(op.operand)
    e = x if np.dtype(dt).kind == "f" else t.cast(x, np.float32)  # positions < 2^24: exact in f32
    v = e.v
    for d in dims:
        n = _shape(op.operand)[d]
        v = onnx_import.pick_rows(t.b, v, np.arange(n)[::-1].copy(), d, t.fresh("reverse_rows"), "reverse")
    out = Entry(v, "reverse")
    return out if np.dtype(dt).kind == "f" else t.cast(out, dt)


@rule(sh.SelectOp)
def _select(t: _Translator, op: sh.SelectOp, env) -> Entry:
    c, a, e = t.operands(op.operands, env, _shape(op.result))
    if all(isinstance(x.v, np.ndarray) for x in (c, a, e)):
        return t.const(np.where(c.v, a.v, e.v), "where")
    return Entry(onnx_import.where_values(t.b, c.v, a.v, e.v, [c.name, a.name, e.name], "where"), "where")


@rule(sh.ConstantOp)
def _constant(t: _Translator, op: sh.ConstantOp, env) -> Entry:
    a = dense_value(op.value)
    if a.size > 1 and (a == a.reshape(-1)[0]).all():  # a splat: one scalar, broadcast on use
        return t.const(a.reshape(-1)[:1].reshape(()), "c", True)
    return t.const(a)


@rule(sh.IotaOp)
def _iota(t: _Translator, op: sh.IotaOp, env) -> Entry:
    s, d = _shape(op.output), op.iota_dimension.value.data
    idx = np.arange(s[d]).reshape([s[d] if i == d else 1 for i in range(len(s))])
    return t.const(np.broadcast_to(idx, s).astype(_dtype(op.output)), "iota")


@rule(sh.BroadcastInDimOp)
def _broadcast(t: _Translator, op: sh.BroadcastInDimOp, env) -> Entry:
    x, s = op.operand, _shape(op.result)
    dims, e = list(sh._arr(op.broadcast_dimensions)), env[op.operand]
    src = tuple([1] * (len(_shape(x)) - len(e.shape)) + list(e.shape)) if e.bcast else _shape(x)
    if dims != sorted(dims):  # move the operand's dimensions into result order first
        perm = sorted(range(len(dims)), key=lambda i: dims[i])
        e = t.transpose(t.mat(x, e), perm)
        src, dims = tuple(_shape(x)[i] for i in perm), sorted(dims)
    aligned = [1] * len(s)
    for i, d in enumerate(dims):
        aligned[d] = src[i]
    aligned = tuple(aligned)
    if _strip1(aligned) != _strip1(e.shape):
        r = t.reshape(e, aligned)
        if isinstance(r.v, Val) and isinstance(e.v, Val):
            t.bcast_src[r.v.ssa] = e.v
    else:
        r, aligned = e, e.shape
    return Entry(r.v, r.name, aligned != s)


@rule(sh.ReshapeOp)
def _reshape(t: _Translator, op: sh.ReshapeOp, env) -> Entry:
    e, s = env[op.operand], _shape(op.result)
    src = t.mat(op.operand, e) if e.bcast else e
    out = src if src.shape == s else t.reshape(src, s)
    x = _shape(op.operand)
    if e.bcast and len(x) == 5 and e.shape == (*x[:3], 1, x[4]) and s == (x[0], x[1], x[2] * x[3], x[4]):
        if isinstance(e.v, Val) and e.v.ssa in t.bcast_src and isinstance(out.v, Val):
            t.repeats[out.v.ssa] = (t.bcast_src[e.v.ssa], x[3])  # jnp.repeat(k, r, axis=2): grouped KV heads
    return Entry(out.v, out.name)


@rule(sh.TransposeOp)
def _transpose(t: _Translator, op: sh.TransposeOp, env) -> Entry:
    return t.transpose(t.mat(op.operand, env[op.operand]), list(sh._arr(op.permutation)))


@rule(sh.ConvolutionOp)
def _convolution(t: _Translator, op: sh.ConvolutionOp, env) -> Entry:
    """An N-D convolution in any layout: the input transposed channels last ([batch, spatial…,
    features]: no transpose for Flax's NHWC), the kernel to [out, in, spatial…] (a constant's
    transpose folds), one `graph.conv` (`conv_channels_last`: strides, explicit pads, kernel
    dilation, feature groups), transposed to the result's layout."""
    what = None
    if op.batch_group_count.value.data != 1:
        what = f"batch_group_count {op.batch_group_count.value.data} (a kernel gradient)"
    elif any(d != 1 for d in op.lhs_dilations()):
        what = f"input dilation {list(op.lhs_dilations())} (a transposed convolution)"
    elif any(sh._arr(op.window_reversal)):
        what = "window reversal"
    elif any(lo < 0 or hi < 0 for lo, hi in op.pads()):
        what = f"negative padding {op.pads()}"
    elif op.rank() not in (1, 2):
        what = f"{op.rank()} spatial dimensions (1-D and 2-D convolutions are supported)"
    if what is not None:
        raise StablehloImportError(f"stablehlo import: stablehlo.convolution with {what} is not supported")
    dn, n = op.dimension_numbers, op.rank()
    lhs = t.mat(op.lhs, env[op.lhs])
    if not isinstance(lhs.v, Val):
        raise StablehloImportError("stablehlo import: stablehlo.convolution of a constant input is not supported")
    w = t.transpose(t.mat(op.rhs, env[op.rhs]), [dn.dims("rhs", "o"), dn.dims("rhs", "i"), *dn.spatial("rhs")]).v
    strides, dil = list(op.strides()), list(op.rhs_dilations())
    pads = [lo for lo, _ in op.pads()] + [hi for _, hi in op.pads()]
    groups, name = op.feature_group_count.value.data, t.b.node_label
    kernel = list(w.shape[2:])
    xs = _shape(op.lhs)
    patches = (
        isinstance(w, np.ndarray)
        and n == 2
        and xs[dn.dims("lhs", "b")] == 1
        and groups == 1
        and strides == kernel
        and not any(pads)
        and dil == [1, 1]
        and all(xs[d] % k == 0 for d, k in zip(dn.spatial("lhs"), kernel, strict=True))
    )
    if patches:  # a patch embedding (ViT's first layer): one permutation and one matmul
        x = t.transpose(lhs, [dn.dims("lhs", "b"), dn.dims("lhs", "f"), *dn.spatial("lhs")]).v
        y = onnx_cnn.patch_embedding(t.b, x, w.astype(np.float32), None, name)
        lands = [dn.dims("out", "b"), dn.dims("out", "f"), *dn.spatial("out")]  # where y's axis j goes
    else:
        x = t.transpose(lhs, [dn.dims("lhs", "b"), *dn.spatial("lhs"), dn.dims("lhs", "f")]).v
        if n == 1:  # [N, L, C] as [N, 1, L, C]
            x = t.b.reshape(x, (x.shape[0], 1, *x.shape[1:]))
        filters = w.astype(np.float32) if isinstance(w, np.ndarray) else w
        y = onnx_cnn.conv_channels_last(t.b, x, filters, None, strides, dil, pads, groups, name)
        if n == 1:
            y = t.b.reshape(y, (y.shape[0], *y.shape[2:]))
        lands = [dn.dims("out", "b"), *dn.spatial("out"), dn.dims("out", "f")]
    return t.transpose(Entry(y, name), [lands.index(d) for d in range(n + 2)])


@rule(sh.ReduceWindowOp)
def _reduce_window(t: _Translator, op: sh.ReduceWindowOp, env) -> Entry:
    """A pooling window (max, or a sum: an average pool counting the padding, times the
    window's size): the axes the window moves over (one or two) brought between the others,
    channels last ([rest…, moving…, last kept axis]), one `graph.pool`, then back."""
    kind = op.simple_reducer()
    x = op.inputs[0]
    xs, n = _shape(x), len(_shape(x))
    win = sh._arr(op.window_dimensions)
    strides = sh._arr(op.window_strides) or (1,) * n
    wdil = sh._arr(op.window_dilations) or (1,) * n
    pads = op.pads()
    init = t.scalar(op.init_values[0], env)
    dt = np.dtype(_dtype(x))
    lowest = -math.inf if dt.kind != "f" else float(np.finfo(dt).min)
    ok = (kind == "stablehlo.maximum" and init in (-math.inf, lowest)) or (
        kind == "stablehlo.add" and init == 0.0 and all(d == 1 for d in wdil)
    )
    if not ok or any(b != 1 for b in sh._arr(op.base_dilations)) or any(lo < 0 or hi < 0 for lo, hi in pads):
        raise StablehloImportError(
            f"stablehlo import: stablehlo.reduce_window over {kind or 'a multi-op body'} with init {init} is not "
            "supported (a max pool from the lowest value or a sum pool from 0, no base dilation or negative pads)"
        )
    src = t.mat(x, env[x])
    moving = [d for d in range(n) if win[d] != 1 or strides[d] != 1 or pads[d] != (0, 0) or wdil[d] != 1]
    if not moving:
        return src
    if len(moving) > 2 or not isinstance(src.v, Val) or dt.kind != "f":
        raise StablehloImportError(
            f"stablehlo import: stablehlo.reduce_window over {len(moving)} axes of a {dt} "
            f"{'constant' if not isinstance(src.v, Val) else 'tensor'} is not supported (1-D and 2-D float pools)"
        )
    lead = [d for d in range(n) if d not in moving]
    perm = [*lead[:-1], *moving, *lead[-1:]]
    moved = t.transpose(src, perm).v
    lead_sizes = [xs[d] for d in lead]
    nb, c = (math.prod(lead_sizes[:-1]), lead_sizes[-1]) if lead else (1, 1)
    out = _shape(op.res[0])
    sizes = [xs[d] for d in moving]
    if len(moving) == 1:
        sizes = [1, *sizes]
    xn = t.b.reshape(moved, (nb, *sizes, c))
    pool = "max" if kind == "stablehlo.maximum" else "avg"
    y = onnx_cnn.pool_channels_last(
        t.b,
        xn,
        pool,
        [win[d] for d in moving],
        [strides[d] for d in moving],
        [wdil[d] for d in moving],
        [pads[d][0] for d in moving] + [pads[d][1] for d in moving],
        [out[d] for d in moving],
        pool == "avg",  # a sum counts the padding's zeros
    )
    if kind == "stablehlo.add":  # a sum: the average (padding counted) times the window's size
        y = t.b.binary_values("mul", y, np.asarray(math.prod(win), dt), "", f"{t.b.node_label}.size", None)
    back = t.b.reshape(y, tuple([*lead_sizes[:-1], *(out[d] for d in moving), *lead_sizes[-1:]]))
    return t.transpose(Entry(back, "pool"), [perm.index(d) for d in range(n)])


_REDUCE_NODE = {"stablehlo.add": "ReduceSum", "stablehlo.maximum": "ReduceMax", "stablehlo.minimum": "ReduceMin"}
_REDUCE_FOLD = {"stablehlo.add": np.sum, "stablehlo.maximum": np.max, "stablehlo.minimum": np.min}
_IDENTITY = {"stablehlo.add": (0.0,), "stablehlo.maximum": (-math.inf,), "stablehlo.minimum": (math.inf,)}


_BOOL_REDUCE = {"stablehlo.and": "stablehlo.minimum", "stablehlo.or": "stablehlo.maximum"}
"""`and` / `or` over bools (jnp.all / jnp.any; JAX's bounds check of a gather's indices) are the
minimum / maximum of the bools as 0.0 / 1.0 (the row reductions take numbers), from true / false."""


@rule(sh.ReduceOp)
def _reduce(t: _Translator, op: sh.ReduceOp, env) -> Entry:
    if len(op.inputs) == 2:
        arg = _arg_reduce(t, op, env)
        if arg is not None:
            return arg
    rk = _reduce_kind(op)
    x = op.inputs[0]
    dt = np.dtype(_dtype(x))
    boolean = rk is not None and dt.kind == "b" and rk[0] in _BOOL_REDUCE
    if rk is None or (rk[0] not in _REDUCE_NODE and not boolean):
        raise StablehloImportError(
            f"stablehlo import: stablehlo.reduce over {rk[0] if rk else 'a multi-op or multi-operand body'} "
            "is not supported (only sums, maxima and minima of one operand)"
        )
    name, dims = rk
    kind = _BOOL_REDUCE[name] if boolean else name
    init = t.scalar(op.init_values[0], env)
    ok = init is not None and (
        (boolean and bool(init) == (kind == "stablehlo.minimum"))
        or (not boolean and init in _IDENTITY[kind])
        or (kind == "stablehlo.maximum" and dt.kind in "iu" and init == np.iinfo(dt).min)
        or (kind == "stablehlo.maximum" and dt.kind == "f" and init == float(np.finfo(dt).min))
        or (kind == "stablehlo.minimum" and dt.kind in "iu" and init == np.iinfo(dt).max)
        or (kind == "stablehlo.minimum" and dt.kind == "f" and init == float(np.finfo(dt).max))
    )
    if not ok:
        raise StablehloImportError(
            f"stablehlo import: stablehlo.reduce ({name}) with init value {init} is not supported "
            "(only the reduction's identity)"
        )
    src = t.mat(x, env[x])
    if isinstance(src.v, np.ndarray):
        return t.const(_REDUCE_FOLD[kind](src.v, axis=tuple(dims), keepdims=True).astype(src.v.dtype), "reduce")
    if boolean:
        src = t.cast(src, np.float32)
    red = onnx_import.reduce_value(t.b, _REDUCE_NODE[kind], src.v, sorted(dims), True, "reduce")
    return t.cast(Entry(red, "reduce"), np.bool_) if boolean else Entry(red, "reduce")


def _arg_reduce(t: _Translator, op: sh.ReduceOp, env) -> list[Entry] | None:
    """jnp.argmax / argmin: a reduction of (x, iota) pairs along one axis keeping the first
    index of the maximum (minimum): a row maximum (minimum) and a `graph.arg_reduce`."""
    dims = sh._arr(op.dimensions)
    x, idx = op.inputs
    body = list(op.body.block.ops)
    if len(dims) != 1 or not body or not isinstance(body[0], sh.CompareOp):
        return None
    d = dims[0]
    direction = body[0].comparison_direction.data.value
    a = op.body.block.args
    if direction not in ("GT", "LT") or tuple(body[0].operands) != (a[0], a[2]):
        return None
    want = np.broadcast_to(
        np.arange(_shape(x)[d]).reshape([-1 if i == d else 1 for i in range(len(_shape(x)))]), _shape(x)
    )
    c = env[idx].v
    if (
        not isinstance(c, np.ndarray)
        or np.broadcast_to(c, _shape(x)).shape != _shape(x)
        or not (np.broadcast_to(c, _shape(x)) == want).all()
    ):
        return None
    first = -math.inf if direction == "GT" else math.inf
    if t.scalar(op.init_values[0], env) != first or t.scalar(op.init_values[1], env) != 0.0:
        return None
    src = t.mat(x, env[x])
    if not isinstance(src.v, Val):
        return None
    kind = "max" if direction == "GT" else "min"
    value = onnx_import.reduce_value(t.b, "ReduceMax" if kind == "max" else "ReduceMin", src.v, [d], True, "reduce")
    index = onnx_import.arg_reduce_value(t.b, src.v, d, True, kind, False, "arg")
    return [Entry(value, "reduce"), t.cast(Entry(index, "arg"), _dtype(op.res[1]))]


def _mean(t: _Translator, op: sh.DivideOp, env) -> Entry | None:
    """`reduce(add)(x) / n` with n the reduced element count: a mean (what the norm patterns match)."""
    r = op.lhs  # through jnp's keepdims reshape (same elements, unit dimensions added)
    while isinstance(r.owner, sh.ReshapeOp | sh.BroadcastInDimOp) and _uses(r) == 1:
        if math.prod(_shape(r.owner.operands[0])) != math.prod(_shape(r)):
            return None
        r = r.owner.operands[0]
    rk = _reduce_kind(r.owner) if isinstance(r.owner, sh.ReduceOp) else None
    if rk is None or rk[0] != "stablehlo.add" or _uses(r) != 1 or t.scalar(r.owner.init_values[0], env) != 0.0:
        return None
    x = r.owner.inputs[0]
    n = math.prod(_shape(x)[d] for d in rk[1])
    if t.scalar(op.rhs, env) != float(n) or np.dtype(_dtype(x)).kind != "f":
        return None
    src = t.mat(x, env[x])
    if not isinstance(src.v, Val):
        return None
    axes = sorted(rk[1])
    key = ("mean", _key(src.v), tuple(axes))
    out = t.once(key, lambda: onnx_import.reduce_value(t.b, "ReduceMean", src.v, axes, True, "mean"), "mean")
    t.made[out.v.ssa] = ("mean", src.v, tuple(axes))
    return out


def _fast_variance(t: _Translator, op: sh.MaximumOp, env) -> Entry | None:
    """Flax's `max(0, mean(x^2) - mean(x)^2)`: the two-pass `mean((x - mean(x))^2)` (equal up to
    rounding, never negative), the variance the LayerNorm pattern matches."""
    zero, other = (op.lhs, op.rhs) if t.scalar(op.lhs, env) == 0.0 else (op.rhs, op.lhs)
    if t.scalar(zero, env) != 0.0 or not isinstance(other.owner, sh.SubtractOp):
        return None
    a, c = env[other.owner.lhs].v, env[other.owner.rhs].v
    if not isinstance(a, Val) or not isinstance(c, Val):
        return None
    ma, sb = t.made.get(a.ssa), t.made.get(c.ssa)
    if ma is None or sb is None or ma[0] != "mean" or sb[0] != "square":
        return None
    sq, mean = t.made.get(ma[1].ssa), t.made.get(sb[1].ssa)
    if sq is None or mean is None or sq[0] != "square" or mean[0] != "mean":
        return None
    if sq[1] is not mean[1] or ma[2] != mean[2]:
        return None
    x, axes = mean[1], list(mean[2])
    d = t.binary("sub", Entry(x, "x"), Entry(sb[1], "mean"))
    var = onnx_import.reduce_value(t.b, "ReduceMean", t.square(d).v, axes, True, "variance")
    return Entry(var, "variance")


def _scaled_rsqrt(t: _Translator, op: sh.MultiplyOp, env) -> Entry | None:
    """`d * (rsqrt(v) * g)` (Flax folds the scale into the rsqrt): `(d * rsqrt(v)) * g`, the
    order the norm patterns match (one rounding apart)."""
    bcast = (sh.BroadcastInDimOp, sh.ReshapeOp)
    for d, m in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if not isinstance(d.owner, sh.SubtractOp) or not isinstance(m.owner, sh.MultiplyOp) or _uses(m) != 1:
            continue  # d must be the centred x - mean
        for r, gv in ((m.owner.lhs, m.owner.rhs), (m.owner.rhs, m.owner.lhs)):
            if isinstance(_through(r, *bcast).owner, sh.RsqrtOp) and not isinstance(
                _through(gv, *bcast).owner, sh.RsqrtOp
            ):
                s = _shape(op.result)
                if _shape(d) != s:
                    return None
                inner = t.binary("mul", t.operand(d, env, s), t.operand(r, env, s))
                return t.binary("mul", inner, t.operand(gv, env, s))
    return None


def _softmax(t: _Translator, op: sh.DivideOp, env) -> Entry | None:
    """`e / sum(e)` with `e = exp(x - max(x))` over the last axis (jax.nn.softmax): `graph.softmax`."""
    bcast = (sh.BroadcastInDimOp, sh.ReshapeOp)
    e = op.lhs
    if not isinstance(e.owner, sh.ExponentialOp) or _uses(e) != 2:
        return None
    total = _through(op.rhs, *bcast)
    rk = _reduce_kind(total.owner) if isinstance(total.owner, sh.ReduceOp) else None
    last = (len(_shape(e)) - 1,)
    if rk != ("stablehlo.add", last) or total.owner.inputs[0] is not e:
        return None
    sub = e.owner.operand.owner
    if not isinstance(sub, sh.SubtractOp):
        return None
    x, m = sub.lhs, _through(sub.rhs, *bcast)
    if isinstance(m.owner, sh.MaximumOp):  # jax's max(-inf, max(x)) guard
        a, b = m.owner.lhs, m.owner.rhs
        if t.scalar(a, env) == -math.inf:
            m = _through(b, *bcast)
        elif t.scalar(b, env) == -math.inf:
            m = _through(a, *bcast)
    mk = _reduce_kind(m.owner) if isinstance(m.owner, sh.ReduceOp) else None
    if mk != ("stablehlo.maximum", last) or m.owner.inputs[0] is not x:
        return None
    src = t.mat(x, env[x])
    if not isinstance(src.v, Val):
        return None
    out = t.once(("softmax", _key(src.v)), lambda: onnx_import.softmax_value(t.b, src.v, last[0], "softmax"))
    t.softmaxes.add(out.v.ssa)
    return out


@rule(sh.DotGeneralOp)
def _dot(t: _Translator, op: sh.DotGeneralOp, env) -> Entry:
    dn = op.dot_dimension_numbers
    lb, lc = list(dn.get("lhs_batching_dimensions")), list(dn.get("lhs_contracting_dimensions"))
    rb, rc = list(dn.get("rhs_batching_dimensions")), list(dn.get("rhs_contracting_dimensions"))
    a, b = _shape(op.lhs), _shape(op.rhs)
    lf = [d for d in range(len(a)) if d not in lb and d not in lc]
    rf = [d for d in range(len(b)) if d not in rb and d not in rc]
    lhs, rhs = t.mat(op.lhs, env[op.lhs]), t.mat(op.rhs, env[op.rhs])

    def matmul(x: Entry, y: Entry) -> Entry:
        if isinstance(x.v, np.ndarray) and isinstance(y.v, np.ndarray):
            return t.const(np.matmul(x.v, y.v), "matmul")
        return Entry(onnx_datamove.matmul_values(t.b, x.v, y.v, x.name, y.name, "matmul"), "matmul")

    if not lb and lc == [len(a) - 1] and rc == [0] and len(b) == 2:  # x @ W as it is
        return matmul(lhs, rhs)
    bs = [a[d] for d in lb]
    m, k, n = math.prod(a[d] for d in lf), math.prod(a[d] for d in lc), math.prod(b[d] for d in rf)

    def arrange(x: Entry, shp, perm, want) -> Entry:
        if isinstance(x.v, Val) and x.v.ssa in t.repeats and perm in ([0, 2, 3, 1], [0, 2, 1, 3]):
            return repeat_heads(x, shp, perm)
        x = t.transpose(x, perm)
        if tuple(shp[p] for p in perm) != tuple(want):
            x = t.reshape(x, tuple(want))
        return x

    def repeat_heads(x: Entry, shp, perm) -> Entry:
        """Repeated KV heads, heads-major: x [b, s, hkv, d] transposed, a unit axis added, broadcast
        to [b, hkv, r, s, d] and merged: the spelling `graph.attention` takes as grouped-query
        heads (no copies)."""
        src, r = t.repeats[x.v.ssa]
        b0, s0, h, d0 = shp
        hm = t.transpose(Entry(src, "heads"), [0, 2, 1, 3])
        u = t.reshape(hm, (b0, h // r, 1, s0, d0))
        ex = t.expand(u, (b0, h // r, r, s0, d0))
        out = t.reshape(ex, (b0, h, s0, d0))
        return t.transpose(out, [0, 1, 3, 2]) if perm == [0, 2, 3, 1] else out

    swap = isinstance(rhs.v, Val) and rhs.v.ssa in t.softmaxes  # P @ V with P the rhs: P @ V (the attention pattern)
    if not swap:
        out = matmul(arrange(lhs, a, lb + lf + lc, [*bs, m, k]), arrange(rhs, b, rb + rc + rf, [*bs, k, n]))
    else:
        nb = len(bs)
        out = matmul(arrange(rhs, b, rb + rf + rc, [*bs, n, k]), arrange(lhs, a, lb + lc + lf, [*bs, k, m]))
        out = t.transpose(out, [*range(nb), nb + 1, nb])
    return out


@rule(sh.SliceOp)
def _slice(t: _Translator, op: sh.SliceOp, env) -> Entry:
    x = t.mat(op.operand, env[op.operand])
    st, lim, step = (list(sh._arr(p)) for p in (op.start_indices, op.limit_indices, op.strides))
    return t.slice(x, st, lim, step)


def _counter_start(t: _Translator, starts, env) -> _Counter | None:
    """The loop counter when it is the first start index and the others are 0 (a row of the
    leading axis at the trip); `_NotALoop` when the counter stands anywhere else."""
    es = [env[v].v for v in starts]
    if not any(isinstance(e, _Counter) for e in es):
        return None
    if not isinstance(es[0], _Counter) or t.loop is None or any(t.scalar(v, env) != 0 for v in starts[1:]):
        raise _NotALoop("the counter indexes more than the leading axis")
    return es[0]


def _row_of_trip(x: tuple[int, ...], rows: tuple[int, ...], c: _Counter) -> None:
    """`rows` is one row of `x`'s leading axis and that axis has one row per trip."""
    if not x or x[0] != c.trips or tuple(rows) != (1, *x[1:]):
        raise _NotALoop(f"a slice {list(rows)} of {list(x)} is not one row per trip")


def _iteration_slice(t: _Translator, op: sh.DynamicSliceOp, env, c: _Counter) -> Entry:
    """xs[trip] of a value from outside the loop: `graph.iteration_slice` of it as [T, rows, cols]
    (any reshape to that made before the loop)."""
    x, sizes = _shape(op.operand), tuple(sh._arr(op.slice_sizes))
    _row_of_trip(x, sizes, c)
    e = t.mat(op.operand, env[op.operand]).v
    if isinstance(e, Val) and t.loop.is_ancestor(e.ssa.owner):
        raise _NotALoop("a slice of a value the loop computes")
    dt = _device_dtype(_dtype(op.operand))
    body, t.b.block = t.b.block, t.around
    try:
        stacked = _as_type(t, e, _tt(_loop_shape(x, c.trips), dt), "xs")
    finally:
        t.b.block = body
    sl = g.IterationSliceOp(stacked, _tt(collapsed(x[1:]), dt))
    t.b.block.add_op(sl)  # added, not emitted: it verifies against its repeat, made after the body
    return Entry(Val(sl.result, sizes, dt), "xs_row")


def _iteration_store(t: _Translator, op: sh.DynamicUpdateSliceOp, env, c: _Counter) -> Entry:
    """ys with row trip written: `graph.iteration_store` into the loop's carried [T, rows, cols]."""
    x, u = _shape(op.operand), _shape(op.update)
    _row_of_trip(x, u, c)
    e = env[op.operand].v
    dt = _device_dtype(_dtype(op.operand))
    stack_t = _tt(_loop_shape(x, c.trips), dt)
    if not isinstance(e, Val) or e.ssa.owner is not t.loop or e.ssa.type != stack_t:
        raise _NotALoop("a store into a value the loop does not carry")
    row = _as_type(t, t.mat(op.update, env[op.update]).v, _tt(collapsed(x[1:]), dt), "ys_row")
    st = g.IterationStoreOp(e.ssa, row)
    t.b.block.add_op(st)  # added, not emitted, as the slice
    return Entry(Val(st.result, x, dt), "ys")


@rule(sh.DynamicSliceOp)
def _dynamic_slice(t: _Translator, op: sh.DynamicSliceOp, env) -> Entry:
    if (c := _counter_start(t, op.start_indices, env)) is not None:
        return _iteration_slice(t, op, env, c)
    starts = [t.scalar(v, env) for v in op.start_indices]
    if any(s is None for s in starts):
        raise StablehloImportError(
            "stablehlo import: stablehlo.dynamic_slice with start indices computed at run time is not supported"
        )
    x, sizes = _shape(op.operand), sh._arr(op.slice_sizes)
    st = [min(max(int(s), 0), n - z) for s, n, z in zip(starts, x, sizes, strict=True)]  # StableHLO clamps
    return t.slice(t.mat(op.operand, env[op.operand]), st, [a + z for a, z in zip(st, sizes, strict=True)])


@rule(sh.DynamicUpdateSliceOp)
def _dynamic_update_slice(t: _Translator, op: sh.DynamicUpdateSliceOp, env) -> Entry:
    """x with u written at constant start indices (clamped, as StableHLO does): u itself when it
    covers x, else x's parts before and after it along the one axis u does not cover, concatenated
    around it (a `scan`'s output row written at its trip's index); at a loop's counter, a store."""
    if (c := _counter_start(t, op.start_indices, env)) is not None:
        return _iteration_store(t, op, env, c)
    starts = [t.scalar(v, env) for v in op.start_indices]
    if any(s is None for s in starts):
        raise StablehloImportError(
            "stablehlo import: stablehlo.dynamic_update_slice with start indices computed at run time is not supported"
        )
    x, u = _shape(op.operand), _shape(op.update)
    st = [min(max(int(s), 0), n - z) for s, n, z in zip(starts, x, u, strict=True)]
    partial = [d for d, (n, z) in enumerate(zip(x, u, strict=True)) if z != n]
    upd = t.mat(op.update, env[op.update])
    if not partial:
        return upd
    if len(partial) > 1:
        raise StablehloImportError(
            f"stablehlo import: stablehlo.dynamic_update_slice of {list(u)} into {list(x)} updates more than one "
            "axis partly (one is supported: the rest whole)"
        )
    d = partial[0]
    e = t.mat(op.operand, env[op.operand])
    pieces = []
    for lo, hi in ((0, st[d]), (st[d] + u[d], x[d])):
        if hi > lo:
            a, z = [0] * len(x), list(x)
            a[d], z[d] = lo, hi
            pieces.append(t.slice(e, a, z))
        if lo == 0:
            pieces.append(upd)
    if all(isinstance(p.v, np.ndarray) for p in pieces):
        return t.const(np.concatenate([p.v for p in pieces], d), "update")
    vals = [t.b.val(p.v, upd.v if isinstance(upd.v, Val) else e.v, p.name) for p in pieces]
    return Entry(onnx_datamove.concat_values(t.b, vals, [p.name for p in pieces], d, "update"), "update")


@rule(sh.ConcatenateOp)
def _concat(t: _Translator, op: sh.ConcatenateOp, env) -> Entry:
    ins = [t.mat(v, env[v]) for v in op.inputs]
    axis = op.dimension.value.data
    if all(isinstance(e.v, np.ndarray) for e in ins):
        return t.const(np.concatenate([e.v for e in ins], axis), "concat")
    return Entry(onnx_datamove.concat_values(t.b, [e.v for e in ins], [e.name for e in ins], axis, "concat"), "concat")


@rule(sh.PadOp)
def _pad(t: _Translator, op: sh.PadOp, env) -> Entry:
    lo, hi, inner = (sh._arr(p) for p in (op.edge_padding_low, op.edge_padding_high, op.interior_padding))
    if any(inner) or any(p < 0 for p in (*lo, *hi)):
        raise StablehloImportError("stablehlo import: stablehlo.pad with interior or negative padding is not supported")
    x = t.mat(op.operand, env[op.operand])
    v = t.scalar(op.padding_value, env)
    if v is None:
        raise StablehloImportError("stablehlo import: stablehlo.pad with a padding value computed at run time")
    if isinstance(x.v, np.ndarray):
        return t.const(np.pad(x.v, list(zip(lo, hi, strict=True)), constant_values=v), "pad")
    return Entry(onnx_datamove.pad_values(t.b, x.v, list(lo), list(hi), v, "pad"), "pad")


@rule(sh.GatherOp)
def _gather(t: _Translator, op: sh.GatherOp, env) -> Entry:
    """The embedding lookup `table[ids]`: whole rows of a 2-D table by an index vector, each
    index clamped into the table as StableHLO defines it (JAX's out-of-range ids read the last
    or first row)."""
    dn, x, idx = op.dimension_numbers, _shape(op.operand), _shape(op.start_indices)
    sizes = sh._arr(op.slice_sizes)
    ivd = dn.get("index_vector_dim")
    rows = (
        len(x) == 2
        and dn.get("collapsed_slice_dims") == (0,)
        and dn.get("start_index_map") == (0,)
        and dn.get("offset_dims") == (len(idx) - (1 if ivd < len(idx) else 0),)
        and tuple(sizes) == (1, x[1])
        and not dn.get("operand_batching_dims")
    )
    if not rows:
        raise StablehloImportError(
            "stablehlo import: stablehlo.gather other than an embedding lookup (whole rows of a 2-D table) "
            f"is not supported ({dn})"
        )
    ids = t.mat(op.start_indices, env[op.start_indices])
    ids_shape = tuple(n for i, n in enumerate(idx) if i != ivd)
    if ids_shape != idx:
        ids = t.reshape(ids, ids_shape or (1,))
    # StableHLO clamps each start index into the operand ([0, V - 1] for a row): so does the import
    dt = _dtype(op.start_indices)
    ids = t.binary("min", t.binary("max", ids, t.const(np.asarray(0, dt))), t.const(np.asarray(x[0] - 1, dt)))
    table = t.mat(op.operand, env[op.operand])
    if isinstance(ids.v, np.ndarray) and isinstance(table.v, np.ndarray):
        return t.const(np.take(table.v, ids.v, axis=0).reshape(_shape(op.result)), "gather")
    if not isinstance(ids.v, Val):  # constant rows of a computed tensor: a one-hot selection
        picked = onnx_import.pick_rows(t.b, table.v, ids.v.astype(np.int64), 0, ids.name, "gather")
        return t.reshape(Entry(picked, "gather"), _shape(op.result))
    r = onnx_import.embedding_lookup(t.b, table.v, ids.v, 0, table.name, ids.name, "gather")
    return Entry(r, "gather")


_IDENTITY_CALLS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement")


@rule(chlo.TopKOp)
def _top_k(t: _Translator, op: chlo.TopKOp, env) -> list[Entry]:
    """`jax.lax.top_k`: the k largest along the last axis, sorted (`top_k_values`), the int64
    indices as JAX's i32."""
    x = t.mat(op.operand, env[op.operand])
    if not isinstance(x.v, Val):
        raise StablehloImportError("stablehlo import: chlo.top_k of a constant is not supported")
    k, rank = op.k.value.data, len(x.shape)
    values, indices = onnx_routing.top_k_values(t.b, x.v, k, rank - 1, True, "top_k", "top_k_indices")
    return [Entry(values, "top_k"), t.cast(Entry(indices, "top_k_indices"), _dtype(op.indices))]


@rule(sh.CustomCallOp)
def _custom_call(t: _Translator, op: sh.CustomCallOp, env) -> Entry:
    target = op.call_target_name.data
    if target in _IDENTITY_CALLS and len(op.inputs) == 1 and len(op.res) == 1 and op.inputs[0].type == op.res[0].type:
        return env[op.inputs[0]]
    raise StablehloImportError(f"stablehlo import: stablehlo.custom_call @{target} is not supported")


_why[sh.ReturnOp] = "stablehlo.return outside a reduction body"


# ---------------------------------------------------------------------------------------------
# entry points


def import_stablehlo(source: str | ModuleOp, name: str = "<stablehlo>") -> ModuleOp:
    """The graph-level module of a StableHLO program (JAX's text, either form, or a parsed module):
    each op lowered to `graph` ops, then the fused ops raised (`raise-graph-ops`)."""
    module = parse_stablehlo(source, name) if isinstance(source, str) else source
    for op in module.walk():
        if op.dialect_name() not in ("builtin", "func", "stablehlo", "chlo"):
            raise StablehloImportError(f"stablehlo import: {op.name} is not a StableHLO op")
    graph = _Translator(module).run()
    try:
        graph.verify()
    except DiagnosticException as e:
        raise StablehloImportError(f"{name}: stablehlo import: the imported module does not verify:\n{e}") from None
    RaiseGraphOpsPass().apply(Context(), graph)  # GeLU, norms, SiLU, rsqrt, attention: raised on graph IR
    return graph


__all__ = [
    "StablehloImportError",
    "clean_text",
    "import_stablehlo",
    "looks_like_stablehlo",
    "parse_stablehlo",
]
