"""StableHLO (JAX) -> `graph`: JAX's text is read into the `stablehlo` dialect, then translated op
by op into an in-memory ONNX graph which the ONNX importer (`onnx_import.import_model`) takes
to the `graph` level.

Why through ONNX: the ONNX importer's lowerings (head reshapes into split/merge heads, constant
folding, the rank >= 3 row collapse, broadcasting, integer handling) are reused instead of a
second copy; the fusions (GeLU, norms, SiLU, rsqrt, attention, grouped KV heads) are raised
afterwards on graph IR by `raise-graph-ops`, the same for both frontends. Each StableHLO op has one translation here
(`_RULES`), keyed by op class. Two peepholes restore what JAX decomposes: `reduce(add) / n` is
a `ReduceMean`, and the max-subtract-exp-sum-divide chain of `jax.nn.softmax` is a `Softmax`.
`broadcast_in_dim` feeding elementwise ops becomes ONNX broadcasting (no copy), so the fused
patterns see the operands they expect. Private functions are inlined at every `func.call`.

Function arguments are the inputs `arg0, arg1, …`, results the outputs `out0, out1, …`.
Anything without a translation raises `StablehloImportError` naming the StableHLO op.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import chlo
from ipu.dialects import stablehlo as sh

OPSET = 18


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


def looks_like_stablehlo(text: str) -> bool:
    """Whether IR text is a StableHLO program (any `stablehlo.` or `chlo.` op)."""
    pretty = r"(^|=)[ \t]*(stablehlo|chlo)\.[a-z_]+[ \t(]"  # `%0 = stablehlo.add %a, …`, `stablehlo.return %x`
    generic = r'"(stablehlo|chlo)\.[a-z_]+"\('  # `"stablehlo.add"(%a, %b)`
    return re.search(f"{pretty}|{generic}", text, re.MULTILINE) is not None


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


def _onnx_type(dt: type) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dt))


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


# ---------------------------------------------------------------------------------------------
# the translation


@dataclass
class Entry:
    """The ONNX value standing for a StableHLO value: `name` of ONNX shape `shape`. Without
    `bcast` it holds the same elements in the same order (its shape may differ by unit
    dimensions, e.g. a `keepdims` reduction); with `bcast` it broadcasts, NumPy-style, to the
    StableHLO value (an unmaterialized `broadcast_in_dim`)."""

    name: str
    shape: tuple[int, ...]
    bcast: bool = False


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


class _Translator:
    def __init__(self, module: ModuleOp):
        self.module = module
        self.funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0
        self.softmaxes: set[str] = set()
        self.consts: dict[str, np.ndarray] = {}  # initializer values by name
        self.transposes: dict[str, tuple[str, list[int]]] = {}  # Transpose outputs: (input, perm)
        self.memo: dict[tuple, str] = {}  # (op type, inputs, attributes) -> output
        self.made: dict[str, tuple[str, list[str]]] = {}  # output -> (op type, inputs)
        self.int_consts: dict[tuple[int, ...], str] = {}
        self.bcast_src: dict[str, str] = {}  # broadcast_in_dim's unit-dimension Reshapes: their input
        self.repeats: dict[str, tuple[str, int]] = {}  # jnp.repeat of [b, s, hkv, d] heads: (x, r)
        self.depth = 0
        self.current = ""  # the StableHLO op being translated

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def node(self, op_type: str, inputs: list[str], hint: str | None = None, **attrs) -> str:
        if op_type == "Transpose" and inputs[0] in self.transposes:  # compose with the one it reads
            src, first = self.transposes[inputs[0]]
            inputs, attrs["perm"] = [src], [first[i] for i in attrs["perm"]]
        if op_type == "Transpose" and attrs["perm"] == sorted(attrs["perm"]):
            return inputs[0]
        key = (op_type, tuple(inputs), tuple(sorted((k, repr(v)) for k, v in attrs.items())))
        if key in self.memo:  # one node per computation (a peephole may rebuild one JAX also has)
            return self.memo[key]
        out = self.fresh(hint or op_type.lower())
        if op_type == "Transpose":
            self.transposes[out] = (inputs[0], list(attrs["perm"]))
        # the node is named after the StableHLO op it comes from: the importer's diagnostics and
        # every graph op's `onnx.node` then name that op
        name = f"{self.current}_{self.count}" if self.current else out
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        self.memo[key] = out
        self.made[out] = (op_type, list(inputs))
        return out

    def const(self, value: np.ndarray, hint: str = "c") -> str:
        name = self.fresh(hint)
        self.consts[name] = np.asarray(value)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def scalar(self, v: SSAValue, env: dict[SSAValue, Entry]) -> float | None:
        """The value of `v` when it is a known constant with all elements equal."""
        c = self.consts.get(env[v].name) if v in env else None
        if c is None or not c.size or not (c == c.reshape(-1)[0]).all():
            return None
        return float(c.reshape(-1)[0])

    def prune(self) -> None:
        """Drop nodes nothing reads (the interiors of fused peepholes): the importer's matchers
        count every reader of a value."""
        while True:
            used = {i for n in self.nodes for i in n.input} | {
                n.output[0] for n in self.nodes if n.output[0].startswith("out")
            }
            keep = [n for n in self.nodes if n.output[0] in used]
            if len(keep) == len(self.nodes):
                return
            self.nodes = keep

    def ints(self, xs) -> str:
        key = tuple(int(x) for x in xs)
        if key not in self.int_consts:
            self.int_consts[key] = self.const(np.asarray(key, np.int64), "i")
        return self.int_consts[key]

    # --- the main function ---------------------------------------------------------------

    def main(self) -> func.FuncOp:
        pub = [f for f in self.funcs.values() if f.sym_visibility is None or f.sym_visibility.data == "public"]
        main = self.funcs.get("main") or (pub[0] if len(pub) == 1 else None)
        if main is None:
            raise StablehloImportError("stablehlo import: no @main function (and not exactly one public function)")
        return main

    def run(self) -> onnx.ModelProto:
        main = self.main()
        inputs, env = [], {}
        for i, a in enumerate(main.body.block.args):
            if not isinstance(a.type, TensorType):
                raise StablehloImportError(f"stablehlo import: argument {i} of @main has type {a.type}, not a tensor")
            name = f"arg{i}"
            inputs.append(helper.make_tensor_value_info(name, _onnx_type(_dtype(a)), list(_shape(a))))
            env[a] = Entry(name, _shape(a))
        results = self.block(main.body.block, env)
        outputs = []
        for i, (v, e) in enumerate(results):
            name = f"out{i}"
            self.nodes.append(helper.make_node("Identity", [self.mat(v, e)], [name], name=name))
            outputs.append(helper.make_tensor_value_info(name, _onnx_type(_dtype(v)), list(_shape(v))))
        self.prune()
        used = {i for n in self.nodes for i in n.input}
        self.inits = [i for i in self.inits if i.name in used]
        graph = helper.make_graph(self.nodes, main.sym_name.data, inputs, outputs, self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ipu.stablehlo")

    def block(self, block, env: dict[SSAValue, Entry]) -> list[tuple[SSAValue, Entry]]:
        """Translate a function body; its returned values and their entries."""
        for op in block.ops:
            if isinstance(op, func.ReturnOp | sh.ReturnOp):
                return [(v, env[v]) for v in op.operands]
            if isinstance(op, func.CallOp):
                self.call(op, env)
                continue
            rule = _RULES.get(type(op))
            if rule is None:
                raise StablehloImportError(
                    f"stablehlo import: {op.name} is not supported (no graph-level equivalent)"
                    + (f": {_why[type(op)]}" if type(op) in _why else "")
                )
            self.current = op.name
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

    # --- entries -------------------------------------------------------------------------

    def mat(self, v: SSAValue, e: Entry) -> str:
        """An ONNX value of exactly v's shape."""
        s = _shape(v)
        if e.shape == s:
            return e.name
        if not e.bcast:
            return self.node("Reshape", [e.name, self.ints(s)])
        return self.node("Expand", [e.name, self.ints(s)])

    def operands(self, vs, env: dict[SSAValue, Entry], like: tuple[int, ...]) -> tuple[list[str], tuple[int, ...]]:
        """The ONNX values of an elementwise op's operands and the shape it computes in: that of
        operands held with unit dimensions (a `keepdims` reduction) when every other operand is
        a broadcast scalar, so a norm's statistics stay in their reduced shape; else `like`."""
        es = [env[v] for v in vs]
        rest = {e.shape for e in es if not (e.bcast and math.prod(e.shape) == 1)}
        if len(rest) == 1 and all(not e.bcast for e in es if e.shape in rest) and (k := rest.pop()) != like:
            return [e.name for e in es], k
        return [self.operand(v, env, like) for v in vs], like

    def operand(self, v: SSAValue, env: dict[SSAValue, Entry], like: tuple[int, ...]) -> str:
        """v's value for an elementwise op of result shape `like` (ONNX broadcasting applies)."""
        e = env[v]
        return e.name if e.bcast or e.shape == like else self.mat(v, e)


_RULES: dict[type, Callable[[_Translator, Operation, dict[SSAValue, Entry]], Entry | list[Entry]]] = {}
_why: dict[type, str] = {}


def rule(*kinds: type):
    def reg(fn):
        for k in kinds:
            _RULES[k] = fn
        return fn

    return reg


_BINARY = {
    sh.AddOp: "Add",
    sh.SubtractOp: "Sub",
    sh.MultiplyOp: "Mul",
    sh.DivideOp: "Div",
    sh.MaximumOp: "Max",
    sh.MinimumOp: "Min",
    sh.PowerOp: "Pow",
    sh.AndOp: "And",
    sh.OrOp: "Or",
}
_UNARY = {
    sh.ExponentialOp: "Exp",
    sh.TanhOp: "Tanh",
    sh.NegateOp: "Neg",
    sh.SqrtOp: "Sqrt",
    sh.LogisticOp: "Sigmoid",
    sh.LogOp: "Log",
    sh.AbsOp: "Abs",
    sh.SineOp: "Sin",
    sh.CosineOp: "Cos",
    sh.FloorOp: "Floor",
    sh.SignOp: "Sign",
    sh.NotOp: "Not",
    chlo.ErfOp: "Erf",
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
    names, k = t.operands(op.operands, env, s)
    return Entry(t.node(_BINARY[type(op)], names), k)


@rule(*_UNARY)
def _unary(t: _Translator, op: Operation, env) -> Entry:
    e = env[op.operands[0]]
    return Entry(t.node(_UNARY[type(op)], [e.name]), e.shape, e.bcast)


@rule(chlo.SquareOp)
def _square(t: _Translator, op: Operation, env) -> Entry:
    """x * x as `Pow(x, 2)`: the importer computes it as the same product, and the norm patterns
    then see x read once by the square (a `Mul(x, x)` counts as two readers)."""
    e = env[op.operands[0]]
    two = t.const(np.asarray(2, _dtype(op.results[0])))
    return Entry(t.node("Pow", [e.name, two]), e.shape, e.bcast)


@rule(chlo.ErfcOp)
def _erfc(t: _Translator, op: Operation, env) -> Entry:
    """erfc(u) = 1 + erf(-u); JAX's exact GeLU writes erfc(-x / sqrt 2), which becomes the
    `1 + erf(x / sqrt 2)` the GeLU pattern knows."""
    e = env[op.operands[0]]
    one = t.const(np.asarray(1, _dtype(op.results[0])))
    m = t.made.get(e.name)
    if m is not None and m[0] == "Mul":
        for p, q in (m[1], m[1][::-1]):
            n = t.made.get(p)
            if q in t.consts and n is not None and n[0] == "Neg":
                return Entry(t.node("Add", [one, t.node("Erf", [t.node("Mul", [n[1][0], q])])]), e.shape, e.bcast)
    if m is not None and m[0] == "Neg":
        return Entry(t.node("Add", [one, t.node("Erf", [m[1][0]])]), e.shape, e.bcast)
    return Entry(t.node("Sub", [one, t.node("Erf", [e.name])]), e.shape, e.bcast)


@rule(sh.IsFiniteOp)
def _is_finite(t: _Translator, op: Operation, env) -> Entry:
    """x - x == 0: true for every finite x, false for infinities and NaN (IEEE arithmetic)."""
    e = env[op.operands[0]]
    zero = t.const(np.asarray(0, _dtype(op.operands[0])))
    return Entry(t.node("Equal", [t.node("Sub", [e.name, e.name]), zero]), e.shape, e.bcast)


@rule(sh.RsqrtOp)
def _rsqrt(t: _Translator, op: Operation, env) -> Entry:
    e = env[op.operands[0]]  # Reciprocal(Sqrt(x)): the importer fuses it into graph.rsqrt
    return Entry(t.node("Reciprocal", [t.node("Sqrt", [e.name])]), e.shape, e.bcast)


@rule(sh.Expm1Op, sh.Log1pOp)
def _plus_minus_one(t: _Translator, op: Operation, env) -> Entry:
    e = env[op.operands[0]]
    one = t.const(np.asarray(1, _dtype(op.results[0])))
    if isinstance(op, sh.Expm1Op):
        return Entry(t.node("Sub", [t.node("Exp", [e.name]), one]), e.shape, e.bcast)
    return Entry(t.node("Log", [t.node("Add", [e.name, one])]), e.shape, e.bcast)


@rule(sh.RemainderOp)
def _remainder(t: _Translator, op: Operation, env) -> Entry:
    s = _shape(op.results[0])
    a, b = (t.operand(v, env, s) for v in op.operands)
    fmod = int(np.dtype(_dtype(op.results[0])).kind == "f")
    return Entry(t.node("Mod", [a, b], fmod=fmod), s)


@rule(sh.ConvertOp)
def _convert(t: _Translator, op: sh.ConvertOp, env) -> Entry:
    e = env[op.operand]
    src, dst = _dtype(op.operand), _dtype(op.result)
    if src == dst:
        return e
    if e.name in t.consts:
        return Entry(t.const(t.consts[e.name].astype(dst)), e.shape, e.bcast)
    return Entry(t.node("Cast", [e.name], to=_onnx_type(dst)), e.shape, e.bcast)


@rule(sh.ClampOp)
def _clamp(t: _Translator, op: sh.ClampOp, env) -> Entry:
    s = _shape(op.result)
    x = t.operand(op.operand, env, s)
    lo, hi = (t.operand(v, env, s) for v in (op.min, op.max))
    return Entry(t.node("Max", [t.node("Min", [x, hi]), lo]), s)


_COMPARE = {"EQ": "Equal", "GT": "Greater", "LT": "Less", "GE": "GreaterOrEqual", "LE": "LessOrEqual"}


@rule(sh.CompareOp)
def _compare(t: _Translator, op: sh.CompareOp, env) -> Entry:
    (a, b), s = t.operands((op.lhs, op.rhs), env, _shape(op.result))
    d = op.comparison_direction.data.value
    if op.compare_type is not None and op.compare_type.data.value == "UNSIGNED" and _dtype(op.lhs) is not np.bool_:
        if np.dtype(_dtype(op.lhs)).kind != "u":
            raise StablehloImportError(
                "stablehlo import: stablehlo.compare UNSIGNED of signed integers is not supported"
            )
    if d == "NE":
        return Entry(t.node("Not", [t.node("Equal", [a, b])]), s)
    return Entry(t.node(_COMPARE[d], [a, b]), s)


@rule(sh.SelectOp)
def _select(t: _Translator, op: sh.SelectOp, env) -> Entry:
    names, k = t.operands(op.operands, env, _shape(op.result))
    return Entry(t.node("Where", names), k)


@rule(sh.ConstantOp)
def _constant(t: _Translator, op: sh.ConstantOp, env) -> Entry:
    a = dense_value(op.value)
    if a.size > 1 and (a == a.reshape(-1)[0]).all():  # a splat: one scalar, broadcast on use
        return Entry(t.const(a.reshape(-1)[:1].reshape(())), (), True)
    return Entry(t.const(a), a.shape)


@rule(sh.IotaOp)
def _iota(t: _Translator, op: sh.IotaOp, env) -> Entry:
    s, d = _shape(op.output), op.iota_dimension.value.data
    idx = np.arange(s[d]).reshape([s[d] if i == d else 1 for i in range(len(s))])
    return Entry(t.const(np.broadcast_to(idx, s).astype(_dtype(op.output))), s)


@rule(sh.BroadcastInDimOp)
def _broadcast(t: _Translator, op: sh.BroadcastInDimOp, env) -> Entry:
    x, s = op.operand, _shape(op.result)
    dims, e = list(sh._arr(op.broadcast_dimensions)), env[op.operand]
    src = tuple([1] * (len(_shape(x)) - len(e.shape)) + list(e.shape)) if e.bcast else _shape(x)
    name = e.name
    if dims != sorted(dims):  # move the operand's dimensions into result order first
        perm = sorted(range(len(dims)), key=lambda i: dims[i])
        name = t.node("Transpose", [t.mat(x, e)], perm=perm)
        src, dims = tuple(_shape(x)[i] for i in perm), sorted(dims)
        e = Entry(name, src)
    aligned = [1] * len(s)
    for i, d in enumerate(dims):
        aligned[d] = src[i]
    aligned = tuple(aligned)
    if _strip1(aligned) != _strip1(e.shape):
        name = t.node("Reshape", [e.name, t.ints(aligned)])
        t.bcast_src[name] = e.name
    else:
        name, aligned = e.name, e.shape
    return Entry(name, aligned, aligned != s)


@rule(sh.ReshapeOp)
def _reshape(t: _Translator, op: sh.ReshapeOp, env) -> Entry:
    e, s = env[op.operand], _shape(op.result)
    name = t.mat(op.operand, e) if e.bcast else e.name
    shp = _shape(op.operand) if e.bcast else e.shape
    out = name if shp == s else t.node("Reshape", [name, t.ints(s)])
    x = _shape(op.operand)
    if e.bcast and len(x) == 5 and e.shape == (*x[:3], 1, x[4]) and s == (x[0], x[1], x[2] * x[3], x[4]):
        if e.name in t.bcast_src:  # jnp.repeat(k, r, axis=2): grouped KV heads (see `_dot`)
            t.repeats[out] = (t.bcast_src[e.name], x[3])
    return Entry(out, s)


@rule(sh.TransposeOp)
def _transpose(t: _Translator, op: sh.TransposeOp, env) -> Entry:
    perm = list(sh._arr(op.permutation))
    x = t.mat(op.operand, env[op.operand])
    if perm == sorted(perm):
        return Entry(x, _shape(op.result))
    return Entry(t.node("Transpose", [x], perm=perm), _shape(op.result))


@rule(sh.ConvolutionOp)
def _convolution(t: _Translator, op: sh.ConvolutionOp, env) -> Entry:
    """An N-D convolution in any layout: transposed to ONNX's [batch, features, spatial…] input
    and [out, in, spatial…] kernel (a constant kernel's transpose folds at import), one `Conv`
    (strides, explicit pads, kernel dilation, feature groups), transposed to the result's layout."""
    what = None
    if op.batch_group_count.value.data != 1:
        what = f"batch_group_count {op.batch_group_count.value.data} (a kernel gradient)"
    elif any(d != 1 for d in op.lhs_dilations()):
        what = f"input dilation {list(op.lhs_dilations())} (a transposed convolution)"
    elif any(sh._arr(op.window_reversal)):
        what = "window reversal"
    elif any(lo < 0 or hi < 0 for lo, hi in op.pads()):
        what = f"negative padding {op.pads()}"
    if what is not None:
        raise StablehloImportError(f"stablehlo import: stablehlo.convolution with {what} is not supported")
    dn, n = op.dimension_numbers, op.rank()
    x = t.node(
        "Transpose", [t.mat(op.lhs, env[op.lhs])], perm=[dn.dims("lhs", "b"), dn.dims("lhs", "f"), *dn.spatial("lhs")]
    )
    w = t.node(
        "Transpose", [t.mat(op.rhs, env[op.rhs])], perm=[dn.dims("rhs", "o"), dn.dims("rhs", "i"), *dn.spatial("rhs")]
    )
    pads = [lo for lo, _ in op.pads()] + [hi for _, hi in op.pads()]
    y = t.node(
        "Conv",
        [x, w],
        strides=list(op.strides()),
        pads=pads,
        dilations=list(op.rhs_dilations()),
        group=op.feature_group_count.value.data,
    )
    lands = [dn.dims("out", "b"), dn.dims("out", "f"), *dn.spatial("out")]  # where y's axis j goes
    return Entry(t.node("Transpose", [y], perm=[lands.index(d) for d in range(n + 2)]), _shape(op.result))


@rule(sh.ReduceWindowOp)
def _reduce_window(t: _Translator, op: sh.ReduceWindowOp, env) -> Entry:
    """A pooling window (max, or a sum: an average pool times the window's size, zeros padded):
    the axes the window moves over brought last behind two leading ones (batch and features,
    merged or padded with a unit axis), one `MaxPool` / `AveragePool`, then back."""
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
        return Entry(src, xs)
    lead = [d for d in range(n) if d not in moving]
    perm = [*lead, *moving]
    moved = t.node("Transpose", [src], perm=perm)
    lead_sizes = [xs[d] for d in lead]
    nc = (math.prod(lead_sizes[:-1]), lead_sizes[-1]) if lead else (1, 1)
    pooled_in = t.node("Reshape", [moved, t.ints([*nc, *(xs[d] for d in moving)])])
    attrs = {
        "kernel_shape": [win[d] for d in moving],
        "strides": [strides[d] for d in moving],
        "pads": [pads[d][0] for d in moving] + [pads[d][1] for d in moving],
    }
    if kind == "stablehlo.maximum":
        pooled = t.node("MaxPool", [pooled_in], dilations=[wdil[d] for d in moving], **attrs)
    else:
        avg = t.node("AveragePool", [pooled_in], count_include_pad=1, **attrs)
        size = t.const(np.asarray(math.prod(win), dt))
        pooled = t.node("Mul", [avg, size])
    out = _shape(op.res[0])
    back = t.node("Reshape", [pooled, t.ints([*lead_sizes, *(out[d] for d in moving)])])
    return Entry(t.node("Transpose", [back], perm=[perm.index(d) for d in range(n)]), out)


_REDUCE_NODE = {"stablehlo.add": "ReduceSum", "stablehlo.maximum": "ReduceMax", "stablehlo.minimum": "ReduceMin"}
_IDENTITY = {"stablehlo.add": (0.0,), "stablehlo.maximum": (-math.inf,), "stablehlo.minimum": (math.inf,)}


_BOOL_REDUCE = {"stablehlo.and": "stablehlo.minimum", "stablehlo.or": "stablehlo.maximum"}
"""`and` / `or` over bools (jnp.all / jnp.any; JAX's bounds check of a gather's indices) are the
minimum / maximum of the bools as 0.0 / 1.0 (ONNX reductions take numbers), from true / false."""


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
    if boolean:
        src = t.node("Cast", [src], to=onnx.TensorProto.FLOAT)
    keep = tuple(1 if d in dims else n for d, n in enumerate(_shape(x)))
    red = t.node(_REDUCE_NODE[kind], [src, t.ints(dims)], keepdims=1)
    return Entry(t.node("Cast", [red], to=onnx.TensorProto.BOOL) if boolean else red, keep)


def _arg_reduce(t: _Translator, op: sh.ReduceOp, env) -> list[Entry] | None:
    """jnp.argmax / argmin: a reduction of (x, iota) pairs along one axis keeping the first
    index of the maximum (minimum): `ReduceMax` and `ArgMax` (`ReduceMin`, `ArgMin`)."""
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
    c = t.consts.get(env[idx].name)
    if (
        c is None
        or np.broadcast_to(c, _shape(x)).shape != _shape(x)
        or not (np.broadcast_to(c, _shape(x)) == want).all()
    ):
        return None
    first = -math.inf if direction == "GT" else math.inf
    if t.scalar(op.init_values[0], env) != first or t.scalar(op.init_values[1], env) != 0.0:
        return None
    src = t.mat(x, env[x])
    keep = tuple(1 if i == d else n for i, n in enumerate(_shape(x)))
    kinds = ("ReduceMax", "ArgMax") if direction == "GT" else ("ReduceMin", "ArgMin")
    value = t.node(kinds[0], [src, t.ints([d])], keepdims=1)
    index = t.node(kinds[1], [src], axis=d, keepdims=1, select_last_index=0)
    index = t.node("Cast", [index], to=_onnx_type(_dtype(op.res[1])))
    return [Entry(value, keep), Entry(index, keep)]


def _mean(t: _Translator, op: sh.DivideOp, env) -> Entry | None:
    """`reduce(add)(x) / n` with n the reduced element count: `ReduceMean` (what the norm patterns match)."""
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
    keep = tuple(1 if d in rk[1] else s for d, s in enumerate(_shape(x)))
    return Entry(t.node("ReduceMean", [t.mat(x, env[x]), t.ints(rk[1])], keepdims=1), keep)


def _fast_variance(t: _Translator, op: sh.MaximumOp, env) -> Entry | None:
    """Flax's `max(0, mean(x^2) - mean(x)^2)`: the two-pass `mean((x - mean(x))^2)` (equal up to
    rounding, never negative), the variance the LayerNorm pattern matches."""
    zero, other = (op.lhs, op.rhs) if t.scalar(op.lhs, env) == 0.0 else (op.rhs, op.lhs)
    if t.scalar(zero, env) != 0.0 or not isinstance(other.owner, sh.SubtractOp):
        return None
    a, b = env[other.owner.lhs].name, env[other.owner.rhs].name

    def made(name: str, kind: str) -> list[str] | None:
        m = t.made.get(name)
        return m[1] if m is not None and m[0] == kind else None

    ma, sb = made(a, "ReduceMean"), made(b, "Pow")
    if ma is None or sb is None or t.consts.get(sb[1]) is None or float(t.consts[sb[1]]) != 2.0:
        return None
    sq, mean = made(ma[0], "Pow"), made(sb[0], "ReduceMean")
    if sq is None or mean is None or float(t.consts.get(sq[1], 0)) != 2.0 or sq[0] != mean[0] or ma[1] != mean[1]:
        return None
    x, axes = mean[0], mean[1]
    d = t.node("Sub", [x, sb[0]])
    two = t.const(np.asarray(2, _dtype(op.result)))
    return Entry(t.node("ReduceMean", [t.node("Pow", [d, two]), axes], keepdims=1), env[other.owner.lhs].shape)


def _scaled_rsqrt(t: _Translator, op: sh.MultiplyOp, env) -> Entry | None:
    """`d * (rsqrt(v) * g)` (Flax folds the scale into the rsqrt): `(d * rsqrt(v)) * g`, the
    order the norm patterns match (one rounding apart)."""
    bcast = (sh.BroadcastInDimOp, sh.ReshapeOp)
    for d, m in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if not isinstance(d.owner, sh.SubtractOp) or not isinstance(m.owner, sh.MultiplyOp) or _uses(m) != 1:
            continue  # d must be the centred x - mean
        for r, g in ((m.owner.lhs, m.owner.rhs), (m.owner.rhs, m.owner.lhs)):
            if isinstance(_through(r, *bcast).owner, sh.RsqrtOp) and not isinstance(
                _through(g, *bcast).owner, sh.RsqrtOp
            ):
                s = _shape(op.result)
                if _shape(d) != s:
                    return None
                inner = t.node("Mul", [t.operand(d, env, s), t.operand(r, env, s)])
                return Entry(t.node("Mul", [inner, t.operand(g, env, s)]), s)
    return None


def _softmax(t: _Translator, op: sh.DivideOp, env) -> Entry | None:
    """`e / sum(e)` with `e = exp(x - max(x))` over the last axis (jax.nn.softmax): `Softmax`."""
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
    out = t.node("Softmax", [t.mat(x, env[x])], axis=-1)
    t.softmaxes.add(out)
    return Entry(out, _shape(op.result))


@rule(sh.DotGeneralOp)
def _dot(t: _Translator, op: sh.DotGeneralOp, env) -> Entry:
    dn = op.dot_dimension_numbers
    lb, lc = list(dn.get("lhs_batching_dimensions")), list(dn.get("lhs_contracting_dimensions"))
    rb, rc = list(dn.get("rhs_batching_dimensions")), list(dn.get("rhs_contracting_dimensions"))
    a, b, s = _shape(op.lhs), _shape(op.rhs), _shape(op.result)
    lf = [d for d in range(len(a)) if d not in lb and d not in lc]
    rf = [d for d in range(len(b)) if d not in rb and d not in rc]
    lhs, rhs = t.mat(op.lhs, env[op.lhs]), t.mat(op.rhs, env[op.rhs])
    if not lb and lc == [len(a) - 1] and rc == [0] and len(b) == 2:  # x @ W: ONNX MatMul as it is
        return Entry(t.node("MatMul", [lhs, rhs]), s)
    bs = [a[d] for d in lb]
    m, k, n = math.prod(a[d] for d in lf), math.prod(a[d] for d in lc), math.prod(b[d] for d in rf)

    def arrange(name: str, shp, perm, want) -> str:
        if name in t.repeats and perm in ([0, 2, 3, 1], [0, 2, 1, 3]):
            return repeat_heads(name, shp, perm)
        if perm != sorted(perm):
            name = t.node("Transpose", [name], perm=perm)
        if tuple(shp[p] for p in perm) != tuple(want):
            name = t.node("Reshape", [name, t.ints(want)])
        return name

    def repeat_heads(name: str, shp, perm) -> str:
        """Repeated KV heads, heads-major: `Reshape(Expand(Unsqueeze(x, 2)))` of x [b, hkv, s, d],
        the spelling `graph.attention` takes as grouped-query heads (no copies)."""
        x, r = t.repeats[name]
        b0, s0, h, d0 = shp
        hm = t.node("Transpose", [x], perm=[0, 2, 1, 3])
        u = t.node("Unsqueeze", [hm, t.ints([2])])
        ex = t.node("Expand", [u, t.ints([b0, h // r, r, s0, d0])])
        out = t.node("Reshape", [ex, t.ints([b0, h, s0, d0])])
        return t.node("Transpose", [out], perm=[0, 1, 3, 2]) if perm == [0, 2, 3, 1] else out

    swap = rhs in t.softmaxes  # P @ V with P the rhs: emit MatMul(P, V) (the attention pattern)
    if not swap:
        left = arrange(lhs, a, lb + lf + lc, [*bs, m, k])
        right = arrange(rhs, b, rb + rc + rf, [*bs, k, n])
        out = t.node("MatMul", [left, right])
    else:
        left = arrange(rhs, b, rb + rf + rc, [*bs, n, k])
        right = arrange(lhs, a, lb + lc + lf, [*bs, k, m])
        nb = len(bs)
        out = t.node("MatMul", [left, right])
        out = t.node("Transpose", [out], perm=[*range(nb), nb + 1, nb])
    return Entry(out, (*bs, m, n)) if (*bs, m, n) != s else Entry(out, s)


@rule(sh.SliceOp)
def _slice(t: _Translator, op: sh.SliceOp, env) -> Entry:
    x = t.mat(op.operand, env[op.operand])
    st, lim, step = (sh._arr(p) for p in (op.start_indices, op.limit_indices, op.strides))
    axes = range(len(st))
    return Entry(t.node("Slice", [x, t.ints(st), t.ints(lim), t.ints(axes), t.ints(step)]), _shape(op.result))


@rule(sh.DynamicSliceOp)
def _dynamic_slice(t: _Translator, op: sh.DynamicSliceOp, env) -> Entry:
    starts = [t.scalar(v, env) for v in op.start_indices]
    if any(s is None for s in starts):
        raise StablehloImportError(
            "stablehlo import: stablehlo.dynamic_slice with start indices computed at run time is not supported"
        )
    x, sizes = _shape(op.operand), sh._arr(op.slice_sizes)
    st = [min(max(int(s), 0), n - z) for s, n, z in zip(starts, x, sizes, strict=True)]  # StableHLO clamps
    name = t.mat(op.operand, env[op.operand])
    ends = [a + z for a, z in zip(st, sizes, strict=True)]
    return Entry(t.node("Slice", [name, t.ints(st), t.ints(ends), t.ints(range(len(x)))]), _shape(op.result))


@rule(sh.ConcatenateOp)
def _concat(t: _Translator, op: sh.ConcatenateOp, env) -> Entry:
    ins = [t.mat(v, env[v]) for v in op.inputs]
    return Entry(t.node("Concat", ins, axis=op.dimension.value.data), _shape(op.result))


@rule(sh.PadOp)
def _pad(t: _Translator, op: sh.PadOp, env) -> Entry:
    lo, hi, inner = (sh._arr(p) for p in (op.edge_padding_low, op.edge_padding_high, op.interior_padding))
    if any(inner) or any(p < 0 for p in (*lo, *hi)):
        raise StablehloImportError("stablehlo import: stablehlo.pad with interior or negative padding is not supported")
    x = t.mat(op.operand, env[op.operand])
    v = t.scalar(op.padding_value, env)
    if v is None:
        raise StablehloImportError("stablehlo import: stablehlo.pad with a padding value computed at run time")
    value = t.const(np.asarray(v, _dtype(op.result)))
    return Entry(t.node("Pad", [x, t.ints([*lo, *hi]), value], mode="constant"), _shape(op.result))


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
        ids = t.node("Reshape", [ids, t.ints(ids_shape or (1,))])
    # StableHLO clamps each start index into the operand ([0, V - 1] for a row): so does the import
    dt = _dtype(op.start_indices)
    ids = t.node("Min", [t.node("Max", [ids, t.const(np.asarray(0, dt))]), t.const(np.asarray(x[0] - 1, dt))])
    table = t.mat(op.operand, env[op.operand])
    return Entry(t.node("Gather", [table, ids], axis=0), _shape(op.result))


_IDENTITY_CALLS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement")


@rule(chlo.TopKOp)
def _top_k(t: _Translator, op: chlo.TopKOp, env) -> list[Entry]:
    """`jax.lax.top_k`: ONNX `TopK` along the last axis (largest, sorted), its int64 indices cast
    to JAX's i32."""
    x = t.mat(op.operand, env[op.operand])
    out = tuple(_shape(op.values))
    values, indices = t.fresh("top_k"), t.fresh("top_k_indices")
    name = f"{t.current}_{t.count}" if t.current else values
    t.nodes.append(
        helper.make_node(
            "TopK", [x, t.ints([op.k.value.data])], [values, indices], name=name, axis=-1, largest=1, sorted=1
        )
    )
    index = t.node("Cast", [indices], to=_onnx_type(_dtype(op.indices)))
    return [Entry(values, out), Entry(index, out)]


@rule(sh.CustomCallOp)
def _custom_call(t: _Translator, op: sh.CustomCallOp, env) -> Entry:
    target = op.call_target_name.data
    if target in _IDENTITY_CALLS and len(op.inputs) == 1 and len(op.res) == 1 and op.inputs[0].type == op.res[0].type:
        return env[op.inputs[0]]
    raise StablehloImportError(f"stablehlo import: stablehlo.custom_call @{target} is not supported")


_why[sh.ReturnOp] = "stablehlo.return outside a reduction body"


# ---------------------------------------------------------------------------------------------
# entry points


def to_onnx(module: ModuleOp) -> onnx.ModelProto:
    """The ONNX model computing `module`'s @main (inputs arg0…, outputs out0…)."""
    for op in module.walk():
        if op.dialect_name() not in ("builtin", "func", "stablehlo", "chlo"):
            raise StablehloImportError(f"stablehlo import: {op.name} is not a StableHLO op")
    return _Translator(module).run()


def import_stablehlo(source: str | ModuleOp, name: str = "<stablehlo>") -> ModuleOp:
    """The graph-level module of a StableHLO program (JAX's text, either form, or a parsed module)."""
    from ipu.frontends.onnx_import import OnnxImportError, import_model

    module = parse_stablehlo(source, name) if isinstance(source, str) else source
    model = to_onnx(module)
    try:
        return import_model(model, validated=True)  # our own construction from verified StableHLO
    except OnnxImportError as e:  # its nodes are named after the StableHLO ops they come from
        msg = str(e).replace("onnx import: ", "stablehlo import (through the ONNX importer): ", 1)
        raise StablehloImportError(f"{name}: {msg}") from None


__all__ = [
    "StablehloImportError",
    "clean_text",
    "import_stablehlo",
    "looks_like_stablehlo",
    "parse_stablehlo",
    "to_onnx",
]
