"""The value-level `graph` builder both frontends lower through (ONNX: `onnx_import`, StableHLO:
`stablehlo_import`): values in, `graph` values out, no model format in sight.

A `Val` is a computed tensor: its graph value (the row collapse `collapsed(shape)`: rank >= 3 is
carried as `[prod(leading), last]`, rank 0 as `[1]`) with its frontend-level shape and dtype.
`ValueBuilder` holds the block being built and what its lowerings share: `emit` (verifying each
op, naming its result, tagging it with `provenance()`), parameters (`param`, equal values shared),
constants as operands (`val`), reshapes, NumPy broadcasting (`binary_values`, `broadcast`),
integer handling (narrow types wrapped, wide ones refused where they could leave i32) and the
function's outputs (`output`, `function`). Each op's graph construction is a function over
values (`transpose_value`, `cast_value`, and the cores in `onnx_import` / `onnx_datamove` /
`onnx_cnn` / `onnx_routing` whose ONNX lowerings are node-reading shells around them); a
frontend subclasses `ValueBuilder` for its diagnostics (`fail`) and provenance, and nothing else.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    TensorType,
    f16,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ipu.dialects import graph as g

# integer types narrower than the device's i32: results wrap to their range after each op
NARROW_INTS = {np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.int16): "i16", np.dtype(np.uint16): "u16"}
# integer types wider than (or, unsigned, beyond) i32: only ops whose results stay within the
# operands' range are computed; one that could leave i32 is refused (it would wrap, they do not)
WIDE_INTS = (np.dtype(np.int64), np.dtype(np.uint32), np.dtype(np.uint64))


def is_int(dtype: type) -> bool:
    return np.dtype(dtype).kind in "iu"


def is_bool(dtype: type) -> bool:
    return np.dtype(dtype).kind == "b"


@dataclass
class Val:
    """A computed tensor: its graph value (row-collapsed form) and its ONNX shape and dtype."""

    ssa: SSAValue
    shape: tuple[int, ...]
    dtype: type
    bounds: tuple[int, int] | None = None  # integers: a proven [lo, hi] range (None: unknown)


def value_shape(x: Val | np.ndarray) -> tuple[int, ...]:
    """The ONNX shape of a computed tensor or a constant."""
    return tuple(x.shape) if isinstance(x, Val) else tuple(np.shape(x))


INT32_RANGE = (-(2**31), 2**31 - 1)


def bounds_of(x: Val | np.ndarray) -> tuple[int, int] | None:
    """The proven range of an integer value: a constant's own, a computed value's `bounds`."""
    if isinstance(x, Val):
        return x.bounds
    if x.dtype.kind in "iub" and x.size:
        return int(x.min()), int(x.max())
    return None


def interval(kind: str, a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    """Interval arithmetic for add, sub and mul (None when an operand's range is unknown)."""
    if a is None or b is None or kind not in ("add", "sub", "mul"):
        return None
    if kind == "add":
        return a[0] + b[0], a[1] + b[1]
    if kind == "sub":
        return a[0] - b[1], a[1] - b[0]
    ends = [x * y for x in a for y in b]
    return min(ends), max(ends)


def fits_i32(r: tuple[int, int] | None) -> bool:
    return r is not None and INT32_RANGE[0] <= r[0] and r[1] <= INT32_RANGE[1]


def collapsed(shape: Sequence[int]) -> tuple[int, ...]:
    """The graph-level form of an ONNX shape: rank 0 -> [1], rank >= 3 -> [rows, last]."""
    if len(shape) == 0:
        return (1,)
    if len(shape) <= 2:
        return tuple(shape)
    return (math.prod(shape[:-1]), shape[-1])


def _tt(shape: Sequence[int], dtype: type) -> TensorType:
    if is_int(dtype):  # every integer type is carried in i32 (int64 ids are narrowed on the host)
        return TensorType(i32, list(shape))
    if is_bool(dtype):
        return TensorType(i1, list(shape))
    return TensorType(f16 if dtype == np.float16 else f32, list(shape))


def _hint(name: str) -> str | None:
    """A valid SSA name hint from an ONNX value name (None when nothing usable remains)."""
    s = re.sub(r"[^\w$.-]", "_", name)
    s = re.sub(r"_\d+$", "", s) if not re.fullmatch(r"_\d+", s) else s
    return s if re.fullmatch(r"[A-Za-z_$.-][\w$.-]*", s) else (f"v{s}" if s and re.fullmatch(r"[\w$.-]+", s) else None)


def dense(values: np.ndarray, dtype: type) -> DenseIntOrFPElementsAttr:
    """A dense attribute holding `values` (little-endian bytes at `dtype`; integers and bools as
    i32, the device's type, each integer checked to fit it)."""
    if is_int(dtype) or is_bool(dtype):
        v = np.asarray(values)
        if v.dtype.kind == "f" and not np.array_equal(v, np.trunc(v)):  # e.g. Mean's 1/n on integers
            raise ConstantError(f"the non-integral constant {v.reshape(-1)[0]} cannot be an integer")
        info = np.iinfo(np.int32)
        if v.size and v.dtype.kind in "iu" and (v.min() < info.min or v.max() > info.max):
            raise ConstantError(
                f"constant value {int(v.max() if v.max() > info.max else v.min())} "
                "does not fit int32 (the device's integer type)"
            )
        a = np.ascontiguousarray(v.astype(np.int64).astype("<i4"))
        return DenseIntOrFPElementsAttr(TensorType(i32, list(a.shape)), BytesAttr(a.tobytes()))
    a = np.ascontiguousarray(values, dtype=np.dtype(dtype).newbyteorder("<"))
    return DenseIntOrFPElementsAttr(_tt(a.shape, dtype), BytesAttr(_bytes_of(a)))


def _bytes_of(a: np.ndarray) -> bytes:
    """The bytes of contiguous `a`: the bytes object it was read from when it is a view of all of
    one (an ONNX initializer's raw data: a weight is not copied a second time), else a copy."""
    b = a.base
    while isinstance(b, np.ndarray):
        b = b.base
    if (
        isinstance(b, bytes)
        and len(b) == a.nbytes
        and a.flags.c_contiguous
        and a.ctypes.data == np.frombuffer(b, np.uint8).ctypes.data
    ):
        return b
    return a.tobytes()


BINARY_OPS: dict[str, type[g.GraphOp]] = {
    "add": g.AddOp,
    "sub": g.SubOp,
    "mul": g.MulOp,
    "max": g.MaxOp,
    "min": g.MinOp,
    "div": g.DivOp,
    "pow": g.PowOp,
    "mod": g.ModOp,
    "fmod": g.FmodOp,
    "and": g.AndOp,
    "or": g.OrOp,
    "xor": g.XorOp,
    "shift_left": g.ShiftLeftOp,
    "shift_right": g.ShiftRightOp,
    "equal": g.EqualOp,
    "less": g.LessOp,
    "less_equal": g.LessEqualOp,
    "greater": g.GreaterOp,
    "greater_equal": g.GreaterEqualOp,
}
COMPARES = ("equal", "less", "less_equal", "greater", "greater_equal")
# kinds whose operands may swap (so the full-shape one goes first): the same op, or the mirrored comparison
SWAPPED = {k: k for k in ("add", "mul", "max", "min", "and", "or", "xor", "equal")} | {
    "less": "greater",
    "greater": "less",
    "less_equal": "greater_equal",
    "greater_equal": "less_equal",
}
# integer kinds whose result can leave a narrow type's range (wrapped after) or i32's (refused on wide types)
WRAPPING = ("add", "sub", "mul", "div", "shift_left")
WIDE_UNSAFE = ("add", "sub", "mul", "div", "pow", "shift_left", "neg", "abs", "bitwise_not")
# ways to broadcast a computed integer or bool tensor to a larger shape (None: not this way; a
# float one is `ValueBuilder.broadcast`); onnx_datamove adds one
BROADCASTERS: list[Callable[[ValueBuilder, Val, tuple[int, ...], str | None], Val | None]] = []


class ConstantError(ValueError):
    """A constant with no device form (`dense`): the builder reports it through `fail`."""


class ValueBuilder:
    """The `graph` ops of one function being built, and the state its lowerings share."""

    def __init__(self) -> None:
        self.block = Block()
        self.consts: dict[str, np.ndarray] = {}  # named constants (a named one is declared once: `val`)
        self.param_names: set[str] = set()
        # (dtype, shape, bytes, sampled digest) -> the parameters holding such bytes
        self.param_of: dict[tuple[object, ...], list[SSAValue]] = {}
        self.param_cache: dict[tuple[str, tuple[int, ...], type], SSAValue] = {}
        self.hints: set[str] = set()  # result names in use (they name the package's checkpoints)
        self.views: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}  # onnx_datamove's reshaped views
        # onnx_cnn: channels-last [N, H, W, C] twins of NCHW values
        self.channels_last: dict[str, Val] = {}
        self.node_label = ""  # what the ops being emitted come from: names their parameters

    # -- diagnostics and emission -------------------------------------------------------------

    def fail(self, msg: str) -> DiagnosticException:
        """The frontend's diagnostic for `msg`, naming what is being lowered (subclasses)."""
        return DiagnosticException(f"graph import: {self.node_label or 'model'}: {msg}")

    def provenance(self) -> str | None:
        """The `onnx.node` tag of the ops being emitted (what they come from), if any."""
        return None

    def emit(self, op: Operation, hint: str | None = None) -> SSAValue:
        if (origin := self.provenance()) is not None:
            op.attributes["onnx.node"] = StringAttr(origin)
        try:  # a graph op refusing its operands (an integer matmul, a float-only op on ints) is a diagnostic
            op.verify()
        except VerifyException as e:
            raise self.fail(str(e)) from None
        self.block.add_op(op)
        r = op.results[0]
        h = _hint(hint) if hint else None
        if h is not None:  # unique: hints name the package's checkpoints
            base, k = h, 1
            while h in self.hints:
                h, k = f"{base}.{k}", k + 1
            self.hints.add(h)
        r.name_hint = h
        return r

    def param(self, values: np.ndarray, dtype: type, shape: Sequence[int], name: str) -> SSAValue:
        """A `graph.parameter` holding `values` (a single value is kept as a splat). Equal values
        of one type share one parameter: exporters repeat constants per layer (the rotary cos and
        sin tables Llama's every layer folds to the same [heads x seq, dim] block), and each copy
        would otherwise be stored, and placed on the same tiles, once per layer."""
        v = np.ascontiguousarray(values)
        if 0 in tuple(shape):
            raise self.fail(
                f"'{name}' is a zero-size tensor {list(shape)} read by an op that is not folded away; only ops "
                "whose inputs are all known (an empty input is) fold, an empty tensor has no device form"
            )
        try:
            init = dense(v.reshape(1) if v.size == 1 else v.reshape(shape), dtype)
        except ConstantError as e:  # an integer constant that does not fit: name the node
            raise self.fail(f"constant '{name}': {e}") from None
        raw = init.data.data
        # a digest of a sample of the stored bytes finds the candidates (hashing every weight of a
        # large model whole took a second); equal bytes decide
        sample = raw[:64] + raw[-64:] + raw[:: max(1, len(raw) // 4096)]
        key = (str(dtype), tuple(shape), len(raw), hashlib.blake2b(sample, digest_size=16).digest())
        for known in self.param_of.get(key, ()):
            if known.owner.init.data.data == raw:  # type: ignore[union-attr]
                return known
        base = re.sub(r"[^\w.$-]", "_", name) or "const"
        sym, k = base, 1
        while sym in self.param_names or sym in self.hints:  # weights, checkpoints and streams share symbols
            sym, k = f"{base}_{k}", k + 1
        self.param_names.add(sym)
        r = self.emit(g.ParameterOp(sym, init, _tt(shape, dtype)), name)
        self.param_of.setdefault(key, []).append(r)
        return r

    def val(self, x: Val | np.ndarray, like: Val, name: str, shape: Sequence[int] | None = None) -> Val:
        """`x` as a graph value; a constant becomes a parameter at `shape` (default its own)."""
        if isinstance(x, Val):
            return x
        if not np.issubdtype(x.dtype, np.floating) and not (is_int(like.dtype) or is_bool(like.dtype)):
            raise self.fail(
                f"constant '{name}' has element type {x.dtype}; a {np.dtype(like.dtype)} tensor was expected"
            )
        if x.dtype.kind == "f" and is_int(like.dtype) and not np.array_equal(x, np.trunc(x)):
            raise self.fail(f"constant '{name}' has non-integral values where {np.dtype(like.dtype)} was expected")
        s = tuple(shape) if shape is not None else tuple(x.shape)
        key = (name, s, like.dtype)
        if self.consts.get(name) is not x or key not in self.param_cache:  # a named constant is declared once
            arr = np.broadcast_to(x.astype(like.dtype, copy=False), s)
            p = self.param(arr, like.dtype, collapsed(s), name)
            if self.consts.get(name) is not x:
                return Val(p, s, like.dtype)
            self.param_cache[key] = p
        return Val(self.param_cache[key], s, like.dtype)

    def reshape(self, x: Val, shape: Sequence[int], hint: str | None = None) -> Val:
        """`x` with ONNX shape `shape`: free when the collapsed forms agree, else a graph.reshape."""
        shape = tuple(shape)
        a, b = collapsed(x.shape), collapsed(shape)
        if a == b:
            return Val(x.ssa, shape, x.dtype)
        return Val(self.raw_reshape(x.ssa, b, x.dtype, hint), shape, x.dtype)

    def raw_reshape(self, v: SSAValue, shape: Sequence[int], dtype: type, hint: str | None = None) -> SSAValue:
        b = tuple(shape)
        while isinstance(v.owner, g.ReshapeOp):  # a reshape of a reshape reads the first's input
            v = v.owner.input
        a = tuple(v.type.get_shape())
        if a == b:
            return v
        return self.emit(g.ReshapeOp(v, _tt(b, dtype)), hint)

    def copy(self, v: SSAValue, hint: str) -> SSAValue:
        """A device copy of `v` (`graph.cast` to its own type): an output must be a value the
        programs write, not an input's or a weight's buffer itself."""
        return self.emit(g.CastOp(v, v.type), hint)

    def constant_output(self, name: str, x: np.ndarray, shape: tuple[int, ...], dt: type) -> SSAValue:
        """An output known at compile time: its values become a weight (bytes in the package,
        loaded by `initialize`) that the programs copy into the output on every run."""
        if tuple(x.shape) != shape:
            raise self.fail(f"output '{name}' is the constant of shape {list(x.shape)}, declared {list(shape)}")
        p = self.param(x.astype(dt), dt, collapsed(shape), name)
        r = self.copy(p, name)
        return self.raw_reshape(r, shape, dt, name) if len(shape) >= 3 or not shape else r

    def split_heads(self, v: SSAValue, heads: int, dtype: type, hint: str | None = None) -> SSAValue:
        """`graph.split_heads` of a `[S, H*D]` value into `[H, S, D]`."""
        s, hd = v.type.get_shape()
        t = _tt((heads, s, hd // heads), dtype)
        return self.emit(
            g.SplitHeadsOp.create(operands=[v], result_types=[t], attributes={"heads": IntegerAttr(heads, i64)}), hint
        )

    def attention_bias(
        self,
        consts: list[tuple[str, np.ndarray, float]],
        runtime: list[tuple[Val | np.ndarray, float]],
        qh: SSAValue,
        kh: SSAValue,
        batch: int,
        dtype: type,
    ) -> SSAValue | None:
        """The additive attention bias `graph.attention` takes, [heads or 1, S, Sk] with the
        batch folded into the heads like q's: the sum of the constant terms (each times the
        scale between it and the softmax) and of the terms computed at run time (which must
        cover every query row and key, per head or shared). A lone constant term is declared
        once however many attentions add it (T5 shares its position bias between layers)."""
        nh, s, _ = qh.type.get_shape()
        sk = kh.type.get_shape()[1]
        terms: list[SSAValue] = []
        for x, after in runtime:
            if not isinstance(x, Val):
                raise self.fail("an attention bias folded to a constant after matching")
            sh = (1,) * (4 - len(x.shape)) + tuple(x.shape)
            if len(sh) != 4 or sh[2:] != (s, sk) or math.prod(sh[:2]) not in (1, nh) or sh[0] not in (1, batch):
                raise self.fail(
                    f"an attention bias computed at run time of shape {list(x.shape)}: only [..., {s}, {sk}] biases "
                    f"per head ({nh} with the batch) or shared by all heads are supported"
                )
            if x.dtype != dtype:
                raise self.fail("the attention bias's element type differs from the query's")
            y = self.raw_reshape(x.ssa, (math.prod(sh[:2]), s, sk), dtype)
            if after != 1.0:  # the scale between this term and the softmax
                k = self.param(np.array(after), dtype, y.type.get_shape(), f"{self.node_label}_bias_scale")
                y = self.emit(g.MulOp(y, k, y.type))
            terms.append(y)
        hb = max((t.type.get_shape()[0] for t in terms), default=1)
        if consts:
            full = np.zeros((1, 1, s, sk), np.float32)
            try:
                for _, m, after in consts:
                    full = full + np.float32(after) * m.astype(np.float32)
                hb = nh if math.prod(full.shape[:2]) > 1 else hb
                arr = np.broadcast_to(full, (batch, nh // batch, s, sk) if hb == nh else (1, 1, s, sk))
            except ValueError:
                shapes = [list(m.shape) for _, m, _ in consts]
                raise self.fail(
                    f"attention bias terms of shapes {shapes} do not broadcast to [{batch}, {nh // batch}, {s}, {sk}]"
                ) from None
            name = consts[0][0] if len(consts) == 1 and consts[0][2] == 1.0 else f"{self.node_label}_bias"
            key = (f"{name}#attention_bias", (hb, s, sk), dtype)
            if key not in self.param_cache:
                self.param_cache[key] = self.param(arr.reshape(hb, s, sk), dtype, (hb, s, sk), name)
            terms.insert(0, self.param_cache[key])
        if any(t.type.get_shape()[0] != hb for t in terms):
            raise self.fail("attention bias terms computed at run time are shared by all heads, others per head")
        if not terms:
            return None
        acc = terms[0]
        for t in terms[1:]:
            acc = self.emit(g.AddOp(acc, t, acc.type))
        return acc

    def sweep_dead(self) -> None:
        """Drop graph ops nothing reads (a fused chain's or a folded reshape's leftovers)."""
        for op in reversed(list(self.block.ops)):
            if not isinstance(op, func.ReturnOp) and all(not r.uses for r in op.results):
                op.detach()
                op.erase()

    def unary(self, cls: type, x: Val, hint: str | None) -> Val:
        return Val(self.emit(cls(x.ssa), hint), x.shape, x.dtype)

    def splat(self, value: float, like: Val, name: str) -> SSAValue:
        """`value` as an operand beside `like`: a row vector of its last axis (broadcast over the
        rows: a tile holds one row of it, not a block of `like`'s size), or `like`'s own shape
        when that is 1-D."""
        shape = collapsed(like.shape)
        return self.param(np.array(value), like.dtype, shape[-1:] if len(shape) == 2 else shape, name)

    def scale(self, x: Val, k: float, hint: str | None) -> Val:
        s = self.splat(k, x, f"{self.node_label}_k")
        return Val(self.emit(g.MulOp(x.ssa, s, x.ssa.type), hint), x.shape, x.dtype)

    def binary_values(
        self,
        kind: str,
        a: Val | np.ndarray,
        b: Val | np.ndarray,
        a_name: str,
        b_name: str,
        hint: str | None,
        copies: bool = False,
    ) -> Val:
        """NumPy-broadcast `a <kind> b`: the full-shape operand goes first; a non-constant other
        operand may only be a vector along the last axis or a column ([..., 1], one value per
        row); constants are materialized. `copies`: a product with ones that only repeats b's
        values (a broadcast), so an integer b keeps its range and never leaves i32."""
        cls = BINARY_OPS[kind]
        proven = interval(kind, bounds_of(a), bounds_of(b))  # a wide-int result proven to fit i32
        if copies and isinstance(b, Val):
            proven = b.bounds  # ones * b repeats b's values: never a new one
        sa, sb = (
            tuple(np.shape(a) if not isinstance(a, Val) else a.shape),
            tuple(np.shape(b) if not isinstance(b, Val) else b.shape),
        )
        try:
            shape = tuple(np.broadcast_shapes(sa, sb))
        except ValueError:
            raise self.fail(f"shapes {list(sa)} and {list(sb)} do not broadcast") from None
        like = a if isinstance(a, Val) else b
        assert isinstance(like, Val)
        if (isinstance(a, Val) and isinstance(b, Val)) and a.dtype != b.dtype:
            raise self.fail("operand element types differ")
        if sa != shape and sb == shape and kind in SWAPPED:
            a, b, a_name, b_name, sa, sb = b, a, b_name, a_name, sb, sa
            kind = SWAPPED[kind]
            cls = BINARY_OPS[kind]
        negate = False
        if sa != shape:
            if isinstance(a, Val) and kind == "sub" and sb == shape:  # vector - full = -(full - vector)
                a, b, a_name, b_name, sa, sb, negate = b, a, b_name, a_name, sb, sa, True
            else:
                a = self.full(a, like, shape, a_name)
        av = self.val(a, like, a_name)
        bv = self.rhs_operand(b, av, shape, b_name)
        if kind in COMPARES:
            return Val(self.emit(cls(av.ssa, bv, _tt(collapsed(shape), np.bool_)), hint), shape, np.bool_)
        if not fits_i32(proven) and not copies:
            self.check_int_op(kind, av.dtype)
        narrow = np.dtype(av.dtype) in NARROW_INTS
        wrap = kind in WRAPPING and narrow and not negate
        r = Val(self.emit(cls(av.ssa, bv, av.ssa.type), None if negate or wrap else hint), shape, av.dtype)
        if wrap:
            r = self.wrap(r, hint)
        if negate:
            r = self.scale(r, -1.0, None if narrow else hint)
            r = self.wrap(r, hint) if narrow else r
        if fits_i32(proven) and not narrow:
            r = Val(r.ssa, r.shape, r.dtype, proven)
        return r

    def check_int_op(self, kind: str, dtype: type) -> None:
        """Refuse `kind` on a wide integer type (int64, uint32, uint64: computed in i32) when its
        result can leave i32's range, where it would wrap and the model's type would not."""
        unsigned_div = kind == "div" and np.dtype(dtype).kind == "u"  # only int64 min / -1 leaves the range
        if np.dtype(dtype) in WIDE_INTS and kind in WIDE_UNSAFE and not unsigned_div:
            raise self.fail(
                f"{kind} of {np.dtype(dtype)} values: the device computes them in int32, where a result beyond "
                f"int32 would wrap and {np.dtype(dtype)} does not, and no range is known for the operands that "
                "keeps it inside (ranges are proven from constants, booleans, arg reductions and sums of them); "
                "not supported"
            )

    def wrap(self, x: Val, hint: str | None) -> Val:
        """`x` reduced to its narrow integer type's range (`graph.wrap`); other types unchanged."""
        to = NARROW_INTS.get(np.dtype(x.dtype))
        if to is None:
            return x
        return Val(self.emit(g.WrapOp(x.ssa, to), hint), x.shape, x.dtype)

    def full(self, x: Val | np.ndarray, like: Val, shape: tuple[int, ...], name: str) -> Val:
        if isinstance(x, Val):
            if x.shape == shape:
                return x
            if np.dtype(x.dtype).kind == "f":  # exactly, as ones * x
                return self.broadcast(x, shape, name, None)
            # an integer or bool tensor (ones * x is a float product) by copies
            for broadcast in BROADCASTERS:
                copies = broadcast(self, x, shape, None)
                if copies is not None:
                    return copies
            raise self.fail(
                f"broadcasting the computed tensor '{name}' {list(x.shape)} to {list(shape)} is not supported"
            )
        return self.val(x, like, name, shape)

    def broadcast(self, x: Val, shape: tuple[int, ...], name: str, hint: str | None) -> Val:
        """`x` NumPy-broadcast to `shape`, exactly: the axes are grouped into runs that are kept or
        broadcast, and each broadcast run in turn is `ones * x` over a 2-D view (x as a column
        when nothing follows the run, else as a row vector, then a transpose putting the new axis
        in place when something precedes it). 1 * x is x for every value (NaN, infinities, -0)."""
        s = (1,) * (len(shape) - len(x.shape)) + tuple(x.shape)
        if len(s) != len(shape) or any(a not in (1, b) for a, b in zip(s, shape, strict=True)):
            raise self.fail(f"the computed tensor '{name}' {list(x.shape)} does not broadcast to {list(shape)}")
        groups: list[list] = []  # [kept, size in x, size in the result]
        for a, b in zip(s, shape, strict=True):
            kept = a == b
            if groups and groups[-1][0] == kept:
                groups[-1][1] *= a
                groups[-1][2] *= b
            else:
                groups.append([kept, a, b])
        dims = [gx for _, gx, _ in groups]
        cur = self.reshape(x, tuple(dims))
        for j, (kept, _, n) in enumerate(groups):
            if kept:
                continue
            p, q = math.prod(dims[:j]), math.prod(dims[j + 1 :])
            ones_name = f"{name}.ones"
            if q == 1:  # nothing follows: x is a column, one value per row
                full = self.binary_values(
                    "mul", np.ones((p, n), np.float32), self.reshape(cur, (p, 1)), ones_name, name, None, copies=True
                )
            else:  # x as a row vector repeated n times, then the new axis moved behind the p leading ones
                full = self.binary_values(
                    "mul",
                    np.ones((n, p * q), np.float32),
                    self.reshape(cur, (p * q,)),
                    ones_name,
                    name,
                    None,
                    copies=True,
                )
                if p > 1:
                    full = transpose_value(self, self.reshape(full, (n, p, q)), [1, 0, 2], None)
            dims[j] = n
            cur = self.reshape(full, tuple(dims))
        return self.reshape(cur, shape, hint)

    def rhs_operand(self, b: Val | np.ndarray, a: Val, shape: tuple[int, ...], name: str) -> SSAValue:
        sb = value_shape(b)
        if sb == shape:
            return self.val(b, a, name).ssa
        core = sb[next((i for i, d in enumerate(sb) if d != 1), len(sb)) :]
        if isinstance(b, Val) and len(shape) >= 2 and sb == (*shape[:-1], 1):  # a column: one value per row
            return b.ssa  # its row collapse [rows, 1]
        if len(shape) >= 2 and core == shape[-1:]:
            if isinstance(b, Val):
                return self.reshape(b, core).ssa
            return self.val(np.reshape(b, core), a, name).ssa
        return self.full(b, a, shape, name).ssa

    # -- the function ----------------------------------------------------------------------------

    def output(self, v: Val, shape: tuple[int, ...], dt: type, name: str) -> SSAValue:
        """The returned value of output `name` computed as `v` (of `shape` and `dt`): its own
        shape again where the row collapse changed it, and a copy of an input or a weight."""
        if v.shape != shape or v.dtype != dt:
            raise self.fail(
                f"output '{name}' is computed as {list(v.shape)} {np.dtype(v.dtype)}, "
                f"declared {list(shape)} {np.dtype(dt)}"
            )
        reshaped = len(shape) >= 3 or not shape
        r = self.raw_reshape(v.ssa, shape, dt, name) if reshaped else v.ssa
        if isinstance(r.owner, Block) or isinstance(r.owner, g.ParameterOp):
            # an input or a weight unchanged: the device copies it (in its row-collapsed form)
            c = self.copy(v.ssa, name)
            r = self.raw_reshape(c, shape, dt, name) if reshaped else c
        return r

    def argument(self, name: str, shape: tuple[int, ...], dt: type) -> tuple[SSAValue, Val]:
        """A new argument of the function for input `name`, and its value (row-collapsed)."""
        a = self.block.insert_arg(_tt(shape, dt), len(self.block.args))
        a.name_hint = _hint(name)
        v = Val(a, shape, dt)
        if len(shape) >= 3 or not shape:  # the row collapse ([1] for a scalar), before anything reads it
            v = Val(self.raw_reshape(a, collapsed(shape), dt, name), shape, dt)
        return a, v

    def function(self, args: list[tuple[str, SSAValue]], outs: list[tuple[str, SSAValue]]) -> func.FuncOp:
        """`func.func @main` of the block, returning `outs`, its inputs and outputs named
        (`ipu.inputs` / `ipu.outputs`); the ops nothing reads swept."""
        self.block.add_op(func.ReturnOp(*(o for _, o in outs)))
        self.sweep_dead()
        f = func.FuncOp("main", FunctionType.from_lists([a.type for _, a in args], [o.type for _, o in outs]))
        f.body.detach_block(0)
        f.body.add_block(self.block)
        f.attributes["ipu.inputs"] = ArrayAttr([StringAttr(n) for n, _ in args])
        f.attributes["ipu.outputs"] = ArrayAttr([StringAttr(n) for n, _ in outs])
        return f

    @staticmethod
    def record_dtypes(f: func.FuncOp, ins: list[np.dtype], outs: dict[str, np.dtype]) -> None:
        """The model's own element types of inputs and outputs where some is an integer, a bool
        or float64 (`onnx.input_dtypes` / `onnx.output_dtypes`): the host narrows and widens
        those; a float interface is the device's own."""
        if any(d.kind in "iub" or d == np.float64 for d in ins + list(outs.values())):
            f.attributes["onnx.input_dtypes"] = ArrayAttr([StringAttr(d.name) for d in ins])
            f.attributes["onnx.output_dtypes"] = DictionaryAttr({n: StringAttr(d.name) for n, d in outs.items()})


def cast_value(im: ValueBuilder, x: Val, dt: type, hint: str | None) -> Val:
    """`x` as `dt` by ONNX Cast's rules: floats round to nearest, float to integer truncates toward
    zero (then wraps to a narrow type's range), anything to bool is x != 0; between integer types
    the i32 word only needs wrapping into a narrower range (a wider type holds it as it is). A
    cast whose values could leave i32 (float or signed to int64/uint32/uint64) is refused."""
    src, dst = np.dtype(x.dtype), np.dtype(dt)
    if src == dst:
        return x
    if dst.kind in "iu" and dst in WIDE_INTS and not (src.kind in "bu" or (src.kind == "i" and dst.kind == "i")):
        raise im.fail(
            f"cast from {src} to {dst}: the device carries {dst} in int32, which a {src} value could overflow; not "
            "supported"
        )
    if src.kind in "iub" and dst.kind in "iu":  # an i32 word already: wrap into a narrower range
        if dst in NARROW_INTS and not (src.kind == "b" or (src.kind == dst.kind and src.itemsize <= dst.itemsize)):
            return im.wrap(Val(x.ssa, x.shape, dt), hint)
        if src.kind == "b":  # the device's i1 becomes an i32 word of 0 or 1
            return Val(im.emit(g.CastOp(x.ssa, _tt(collapsed(x.shape), dt)), hint), x.shape, dt, (0, 1))
        return Val(x.ssa, x.shape, dt, x.bounds)
    r = Val(im.emit(g.CastOp(x.ssa, _tt(collapsed(x.shape), dt)), None if dst in NARROW_INTS else hint), x.shape, dt)
    return im.wrap(r, hint) if dst in NARROW_INTS else r


def _matmul_core(im: ValueBuilder, a: Val, b: SSAValue, n: int, hint: str | None) -> Val:
    rows = collapsed(a.shape)[0] if len(a.shape) >= 2 else 1
    av = a.ssa if len(a.shape) >= 2 else im.raw_reshape(a.ssa, (1, a.shape[0]), a.dtype)
    r = im.emit(g.MatmulOp(av, b, _tt((rows, n), a.dtype)), hint if len(a.shape) >= 2 else None)
    shape = (*a.shape[:-1], n)
    if len(a.shape) == 1:
        return Val(im.raw_reshape(r, (n,), a.dtype, hint), shape, a.dtype)
    return Val(r, shape, a.dtype)


def _transpose2d(im: ValueBuilder, x: SSAValue, dtype: type, hint: str | None = None) -> SSAValue:
    r, c = x.type.get_shape()
    perm = {"perm": DenseArrayBase.from_list(i64, [1, 0])}
    return im.emit(g.TransposeOp.create(operands=[x], result_types=[_tt((c, r), dtype)], attributes=perm), hint)


def _reduce_rows(
    im: ValueBuilder, x: SSAValue, kind: str, dtype: type, out: tuple[int, ...], hint: str | None
) -> SSAValue:
    """Reduce the last axis of a 2-D value [R, C] to the collapsed shape `out` (R elements).

    The reduction runs on a rank-3 view [p, q, C] whose leading dims are `out` itself (or
    [1, R] for a 1-D `out`), so only last-dim-preserving reshapes are needed; the backend lays
    out a rank-2 -> rank-1 reduction wrongly."""
    c = x.type.get_shape()[1]
    lead = out if len(out) == 2 else (1, out[0])
    x3 = im.raw_reshape(x, (*lead, c), dtype)
    attrs = {"kind": StringAttr(kind), "axis": IntegerAttr(2, i64)}
    red = im.emit(g.ReduceOp.create(operands=[x3], result_types=[_tt(lead, dtype)], attributes=attrs), hint)
    return im.raw_reshape(red, out, dtype, hint)


def _emit2(im: ValueBuilder, cls: type, a: SSAValue, b: SSAValue, hint: str | None = None) -> SSAValue:
    return im.emit(cls(a, b, a.type), hint)


def _emit1(im: ValueBuilder, cls: type, a: SSAValue, hint: str | None = None) -> SSAValue:
    return im.emit(cls(a), hint)


def transpose_value(im: ValueBuilder, x: Val, perm: list[int], hint: str | None) -> Val:
    """`x` with its axes permuted by `perm` (any permutation): a reshape when only unit axes
    move, a 2-D transpose, a swap of leading axes, or permutes around one 2-D transpose."""
    rank = len(x.shape)
    shape = tuple(x.shape[p] for p in perm)
    moved = [p for p in perm if x.shape[p] != 1]
    if moved == sorted(moved):  # only unit axes move: a reshape
        return im.reshape(x, shape, hint)
    real = [a for a in range(rank) if x.shape[a] != 1]  # the axes that are not unit axes
    if len(real) == 2:  # a 2-D transpose once the unit axes are dropped
        two = im.raw_reshape(x.ssa, tuple(x.shape[a] for a in real), x.dtype)
        t2 = _transpose2d(im, two, x.dtype, hint)
        return Val(im.raw_reshape(t2, collapsed(shape), x.dtype, hint), shape, x.dtype)
    if len(real) == 3 and moved == [real[1], real[0], real[2]] and x.shape[real[2]] % 2 == 0:
        return _swap_leading(im, x, real, shape, hint)  # an odd last axis: the permute below
    dims = tuple(x.shape[a] for a in real)
    sub = [real.index(a) for a in moved]  # the permutation of the real axes
    full = im.raw_reshape(x.ssa, dims, x.dtype)
    if sub[-1] == len(sub) - 1:  # the last real axis stays last: one exchange (plan.permute)
        t = _permute(im, full, sub, x.dtype)
    else:
        # the last axis moves: bring the new last axis j first (a permute keeping the old last
        # axis L last), transpose that 2-D view ([j, rest.. L] -> [rest.. L, j]), then move L
        # to its place (a permute keeping j last)
        j, last = sub[-1], len(sub) - 1
        rest = [a for a in sub[:-1] if a != last]
        a1 = _permute(im, full, [j, *rest, last], x.dtype)
        n_j = dims[j]
        t2 = _transpose2d(im, im.raw_reshape(a1, (n_j, math.prod(dims) // n_j), x.dtype), x.dtype)
        mid = [*rest, last, j]  # axes of t2 (in the original numbering)
        t3 = im.raw_reshape(t2, tuple(dims[a] for a in mid), x.dtype)
        t = _permute(im, t3, [mid.index(a) for a in sub], x.dtype)
    return Val(im.raw_reshape(t, collapsed(shape), x.dtype, hint), shape, x.dtype)


def _permute(im: ValueBuilder, v: SSAValue, perm: list[int], dtype: type) -> SSAValue:
    """`graph.transpose` by `perm` (the last axis kept last), or `v` for the identity."""
    if perm == sorted(perm):
        return v
    dims = tuple(v.type.get_shape())
    return im.emit(g.TransposeOp(v, perm, _tt(tuple(dims[i] for i in perm), dtype)))


def _swap_leading(im: ValueBuilder, x: Val, real: list[int], shape: tuple[int, ...], hint: str | None) -> Val:
    """[A, B, C] -> [B, A, C] (unit axes aside): the head split [S, H*D] -> [H, S, D] when the
    value is seen as [A, B*C], or the head merge [H, S, D] -> [S, H*D] when it already is [A, B, C]."""
    a, b, c = (x.shape[i] for i in real)
    src = x.ssa
    while isinstance(src.owner, g.ReshapeOp):
        src = src.owner.input
    if tuple(src.type.get_shape()) == (a, b, c):
        y = im.emit(g.MergeHeadsOp(src, _tt((b, a * c), x.dtype)), hint)
    else:
        y = im.split_heads(im.raw_reshape(x.ssa, (a, b * c), x.dtype), b, x.dtype, hint)
    return Val(im.raw_reshape(y, collapsed(shape), x.dtype, hint), shape, x.dtype)
