"""The `graph` dialect: semantic tensor operations on builtin tensors inside `func.func`.

Function arguments are host inputs; `graph.parameter` declares weights, either dense data or a
seeded initializer (`#graph.gaussian<seed = 1, std = 0.02>`). Elementwise binary operations
broadcast like NumPy.

Each operation is defined once, here: its operands and syntax, its verifier (shapes and dtypes)
and `reference`, its float32 semantics, which the golden evaluator runs. An elementwise unary
operation (`ElementwiseUnaryOp`) also names the kernel it lowers to (`kernel()`, a
`plan.unary` kind and an `ipu.abi.kernels` entry), so the passes below handle it generically.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AllOf,
    AnyOf,
    AttrConstraint,
    BaseAttr,
    IRDLOperation,
    attr_def,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.constraints import VerificationContext
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from ipu.dialects.exact_init import ExactInit
from ipu.dialects.repeat import RepeatBase
from ipu.dialects.shared import GaussianAttr

FloatTensor = TensorType.constr(AnyOf([BaseAttr(Float16Type), BaseAttr(Float32Type)]))
# every element type the device holds: f16, f32, i32 and i1 (bool; an i32 word 0/1 below graph)
MAX_DIM = (1 << 31) - 1
"""Largest extent of a tensor, and of its element count: the device addresses and indexes
elements with 32-bit words (any larger value could not be placed on any target anyway)."""


@dataclass(frozen=True)
class DeviceShape(AttrConstraint):
    """A shape the device can hold: static, every extent in [1, MAX_DIM], at most MAX_DIM
    elements (an empty tensor has no device form: the ONNX importer streams those on the host)."""

    def verify(self, attr: Attribute, constraint_context: VerificationContext) -> None:
        if not isinstance(attr, TensorType):
            return
        dims = tuple(attr.get_shape())
        bad = next((d for d in dims if not 1 <= d <= MAX_DIM), None)
        if bad is not None:
            why = "an empty tensor has no device form" if bad == 0 else f"extents are 1 to {MAX_DIM}"
            if bad < 0:
                why = "shapes must be static"
            raise VerifyException(f"{attr}: extent {bad} ({why})")
        if math.prod(dims) > MAX_DIM:
            raise VerifyException(f"{attr}: {math.prod(dims)} elements, more than {MAX_DIM}")

    def mapping_type_vars(self, type_var_mapping) -> DeviceShape:
        return self


DeviceTensor = AllOf(
    (TensorType.constr(AnyOf([BaseAttr(Float16Type), BaseAttr(Float32Type), BaseAttr(IntegerType)])), DeviceShape())
)


def is_index_type(el: Attribute) -> bool:
    """The device's one integer element type, i32 (signless): indices, and every integer value
    (ONNX's narrower and wider integers are carried in it)."""
    return isinstance(el, IntegerType) and el.width.data == 32 and el.signedness.data == Signedness.SIGNLESS


def is_bool_type(el: Attribute) -> bool:
    """Bool, `i1`: the result of comparisons, the condition of `graph.where`."""
    return isinstance(el, IntegerType) and el.width.data == 1 and el.signedness.data == Signedness.SIGNLESS


def is_float_type(el: Attribute) -> bool:
    return isinstance(el, Float16Type | Float32Type)


# which element types an op accepts (`DTYPES` of the elementwise ops)
_DTYPE_CLASSES = {
    "float": (is_float_type, "f16 or f32"),
    "numeric": (lambda el: is_float_type(el) or is_index_type(el), "f16, f32 or i32"),
    "int": (is_index_type, "i32"),
    "bool": (is_bool_type, "i1"),
    "logical": (lambda el: is_bool_type(el) or is_index_type(el), "i1 or i32"),
    "any": (lambda el: is_float_type(el) or is_index_type(el) or is_bool_type(el), "f16, f32, i32 or i1"),
}


def check_dtype(op_name: str, el: Attribute, accepted: str) -> None:
    """Raise naming `op_name` when element type `el` is not of the class `accepted`."""
    ok, what = _DTYPE_CLASSES[accepted]
    if not ok(el):
        raise VerifyException(f"{op_name}: element type {el} is not supported (expected {what})")


def shape_of(t: Attribute) -> tuple[int, ...]:
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy broadcasting of two shapes, or None when they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def numpy_dtype(t: Attribute) -> type:
    el = t.element_type if isinstance(t, TensorType) else t
    if isinstance(el, Float16Type):
        return np.float16
    if isinstance(el, Float32Type):
        return np.float32
    if is_index_type(el):
        return np.int32
    if is_bool_type(el):
        return np.bool_
    raise VerifyException(f"unsupported element type {el}")


def parameter_values(op: ParameterOp) -> np.ndarray:
    """A parameter's values at its storage precision (shared by golden and codegen)."""
    return initializer_values(op.init, op.result.type)


def stored_values(op: ParameterOp) -> tuple[np.ndarray, Attribute]:
    """A parameter's values in its result's shape and the element type they are stored at: a
    full dense initializer keeps its own (convert-precision may leave it wider than the result's
    type), anything else is materialized at the result's; little-endian either way, as the
    initializer's bytes are. Joining weights (stacking layers, side by side columns) keeps
    their values exact."""
    t = op.result.type
    init = op.init
    shape = shape_of(t)
    if (
        isinstance(init, DenseIntOrFPElementsAttr)
        and len(init) == int(np.prod(shape)) > 1
        and str(init.get_element_type()) in _RAW_DTYPES  # its bytes as they are
    ):
        return _dense_array(init).reshape(shape), init.get_element_type()
    v = np.asarray(parameter_values(op))
    return v.astype(v.dtype.newbyteorder("<")), t.element_type


def seeded_parameters(module: Operation) -> Iterator[tuple[GaussianAttr, tuple[int, ...], type]]:
    """(initializer, shape, storage dtype) of each parameter with a seeded initializer, in order
    (what `prefetched_gaussians` draws ahead)."""
    for op in module.walk():
        if isinstance(op, ParameterOp) and isinstance(op.init, GaussianAttr):
            t = op.result.type
            yield op.init, shape_of(t), numpy_dtype(t)


def initializer_values(init: Attribute, t: TensorType, out: np.ndarray | None = None) -> np.ndarray:
    """Values of a dense or seeded initializer for tensor type `t`, at its storage dtype; with
    `out` (of `t`'s shape), written there and returned (a package's buffer: no copy of its own)."""
    dt = numpy_dtype(t)
    if isinstance(init, GaussianAttr):
        vals = init.materialize(shape_of(t), dt)
        if out is None:
            return vals
    else:
        assert isinstance(init, DenseIntOrFPElementsAttr)
        vals = np.broadcast_to(_dense_array(init).reshape(init.get_shape() or ()), shape_of(t))
        if out is None:
            return vals.astype(dt)
    np.copyto(out, vals, casting="unsafe")  # astype's rounding
    return out


_RAW_DTYPES = {"f16": "<f2", "f32": "<f4", "f64": "<f8", "i32": "<i4", "i64": "<i8"}


def dense_values(init: DenseIntOrFPElementsAttr) -> np.ndarray:
    """A dense initializer's values, flat, at its own element type (a read-only view of its
    bytes where the type has a fixed NumPy layout)."""
    return _dense_array(init)


def _dense_array(init: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The attribute's values, read straight from its little-endian bytes where the element type
    has a fixed NumPy layout (a weight of millions of elements), else element by element."""
    raw = _RAW_DTYPES.get(str(init.get_element_type()))
    data = init.data.data
    if raw is not None and len(data) == len(init) * np.dtype(raw).itemsize:
        return np.frombuffer(data, raw)
    return np.array(init.get_values(), dtype=np.float64)


# --- reference numerics (float32 in, float32 out) shared by the ops' `reference` methods ---

_SQRT_2_OVER_PI = np.float32(math.sqrt(2.0 / math.pi))
_ERF = np.frompyfunc(math.erf, 1, 1)


def gelu_exact(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + erf(x / sqrt 2)), erf in double precision (the C library's), rounded to fp32."""
    x64 = x.astype(np.float64)
    return (0.5 * x64 * (1.0 + _ERF(x64 / math.sqrt(2.0)).astype(np.float64))).astype(np.float32)


def gelu(x: np.ndarray) -> np.ndarray:
    """The tanh approximation of GeLU in float32."""
    x = x.astype(np.float32)
    inner = _SQRT_2_OVER_PI * (x + np.float32(0.044715) * x * x * x)
    return np.float32(0.5) * x * (np.float32(1.0) + np.tanh(inner))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax in float32."""
    x = x.astype(np.float32)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True, dtype=np.float32)


def striped_rows(keys: int, stripes: int) -> int:
    """The query rows of an attention striped `stripes` ways over `keys` keys: the keys rounded up
    to a multiple of the stripes (`graph.attention`'s `stripes`)."""
    return -(-keys // stripes) * stripes


def striped_positions(rows: int, stripes: int) -> np.ndarray:
    """The sequence position of each of `rows` query rows in striped order (`graph.attention`'s
    `stripes`): row i * (rows / stripes) + j is position j * stripes + i."""
    per = rows // stripes
    r = np.arange(rows)
    return (r % per) * stripes + r // per


def attention_scores(
    q: np.ndarray,
    k: np.ndarray,
    scale: float,
    causal: bool = False,
    bias: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    key_positions: np.ndarray | None = None,
) -> np.ndarray:
    """q k^T * scale [+ bias] in float32 with grouped KV heads; causally masked keys are -inf.
    `bias` [1 or Hq, S, Sk] is added after the scale (a shared one to every head). `positions`
    and `key_positions`: each query row's and key's sequence position for the causal mask
    (default: its row index)."""
    q, k = q.astype(np.float32), k.astype(np.float32)
    k = np.repeat(k, q.shape[0] // k.shape[0], axis=0)
    scores = np.matmul(q, np.swapaxes(k, 1, 2)) * np.float32(scale)
    if bias is not None:
        scores = scores + bias.astype(np.float32)
    if causal:
        s, sk = scores.shape[1:]
        pos = np.arange(s) if positions is None else positions
        kpos = np.arange(sk) if key_positions is None else key_positions
        mask = kpos[None, :] > pos[:, None]
        scores = np.where(mask[None], np.float32(-np.inf), scores)
    return scores


def masked_softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis in float32 where a row whose every score is -inf (every key
    masked) is all zeros rather than NaN (the attention kernels count no key there)."""
    x = x.astype(np.float32)
    m = np.max(x, axis=-1, keepdims=True)
    safe = np.where(np.isneginf(m), np.float32(0), m)
    e = np.exp(x - safe)
    total = np.sum(e, axis=-1, keepdims=True, dtype=np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total != 0, e / total, np.float32(0))


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    scale: float,
    causal: bool = False,
    bias: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    key_positions: np.ndarray | None = None,
) -> np.ndarray:
    """Grouped-query attention in float32: query head h reads KV head h // (Hq / Hkv); a query
    row with every key masked (-inf) gives zeros."""
    v = np.repeat(v.astype(np.float32), q.shape[0] // v.shape[0], axis=0)
    scores = attention_scores(q, k, scale, causal, bias, positions, key_positions)
    return np.matmul(masked_softmax(scores), v)


class GraphOp(IRDLOperation):
    """A computing graph operation: one result, and `reference`, its semantics."""

    def reference(self, *inputs: np.ndarray) -> np.ndarray:
        """The result from the operands' values (float32, in operand order), in float32; the
        golden evaluator rounds it to the result's element type."""
        raise NotImplementedError(f"{self.name} defines no reference semantics")


@irdl_op_definition
class ParameterOp(IRDLOperation):
    """A weight: `graph.parameter "w1" #graph.gaussian<seed = 1, std = 0.02> : tensor<..>`."""

    name = "graph.parameter"
    sym_name = attr_def(StringAttr)
    init = attr_def(AnyOf([BaseAttr(GaussianAttr), BaseAttr(DenseIntOrFPElementsAttr)]))
    result = result_def(DeviceTensor)
    traits = traits_def(Pure())
    custom_directives = (ExactInit,)
    assembly_format = "$sym_name custom<ExactInit>($init) attr-dict `:` type($result)"

    def __init__(self, name: str, init: Attribute, type: TensorType):
        super().__init__(attributes={"sym_name": StringAttr(name), "init": init}, result_types=[type])

    def verify_(self) -> None:
        if isinstance(self.init, DenseIntOrFPElementsAttr):
            n = int(np.prod(self.init.get_shape() or (1,)))
            if n != 1 and tuple(self.init.get_shape()) != shape_of(self.result.type):
                raise VerifyException(
                    f"dense initializer shape {tuple(self.init.get_shape())} does not match "
                    f"result shape {shape_of(self.result.type)}"
                )


class _Binary(GraphOp):
    DTYPES: ClassVar[str] = "numeric"  # the element types accepted (see `_DTYPE_CLASSES`)
    lhs = operand_def(DeviceTensor)
    rhs = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def __init__(self, lhs, rhs, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        a, b, r = self.lhs.type, self.rhs.type, self.result.type
        if not (a.element_type == b.element_type == r.element_type):
            raise VerifyException(f"{self.name}: element types differ ({a}, {b}, {r})")
        check_dtype(self.name, a.element_type, self.DTYPES)
        want = broadcast_shape(shape_of(a), shape_of(b))
        if want is None:
            raise VerifyException(f"{self.name}: shapes {shape_of(a)} and {shape_of(b)} do not broadcast")
        if want != shape_of(r):
            raise VerifyException(f"{self.name}: result shape {shape_of(r)}, expected {want}")


@irdl_op_definition
class AddOp(_Binary):
    name = "graph.add"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.add(a, b)


@irdl_op_definition
class SubOp(_Binary):
    name = "graph.sub"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.subtract(a, b)


@irdl_op_definition
class MulOp(_Binary):
    name = "graph.mul"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.multiply(a, b)


@irdl_op_definition
class MaxOp(_Binary):
    name = "graph.max"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.maximum(a, b)


@irdl_op_definition
class MinOp(_Binary):
    name = "graph.min"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.minimum(a, b)


@irdl_op_definition
class DivOp(_Binary):
    """lhs / rhs (IEEE: x / 0 is +-inf, 0 / 0 NaN); on i32 truncated toward zero (ONNX integer
    Div), x / 0 = 0 (undefined in ONNX; NumPy's value)."""

    name = "graph.div"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind in "iu":
            a64, b64 = np.broadcast_arrays(a.astype(np.int64), b.astype(np.int64))
            q = np.trunc(a64 / np.where(b64 == 0, 1, b64).astype(np.float64)).astype(np.int64)
            return np.where(b64 == 0, 0, q).astype(np.int32)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(a, b)


@irdl_op_definition
class PowOp(_Binary):
    """lhs ** rhs (NaN for a negative base and a non-integer exponent, as C's pow)."""

    name = "graph.pow"
    DTYPES: ClassVar[str] = "float"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.power(a, b)


class _OneToOne(GraphOp):
    """One tensor in, one out; subclasses add attributes and the verifier."""

    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input, result_type: Attribute | None = None):
        super().__init__(operands=[input], result_types=[result_type or input.type])


class _Unary(_OneToOne):
    def verify_(self) -> None:
        if self.input.type != self.result.type:
            raise VerifyException(f"{self.name}: result type must equal input type")


class ElementwiseUnaryOp(_Unary):
    DTYPES: ClassVar[str] = "float"  # the element types accepted (see `_DTYPE_CLASSES`)
    input = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)

    def verify_(self) -> None:
        super().verify_()
        check_dtype(self.name, self.input.type.element_type, self.DTYPES)

    """y = f(x) elementwise: `reference` is f; `kernel()` names the `ipu.abi.kernels` kernel (and
    `plan.unary` kind) it lowers to. The builder and the ONNX importer derive their unary ops
    from `ELEMENTWISE_UNARY_OPS`, plan-ops/map-tiles/lower-to-tasm handle them through `kernel()`."""

    def kernel(self) -> str:
        """The kernel computing this op on each tile's block."""
        raise NotImplementedError(f"{self.name} names no kernel")


@irdl_op_definition
class GeluOp(ElementwiseUnaryOp):
    """GeLU: the tanh approximation (default), or exact, 0.5 x (1 + erf(x / sqrt 2)), with
    `{approximate = "none"}` (the attribute's name and values follow ONNX and PyTorch)."""

    name = "graph.gelu"
    approximate = opt_attr_def(StringAttr)

    def verify_(self) -> None:
        super().verify_()
        if self.approximate is not None and self.approximate.data not in ("tanh", "none"):
            raise VerifyException(f'graph.gelu: approximate must be "tanh" or "none", not "{self.approximate.data}"')

    @property
    def exact(self) -> bool:
        return self.approximate is not None and self.approximate.data == "none"

    def kernel(self) -> str:
        return "gelu_erf" if self.exact else "gelu"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return gelu_exact(x) if self.exact else gelu(x)


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """max(x, 0)."""

    name = "graph.relu"

    def kernel(self) -> str:
        return "relu"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, np.float32(0.0))


@irdl_op_definition
class MatmulOp(GraphOp):
    """`[m,k] x [k,n] -> [m,n]` (optionally transposed operands), fp32 accumulation."""

    name = "graph.matmul"
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    transpose_lhs = opt_attr_def(UnitAttr)
    transpose_rhs = opt_attr_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def __init__(self, lhs, rhs, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def flags(self) -> tuple[bool, bool]:
        return (self.transpose_lhs is not None, self.transpose_rhs is not None)

    def verify_(self) -> None:
        a, b, r = shape_of(self.lhs.type), shape_of(self.rhs.type), shape_of(self.result.type)
        if len(a) != 2 or len(b) != 2 or len(r) != 2:
            raise VerifyException(f"graph.matmul: operands must be rank 2, got {a} and {b}")
        ta, tb = self.flags()
        m, k = (a[1], a[0]) if ta else a
        k2, n = (b[1], b[0]) if tb else b
        if k != k2:
            raise VerifyException(f"graph.matmul: contraction sizes differ ({k} vs {k2})")
        if r != (m, n):
            raise VerifyException(f"graph.matmul: result shape {r}, expected {(m, n)}")
        if not (self.lhs.type.element_type == self.rhs.type.element_type == self.result.type.element_type):
            raise VerifyException("graph.matmul: element types differ")

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ta, tb = self.flags()
        return np.matmul(a.T if ta else a, b.T if tb else b)


@irdl_op_definition
class BatchMatmulOp(GraphOp):
    """`[b,m,k] x [b,k,n] -> [b,m,n]`: one independent matmul per batch, fp32 accumulation.

    The importer's form of a batched ONNX MatMul (attention's `q k^T` and `p v` per head), so
    `raise-graph-ops` can read the attention chain on graph IR; `unroll-batch-matmul` turns what
    is left into one `graph.matmul` per batch before planning."""

    name = "graph.batch_matmul"
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def __init__(self, lhs, rhs, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        a, b, r = shape_of(self.lhs.type), shape_of(self.rhs.type), shape_of(self.result.type)
        if len(a) != 3 or len(b) != 3:
            raise VerifyException(f"graph.batch_matmul: operands must be rank 3 [batch, rows, cols], got {a} and {b}")
        if a[0] != b[0]:
            raise VerifyException(f"graph.batch_matmul: batch counts differ ({a[0]} vs {b[0]})")
        if a[2] != b[1]:
            raise VerifyException(f"graph.batch_matmul: contraction sizes differ ({a[2]} vs {b[1]})")
        if r != (a[0], a[1], b[2]):
            raise VerifyException(f"graph.batch_matmul: result shape {r}, expected {(a[0], a[1], b[2])}")
        if not (self.lhs.type.element_type == self.rhs.type.element_type == self.result.type.element_type):
            raise VerifyException("graph.batch_matmul: element types differ")

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.matmul(a, b)


@irdl_op_definition
class ConvOp(GraphOp):
    """A 2-D convolution, channels last: input [N, H, W, C], filters [KH, KW, C / groups, O]
    (HWIO), result [N, OH, OW, O], with fp32 accumulation. `pads` are (top, left, bottom,
    right) zeros around the input; OH = (H + top + bottom - dh (KH - 1) - 1) // sh + 1, and
    likewise OW. `groups` splits C and O into that many independent convolutions (C = O =
    groups is depthwise). A 1-D convolution is a 2-D one with H = KH = 1.

    `graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
    pads = array<i64: 1, 1, 1, 1>, groups = 1 : i64} : (tensor<1x8x8x16xf16>,
    tensor<3x3x16x32xf16>) -> tensor<1x8x8x32xf16>`"""

    name = "graph.conv"
    input = operand_def(FloatTensor)
    filters = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    strides = attr_def(DenseArrayBase)
    dilations = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    groups = attr_def(IntegerAttr)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $filters attr-dict `:` `(` type($input) `,` type($filters) `)` `->` type($result)"

    def __init__(
        self,
        input,
        filters,
        result_type: Attribute,
        strides: Sequence[int] = (1, 1),
        dilations: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        groups: int = 1,
    ):
        super().__init__(
            operands=[input, filters],
            result_types=[result_type],
            attributes={
                "strides": DenseArrayBase.from_list(i64, strides),
                "dilations": DenseArrayBase.from_list(i64, dilations),
                "pads": DenseArrayBase.from_list(i64, pads),
                "groups": IntegerAttr(groups, 64),
            },
        )

    def geometry(self) -> ConvGeometry:
        n, h, w, c = shape_of(self.input.type)
        kh, kw, _, o = shape_of(self.filters.type)
        return ConvGeometry(
            n, h, w, c, kh, kw, o,
            tuple(self.strides.get_values()),  # type: ignore[arg-type]
            tuple(self.dilations.get_values()),  # type: ignore[arg-type]
            tuple(self.pads.get_values()),  # type: ignore[arg-type]
            self.groups.value.data,
        )  # fmt: skip

    def verify_(self) -> None:
        x, f, r = shape_of(self.input.type), shape_of(self.filters.type), shape_of(self.result.type)
        if len(x) != 4 or len(f) != 4 or len(r) != 4:
            raise VerifyException(
                f"graph.conv: input, filters and result must be rank 4 (NHWC, HWIO), got {x}, {f}, {r}"
            )
        if not (self.input.type.element_type == self.filters.type.element_type == self.result.type.element_type):
            raise VerifyException("graph.conv: element types differ")
        st, dl, pd = (tuple(a.get_values()) for a in (self.strides, self.dilations, self.pads))
        if len(st) != 2 or len(dl) != 2 or len(pd) != 4:
            raise VerifyException("graph.conv: strides and dilations take 2 values, pads 4 (top, left, bottom, right)")
        if min(st) < 1 or min(dl) < 1 or min(pd) < 0 or max(st + dl + pd) > 2**20:
            raise VerifyException(
                f"graph.conv: strides {st} and dilations {dl} must lie in [1, 2^20], pads {pd} in [0, 2^20]"
            )
        g = self.groups.value.data
        if g < 1 or x[3] % g or f[3] % g or f[2] * g != x[3]:
            raise VerifyException(
                f"graph.conv: {g} groups of input channels {x[3]} and output channels {f[3]}: the filters' "
                f"input channels {f[2]} must be {x[3]} / {g}"
            )
        geo = self.geometry()
        if geo.out_h < 1 or geo.out_w < 1:
            raise VerifyException(f"graph.conv: the {f[0]}x{f[1]} kernel does not fit the padded {x[1]}x{x[2]} input")
        if r != (x[0], geo.out_h, geo.out_w, f[3]):
            raise VerifyException(f"graph.conv: result shape {r}, expected {(x[0], geo.out_h, geo.out_w, f[3])}")

    def reference(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return conv_reference(x, w, self.geometry())


@dataclass(frozen=True)
class ConvGeometry:
    """A `graph.conv`'s sizes: NHWC input, KH x KW kernel to O channels, and its attributes."""

    n: int
    h: int
    w: int
    c: int
    kh: int
    kw: int
    o: int
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pads: tuple[int, int, int, int]
    groups: int
    out: tuple[int, int] | None = None  # pooling in ceil mode: the result's OH, OW (else the floor)

    @property
    def out_h(self) -> int:
        if self.out is not None:
            return self.out[0]
        return (self.h + self.pads[0] + self.pads[2] - self.dilations[0] * (self.kh - 1) - 1) // self.strides[0] + 1

    @property
    def out_w(self) -> int:
        if self.out is not None:
            return self.out[1]
        return (self.w + self.pads[1] + self.pads[3] - self.dilations[1] * (self.kw - 1) - 1) // self.strides[1] + 1

    def counts(self, include_pad: bool) -> np.ndarray:
        """[OH, OW]: the input elements under each window (`include_pad`: the padded extent's),
        an average pool's divisors."""
        (t, left, b, r), (sh, sw), (dh, dw) = self.pads, self.strides, self.dilations

        def taps(out: int, stride: int, k: int, dil: int, lo: int, hi: int) -> np.ndarray:
            at = (np.arange(out) * stride)[:, None] + np.arange(k)[None, :] * dil  # each tap's row
            return ((at >= lo) & (at < hi)).sum(axis=1)

        if include_pad:
            ch = taps(self.out_h, sh, self.kh, dh, 0, self.h + t + b)
            cw = taps(self.out_w, sw, self.kw, dw, 0, self.w + left + r)
        else:
            ch = taps(self.out_h, sh, self.kh, dh, t, t + self.h)
            cw = taps(self.out_w, sw, self.kw, dw, left, left + self.w)
        return np.outer(ch, cw)

    def window(self, i: int, j: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """Kernel position (i, j)'s rows and columns of the padded input: (start, stop, step) each."""
        (sh, sw), (dh, dw) = self.strides, self.dilations
        r0, c0 = i * dh, j * dw
        return (r0, r0 + sh * (self.out_h - 1) + 1, sh), (c0, c0 + sw * (self.out_w - 1) + 1, sw)

    @property
    def byte_steps(self) -> bool:
        """Strides and dilations below 256: a byte each in the conv kernels' call (and no
        pooling ceil mode): what a planned convolution needs of its window."""
        return max(self.strides + self.dilations) < 256 and self.out is None

    @property
    def on_amp(self) -> bool:
        """Whether the conv plan family takes it as it is: one group of at least 16 input channels
        (an even count) and strides and dilations below 256, which the AMP contracts at every
        kernel position. Fewer channels fold the
        kernel positions into the contraction and grouped filters expand: `expand-windows`."""
        return self.groups == 1 and self.c >= 16 and self.c % 2 == 0 and self.byte_steps

    @property
    def depthwise(self) -> bool:
        """One filter per channel (groups = C = O > 1, strides and dilations below 256): the
        conv family's vector-path kernel (`dw_conv`) takes it."""
        return self.groups == self.c == self.o > 1 and self.byte_steps

    @property
    def planned(self) -> bool:
        """Whether the conv plan family takes it as it is (on the AMP or, depthwise, on the
        vector path); `expand-windows` rewrites the rest."""
        return self.on_amp or self.depthwise

    @property
    def macs(self) -> int:
        return self.n * self.out_h * self.out_w * self.o * self.kh * self.kw * (self.c // self.groups)


POOL_KINDS = ("max", "avg")


@irdl_op_definition
class PoolOp(GraphOp):
    """Max or average pooling, channels last: [N, H, W, C] -> [N, OH, OW, C] over a KH x KW
    window (`kernel`) with `strides`, `dilations` and `pads` (top, left, bottom, right). Padding
    never wins a max; an average divides by the input elements under the window's taps, or with
    `count_include_pad` by the taps inside the padded extent. The result's OH, OW may exceed
    the floor by one window (ceil mode) while that window starts inside the input or its pads.

    `graph.pool %x {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
    dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x16xf16> ->
    tensor<1x4x4x16xf16>`"""

    name = "graph.pool"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    kind = attr_def(StringAttr)
    kernel = attr_def(DenseArrayBase)
    strides = attr_def(DenseArrayBase)
    dilations = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    count_include_pad = opt_attr_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self,
        input,
        kind: str,
        kernel: Sequence[int],
        result_type: Attribute,
        strides: Sequence[int] = (1, 1),
        dilations: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        count_include_pad: bool = False,
    ):
        attrs: dict[str, Attribute] = {
            "kind": StringAttr(kind),
            "kernel": DenseArrayBase.from_list(i64, kernel),
            "strides": DenseArrayBase.from_list(i64, strides),
            "dilations": DenseArrayBase.from_list(i64, dilations),
            "pads": DenseArrayBase.from_list(i64, pads),
        }
        if count_include_pad:
            attrs["count_include_pad"] = UnitAttr()
        super().__init__(operands=[input], result_types=[result_type], attributes=attrs)

    def geometry(self) -> ConvGeometry:
        n, h, w, c = shape_of(self.input.type)
        kh, kw = self.kernel.get_values()
        r = shape_of(self.result.type)
        return ConvGeometry(
            n, h, w, c, kh, kw, c,
            tuple(self.strides.get_values()),  # type: ignore[arg-type]
            tuple(self.dilations.get_values()),  # type: ignore[arg-type]
            tuple(self.pads.get_values()),  # type: ignore[arg-type]
            c, (r[1], r[2]) if len(r) == 4 else None,
        )  # fmt: skip

    def verify_(self) -> None:
        x, r = shape_of(self.input.type), shape_of(self.result.type)
        if len(x) != 4 or len(r) != 4:
            raise VerifyException(f"graph.pool: input and result must be rank 4 (NHWC), got {x} and {r}")
        if self.input.type.element_type != self.result.type.element_type:
            raise VerifyException("graph.pool: element types differ")
        if self.kind.data not in POOL_KINDS:
            raise VerifyException(f"graph.pool: kind {self.kind.data!r} is not one of {', '.join(POOL_KINDS)}")
        k, st, dl, pd = (tuple(a.get_values()) for a in (self.kernel, self.strides, self.dilations, self.pads))
        if len(k) != 2 or len(st) != 2 or len(dl) != 2 or len(pd) != 4:
            raise VerifyException("graph.pool: kernel, strides and dilations take 2 values, pads 4")
        if min(k + st + dl) < 1 or min(pd) < 0 or max(k + st + dl + pd) > 2**20:
            raise VerifyException(
                f"graph.pool: kernel {k}, strides {st}, dilations {dl} must lie in [1, 2^20], pads {pd} in [0, 2^20]"
            )
        if pd[0] >= k[0] * dl[0] or pd[2] >= k[0] * dl[0] or pd[1] >= k[1] * dl[1] or pd[3] >= k[1] * dl[1]:
            raise VerifyException(f"graph.pool: pads {pd} as large as the window: a window of padding only")
        floor = ConvGeometry(x[0], x[1], x[2], x[3], k[0], k[1], x[3], st, dl, pd, x[3])  # type: ignore[arg-type]
        fh, fw = floor.out_h, floor.out_w
        if fh < 1 or fw < 1:
            raise VerifyException(f"graph.pool: the {k[0]}x{k[1]} window does not fit the padded {x[1]}x{x[2]} input")
        ok_h = r[1] == fh or (r[1] == fh + 1 and (r[1] - 1) * st[0] < x[1] + pd[0])
        ok_w = r[2] == fw or (r[2] == fw + 1 and (r[2] - 1) * st[1] < x[2] + pd[1])
        if r[0] != x[0] or r[3] != x[3] or not (ok_h and ok_w):
            raise VerifyException(
                f"graph.pool: result shape {r}, expected {(x[0], fh, fw, x[3])} (or one more window along an axis "
                "whose last window starts inside the input or its leading pad)"
            )

    def reference(self, x: np.ndarray) -> np.ndarray:
        return pool_reference(x, self.kind.data, self.geometry(), self.count_include_pad is not None)


def pool_reference(x: np.ndarray, kind: str, geo: ConvGeometry, include_pad: bool) -> np.ndarray:
    """`graph.pool` in float32, one window position at a time (padding -inf for max, 0 for avg)."""
    t, left = geo.pads[0], geo.pads[1]
    (sh, sw), (dh, dw) = geo.strides, geo.dilations
    hp = max(geo.h + t + geo.pads[2], (geo.out_h - 1) * sh + (geo.kh - 1) * dh + 1)
    wp = max(geo.w + left + geo.pads[3], (geo.out_w - 1) * sw + (geo.kw - 1) * dw + 1)
    fill = -np.inf if kind == "max" else 0.0
    xp = np.full((geo.n, hp, wp, geo.c), fill, np.float64)
    xp[:, t : t + geo.h, left : left + geo.w, :] = x
    out = np.full((geo.n, geo.out_h, geo.out_w, geo.c), fill, np.float64)
    for i in range(geo.kh):
        for j in range(geo.kw):
            (r0, r1, rs), (c0, c1, cs) = geo.window(i, j)
            patch = xp[:, r0:r1:rs, c0:c1:cs, :]
            out = np.maximum(out, patch) if kind == "max" else out + patch
    if kind == "avg":
        out = out / geo.counts(include_pad)[None, :, :, None]
    return out.astype(np.float32)


def conv_reference(x: np.ndarray, w: np.ndarray, geo: ConvGeometry) -> np.ndarray:
    """`graph.conv` in float32 (float64 sums rounded once), one kernel position at a time."""
    t, left, b, r = geo.pads
    xp = np.pad(x.astype(np.float64), ((0, 0), (t, b), (left, r), (0, 0)))
    g, cg, og = geo.groups, geo.c // geo.groups, geo.o // geo.groups
    out = np.zeros((geo.n, geo.out_h, geo.out_w, geo.o), np.float64)
    for i in range(geo.kh):
        for j in range(geo.kw):
            (r0, r1, rs), (c0, c1, cs) = geo.window(i, j)
            patch = xp[:, r0:r1:rs, c0:c1:cs, :]
            for k in range(g):
                out[..., k * og : (k + 1) * og] += patch[..., k * cg : (k + 1) * cg] @ w[i, j, :, k * og : (k + 1) * og]
    return out.astype(np.float32)


@irdl_op_definition
class TransposeOp(_OneToOne):
    """Permute axes: `graph.transpose %x {perm = array<i64: 1, 0>}`."""

    name = "graph.transpose"
    input = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)
    perm = attr_def(DenseArrayBase)

    def __init__(self, input, perm: Sequence[int], result_type: Attribute):
        IRDLOperation.__init__(
            self,
            operands=[input],
            result_types=[result_type],
            attributes={"perm": DenseArrayBase.from_list(i64, perm)},
        )

    def verify_(self) -> None:
        p = tuple(self.perm.get_values())
        s = shape_of(self.input.type)
        if sorted(p) != list(range(len(s))):
            raise VerifyException(f"graph.transpose: perm {list(p)} is not a permutation of rank {len(s)}")
        if tuple(s[i] for i in p) != shape_of(self.result.type):
            raise VerifyException(f"graph.transpose: result shape {shape_of(self.result.type)} does not match perm")

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.transpose(x, tuple(self.perm.get_values()))


@irdl_op_definition
class ReshapeOp(_OneToOne):
    """Row-major reshape to a shape with the same number of elements."""

    name = "graph.reshape"
    input = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)

    def verify_(self) -> None:
        a, r = shape_of(self.input.type), shape_of(self.result.type)
        if int(np.prod(a)) != int(np.prod(r)):
            raise VerifyException(f"graph.reshape: {a} and {r} hold different element counts")
        if self.input.type.element_type != self.result.type.element_type:
            raise VerifyException("graph.reshape: element types differ")

    def reference(self, x: np.ndarray) -> np.ndarray:
        return x.reshape(shape_of(self.result.type))


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """e^x."""

    name = "graph.exp"

    def kernel(self) -> str:
        return "exp"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.exp(x)


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """tanh x."""

    name = "graph.tanh"

    def kernel(self) -> str:
        return "tanh"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x)


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """1 / (1 + exp(-x))."""

    name = "graph.sigmoid"

    def kernel(self) -> str:
        return "sigmoid"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):  # exp(-x) = inf for x < -88 gives exactly 0
            return np.float32(1) / (np.float32(1) + np.exp(-x))


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """sqrt x (NaN below 0)."""

    name = "graph.sqrt"

    def kernel(self) -> str:
        return "sqrt"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.sqrt(x)


@irdl_op_definition
class RsqrtOp(ElementwiseUnaryOp):
    """1 / sqrt x, rounded twice as ONNX `Reciprocal(Sqrt(x))` is (inf at 0, NaN below 0)."""

    name = "graph.rsqrt"

    def kernel(self) -> str:
        return "rsqrt"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.float32(1) / np.sqrt(x)


@irdl_op_definition
class ReciprocalOp(ElementwiseUnaryOp):
    """1 / x (inf at 0)."""

    name = "graph.reciprocal"

    def kernel(self) -> str:
        return "reciprocal"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.float32(1) / x


@irdl_op_definition
class NegOp(ElementwiseUnaryOp):
    """-x."""

    name = "graph.neg"
    DTYPES: ClassVar[str] = "numeric"

    def kernel(self) -> str:
        return "neg"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.negative(x)


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """|x|."""

    name = "graph.abs"
    DTYPES: ClassVar[str] = "numeric"

    def kernel(self) -> str:
        return "abs"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.abs(x)


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """The error function, 2 / sqrt(pi) * integral_0^x exp(-t^2) dt."""

    name = "graph.erf"

    def kernel(self) -> str:
        return "erf"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return _ERF(x.astype(np.float64)).astype(np.float32)  # the C library's erf, rounded to fp32


@irdl_op_definition
class SinOp(ElementwiseUnaryOp):
    """sin x."""

    name = "graph.sin"

    def kernel(self) -> str:
        return "sin"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):  # sin(+-inf) is NaN
            return np.sin(x)


@irdl_op_definition
class CosOp(ElementwiseUnaryOp):
    """cos x."""

    name = "graph.cos"

    def kernel(self) -> str:
        return "cos"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):  # cos(+-inf) is NaN
            return np.cos(x)


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """The natural logarithm (-inf at 0, NaN below 0)."""

    name = "graph.log"

    def kernel(self) -> str:
        return "log"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.log(x)


@irdl_op_definition
class SiluOp(ElementwiseUnaryOp):
    """SiLU (swish), x * sigmoid(x) = x / (1 + exp(-x))."""

    name = "graph.silu"

    def kernel(self) -> str:
        return "silu"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):  # x < -88: x * 0 = -0; -inf * 0 is NaN
            return x * (np.float32(1) / (np.float32(1) + np.exp(-x)))


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """The largest integer not above x."""

    name = "graph.floor"

    def kernel(self) -> str:
        return "floor"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.floor(x)


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """The smallest integer not below x."""

    name = "graph.ceil"

    def kernel(self) -> str:
        return "ceil"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.ceil(x)


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """x rounded to the nearest integer, halves to even (as ONNX Round)."""

    name = "graph.round"

    def kernel(self) -> str:
        return "round"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.round(x)


@irdl_op_definition
class SignOp(ElementwiseUnaryOp):
    """-1, 0 or 1 by the sign of x (NaN stays NaN)."""

    name = "graph.sign"

    def kernel(self) -> str:
        return "sign"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.sign(x)


@irdl_op_definition
class TanOp(ElementwiseUnaryOp):
    """tan x."""

    name = "graph.tan"

    def kernel(self) -> str:
        return "tan"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.tan(x)


@irdl_op_definition
class SinhOp(ElementwiseUnaryOp):
    """sinh x."""

    name = "graph.sinh"

    def kernel(self) -> str:
        return "sinh"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.sinh(x)


@irdl_op_definition
class CoshOp(ElementwiseUnaryOp):
    """cosh x."""

    name = "graph.cosh"

    def kernel(self) -> str:
        return "cosh"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.cosh(x)


@irdl_op_definition
class AsinOp(ElementwiseUnaryOp):
    """arcsin x (NaN outside [-1, 1])."""

    name = "graph.asin"

    def kernel(self) -> str:
        return "asin"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.arcsin(x)


@irdl_op_definition
class AcosOp(ElementwiseUnaryOp):
    """arccos x (NaN outside [-1, 1])."""

    name = "graph.acos"

    def kernel(self) -> str:
        return "acos"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.arccos(x)


@irdl_op_definition
class AtanOp(ElementwiseUnaryOp):
    """arctan x."""

    name = "graph.atan"

    def kernel(self) -> str:
        return "atan"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.arctan(x)


@irdl_op_definition
class AsinhOp(ElementwiseUnaryOp):
    """arsinh x."""

    name = "graph.asinh"

    def kernel(self) -> str:
        return "asinh"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.arcsinh(x)


@irdl_op_definition
class AcoshOp(ElementwiseUnaryOp):
    """arcosh x (NaN below 1)."""

    name = "graph.acosh"

    def kernel(self) -> str:
        return "acosh"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.arccosh(x)


@irdl_op_definition
class AtanhOp(ElementwiseUnaryOp):
    """artanh x (+-inf at +-1, NaN outside)."""

    name = "graph.atanh"

    def kernel(self) -> str:
        return "atanh"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.arctanh(x)


@irdl_op_definition
class SoftplusOp(ElementwiseUnaryOp):
    """log(1 + exp(x)), without overflow for large x."""

    name = "graph.softplus"

    def kernel(self) -> str:
        return "softplus"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.logaddexp(np.float32(0), x)


@irdl_op_definition
class SoftsignOp(ElementwiseUnaryOp):
    """x / (1 + |x|)."""

    name = "graph.softsign"

    def kernel(self) -> str:
        return "softsign"

    def reference(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):  # inf / inf is NaN, as in onnxruntime
            return x / (np.float32(1) + np.abs(x))


@irdl_op_definition
class CastOp(_OneToOne):
    """Change element type, ONNX Cast's rules: between f16 and f32 round to nearest even; float
    to i32 truncates toward zero (NaN and values beyond i32 are undefined, as in ONNX); to i1 is
    x != 0 (NaN is true); from i1 gives 0 or 1. To its own type it is a copy (an output that is
    an input or a weight unchanged gets a buffer of its own)."""

    name = "graph.cast"
    input = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)

    def verify_(self) -> None:
        if shape_of(self.input.type) != shape_of(self.result.type):
            raise VerifyException("graph.cast: shapes differ")
        check_dtype(self.name, self.input.type.element_type, "any")
        check_dtype(self.name, self.result.type.element_type, "any")

    def reference(self, x: np.ndarray) -> np.ndarray:
        if is_bool_type(self.result.type.element_type):
            return x != 0
        if is_index_type(self.result.type.element_type) and x.dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                return np.trunc(x).astype(np.int32)
        return x  # the evaluator rounds to the result's element type


def _axis(op: IRDLOperation, rank: int) -> int:
    a = op.attributes.get("axis")
    ax = a.value.data if isinstance(a, IntegerAttr) else -1
    if not -rank <= ax < rank:
        raise VerifyException(f"{op.name}: axis {ax} out of range for rank {rank}")
    return ax % rank


@irdl_op_definition
class SoftmaxOp(_Unary):
    """Numerically stable softmax along `axis` (default -1)."""

    name = "graph.softmax"
    axis = opt_attr_def(IntegerAttr)

    def verify_(self) -> None:
        super().verify_()
        _axis(self, len(shape_of(self.input.type)))

    def axis_index(self) -> int:
        return _axis(self, len(shape_of(self.input.type)))

    def reference(self, x: np.ndarray) -> np.ndarray:
        return softmax(x, self.axis_index())


@irdl_op_definition
class CumSumOp(_Unary):
    """The running sum along the last axis: y[..., j] = x[..., 0] + … + x[..., j]. `exclusive`
    leaves x[..., j] itself out (y[..., 0] = 0), `reverse` sums from the last element (ONNX
    CumSum's attributes; another axis is moved last by a transpose). Floats accumulate in
    float32; i32 wraps as the device's integer adds do."""

    name = "graph.cumsum"
    input = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)
    exclusive = opt_attr_def(UnitAttr)
    reverse = opt_attr_def(UnitAttr)

    def verify_(self) -> None:
        super().verify_()
        check_dtype(self.name, self.input.type.element_type, "numeric")

    def reference(self, x: np.ndarray) -> np.ndarray:
        return cumsum(x, self.exclusive is not None, self.reverse is not None)


def cumsum(x: np.ndarray, exclusive: bool = False, reverse: bool = False) -> np.ndarray:
    """The running sum along the last axis (see `CumSumOp`): float32 for floats, wrapping int32."""
    acc = np.int32 if x.dtype.kind in "iu" else np.float32
    v = x.astype(acc)
    if reverse:
        v = v[..., ::-1]
    with np.errstate(over="ignore"):
        y = np.cumsum(v, axis=-1, dtype=acc)
    if exclusive:
        y = np.concatenate([np.zeros_like(y[..., :1]), y[..., :-1]], axis=-1)
    return y[..., ::-1] if reverse else y


REDUCE_KINDS = ("sum", "max", "mean", "prod")


@irdl_op_definition
class ReduceOp(_OneToOne):
    """Reduce one axis (`kind` = sum | max | mean | prod); the axis is removed from the result."""

    name = "graph.reduce"
    kind = attr_def(StringAttr)
    axis = attr_def(IntegerAttr)

    def axis_index(self) -> int:
        return _axis(self, len(shape_of(self.input.type)))

    def verify_(self) -> None:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(f"graph.reduce: kind must be one of {REDUCE_KINDS}")
        s = list(shape_of(self.input.type))
        del s[self.axis_index()]
        if tuple(s) != shape_of(self.result.type):
            raise VerifyException(f"graph.reduce: result shape {shape_of(self.result.type)}, expected {tuple(s)}")
        if self.input.type.element_type != self.result.type.element_type:
            raise VerifyException("graph.reduce: element types differ")

    def reference(self, x: np.ndarray) -> np.ndarray:
        kind, ax = self.kind.data, self.axis_index()
        if kind == "sum":
            return np.sum(x, axis=ax, dtype=np.float32)
        if kind == "max":
            return np.max(x, axis=ax)
        if kind == "prod":
            return np.prod(x, axis=ax, dtype=np.float32)
        return np.mean(x, axis=ax, dtype=np.float32)


class _Norm(GraphOp):
    """Shared verifier; operands are declared by each subclass so their order is input first."""

    def eps(self) -> float:
        return self.epsilon.value.data if self.epsilon is not None else 1e-5

    def verify_(self) -> None:
        s = shape_of(self.input.type)
        if self.result.type != self.input.type:
            raise VerifyException(f"{self.name}: result type must equal input type")
        for v in [self.gamma, *([self.beta] if isinstance(self, LayerNormOp) else [])]:
            if shape_of(v.type) != s[-1:]:
                raise VerifyException(f"{self.name}: scale/shift must have shape {s[-1:]}, got {shape_of(v.type)}")
            if v.type.element_type != self.input.type.element_type:  # the kernels read them at the input's type
                raise VerifyException(
                    f"{self.name}: scale/shift element type {v.type.element_type} differs from the input's "
                    f"{self.input.type.element_type} (cast them first)"
                )


@irdl_op_definition
class LayerNormOp(_Norm):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta over the last axis."""

    name = "graph.layer_norm"
    input = operand_def(FloatTensor)
    gamma = operand_def(FloatTensor)
    beta = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    epsilon = opt_attr_def(FloatAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $gamma `,` $beta attr-dict `:` `(` type($input) `,` type($gamma) `,` type($beta) `)` "
        "`->` type($result)"
    )

    def reference(self, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
        mean = np.mean(x, axis=-1, keepdims=True, dtype=np.float32)
        var = np.mean(np.square(x - mean), axis=-1, keepdims=True, dtype=np.float32)
        return (x - mean) / np.sqrt(var + np.float32(self.eps())) * gamma + beta


@irdl_op_definition
class RmsNormOp(_Norm):
    """x / sqrt(mean(x^2) + epsilon) * gamma over the last axis."""

    name = "graph.rms_norm"
    input = operand_def(FloatTensor)
    gamma = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    epsilon = opt_attr_def(FloatAttr)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $gamma attr-dict `:` `(` type($input) `,` type($gamma) `)` `->` type($result)"

    def reference(self, x: np.ndarray, gamma: np.ndarray) -> np.ndarray:
        ms = np.mean(np.square(x), axis=-1, keepdims=True, dtype=np.float32)
        return x / np.sqrt(ms + np.float32(self.eps())) * gamma


@irdl_op_definition
class SplitHeadsOp(_OneToOne):
    """[S, H*D] -> [H, S, D]."""

    name = "graph.split_heads"
    heads = attr_def(IntegerAttr)

    def verify_(self) -> None:
        s, r, h = shape_of(self.input.type), shape_of(self.result.type), self.heads.value.data
        if len(s) != 2 or h <= 0 or s[1] % h:
            raise VerifyException(f"graph.split_heads: {h} heads do not divide the columns of {s}")
        if r != (h, s[0], s[1] // h):
            raise VerifyException(f"graph.split_heads: result shape {r}, expected {(h, s[0], s[1] // h)}")

    def reference(self, x: np.ndarray) -> np.ndarray:
        h = self.heads.value.data
        s, c = x.shape
        return x.reshape(s, h, c // h).transpose(1, 0, 2)


@irdl_op_definition
class MergeHeadsOp(_OneToOne):
    """[H, S, D] -> [S, H*D]."""

    name = "graph.merge_heads"

    def verify_(self) -> None:
        s, r = shape_of(self.input.type), shape_of(self.result.type)
        if len(s) != 3 or r != (s[1], s[0] * s[2]):
            raise VerifyException(f"graph.merge_heads: {s} does not merge to {r}")

    def reference(self, x: np.ndarray) -> np.ndarray:
        h, s, d = x.shape
        return x.transpose(1, 0, 2).reshape(s, h * d)


ATTENTION_FORMS = ("materialized", "streamed")


@irdl_op_definition
class AttentionOp(GraphOp):
    """softmax(q k^T * scale [+ bias] [+ causal mask]) v with grouped KV heads.

    q: [Hq, S, D], k and v: [Hkv, Sk, D], Hq a multiple of Hkv (query head h reads KV head
    h // (Hq / Hkv)). `form` = materialized keeps the scores in SRAM; streamed processes keys
    in blocks with an online softmax. The scale defaults to 1/sqrt(D). The optional additive
    `bias` [Hq, S, Sk] (one per head) or [1, S, Sk] (shared by all heads), of q's element type,
    is added to the scaled scores: a learned position bias, or a mask (0 visible, -inf or a
    large negative hidden). A query row whose every key is -inf attends to nothing and is 0.

    `stripes = P` (causal, streamed, no bias): q and the result hold their rows striped, row
    i * (S / P) + j being sequence position j * P + i, so that P query blocks of S / P rows each
    see as many unmasked keys (the planner then skips the key windows a block's rows all
    precede). S is Sk rounded up to a multiple of P: the rows at positions Sk and past are
    padding, and attend to every key.

    `key_stripes = Pk` with `stripes = P` (causal, materialized, no bias): k and v hold their
    rows striped too, row j * (Sk / Pk) + b being key position b * Pk + j (Sk / Pk even), so
    that each of Pk key blocks holds keys from every depth and every (query block, key block)
    tile has about half its scores masked, as a triangle the kernel skips per key group. S is
    then Sk rounded up to a multiple of P x Pk (a query block a multiple of the key blocks).
    """

    name = "graph.attention"
    q = operand_def(FloatTensor)
    k = operand_def(FloatTensor)
    v = operand_def(FloatTensor)
    bias = opt_operand_def(FloatTensor)
    result = result_def(FloatTensor)
    causal = opt_attr_def(UnitAttr)
    form = attr_def(StringAttr)
    scale = opt_attr_def(FloatAttr)
    stripes = opt_attr_def(IntegerAttr)
    key_stripes = opt_attr_def(IntegerAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$q `,` $k `,` $v (`bias` $bias^)? attr-dict `:` `(` type($q) `,` type($k) `,` type($v)"
        " (`,` type($bias)^)? `)` `->` type($result)"
    )

    def scale_value(self) -> float:
        d = shape_of(self.q.type)[2]
        return self.scale.value.data if self.scale is not None else 1.0 / float(np.sqrt(d))

    def verify_(self) -> None:
        q, k, v, r = (shape_of(x.type) for x in (self.q, self.k, self.v, self.result))
        if len(q) != 3 or len(k) != 3 or len(v) != 3:
            raise VerifyException("graph.attention: q, k and v must be rank 3 [heads, seq, head_dim]")
        if k != v:
            raise VerifyException(f"graph.attention: k {k} and v {v} differ")
        if q[0] % k[0]:
            raise VerifyException(f"graph.attention: {q[0]} query heads are not a multiple of {k[0]} KV heads")
        if q[2] != k[2]:
            raise VerifyException(f"graph.attention: head_dim {q[2]} vs {k[2]}")
        if r != q:
            raise VerifyException(f"graph.attention: result shape {r}, expected {q}")
        if self.form.data not in ATTENTION_FORMS:
            raise VerifyException(f"graph.attention: form must be one of {ATTENTION_FORMS}")
        p = self.stripes_value()
        if p is not None:
            self._verify_stripes(p, q[1], k[1])
        elif self.key_stripes is not None:
            raise VerifyException("graph.attention: key_stripes need stripes (the query rows striped too)")
        elif self.causal is not None and q[1] != k[1]:
            raise VerifyException("graph.attention: causal attention needs equal query and key lengths")
        if self.bias is not None:
            b = shape_of(self.bias.type)
            if len(b) != 3 or b[0] not in (1, q[0]) or b[1:] != (q[1], k[1]):
                raise VerifyException(
                    f"graph.attention: bias {b} is not [{q[0]} or 1, {q[1]}, {k[1]}] (per head or shared)"
                )
            if self.bias.type.element_type != self.q.type.element_type:
                raise VerifyException(
                    f"graph.attention: bias element type {self.bias.type.element_type} differs from q's "
                    f"{self.q.type.element_type}"
                )

    def stripes_value(self) -> int | None:
        return self.stripes.value.data if self.stripes is not None else None

    def key_stripes_value(self) -> int | None:
        return self.key_stripes.value.data if self.key_stripes is not None else None

    def _verify_stripes(self, p: int, s: int, sk: int) -> None:
        if p < 2:
            raise VerifyException(f"graph.attention: stripes must be at least 2, got {p}")
        pk = self.key_stripes_value()
        form = "streamed" if pk is None else "materialized"
        if self.causal is None or self.form.data != form or self.bias is not None:
            raise VerifyException(
                f"graph.attention: stripes{'' if pk is None else ' with key_stripes'} need a causal, {form} "
                "attention without bias"
            )
        if pk is not None and (pk < 2 or sk % (2 * pk)):
            raise VerifyException(
                f"graph.attention: key_stripes {pk} must be at least 2 and split {sk} keys into even blocks"
            )
        rows = striped_rows(sk, p * (pk or 1))
        if s != rows:
            raise VerifyException(
                f"graph.attention: with {p} stripes, q must have {rows} rows ({sk} keys rounded up "
                f"to a multiple of {p * (pk or 1)}), not {s}"
            )

    def positions(self) -> np.ndarray | None:
        """Each query row's sequence position, when the rows are striped."""
        p = self.stripes_value()
        return None if p is None else striped_positions(shape_of(self.q.type)[1], p)

    def key_positions(self) -> np.ndarray | None:
        """Each key's sequence position, when the keys are striped."""
        pk = self.key_stripes_value()
        return None if pk is None else striped_positions(shape_of(self.k.type)[1], pk)

    def reference(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
        causal = self.causal is not None
        return attention(q, k, v, self.scale_value(), causal, bias, self.positions(), self.key_positions())


@irdl_op_definition
class GatherOp(GraphOp):
    """Embedding lookup: `graph.gather %table, %ids {axis = 0}` picks rows of a float table
    [V, D] by i32 indices [S] (or [1, S], one batch row) -> [S, D]: NumPy `take` along axis 0.
    Indices are host inputs; each must lie in [0, V) (the host checks them when it loads them)."""

    name = "graph.gather"
    table = operand_def(FloatTensor)
    indices = operand_def(TensorType)
    result = result_def(FloatTensor)
    axis = attr_def(IntegerAttr)
    traits = traits_def(Pure())
    assembly_format = "$table `,` $indices attr-dict `:` `(` type($table) `,` type($indices) `)` `->` type($result)"

    def __init__(self, table, indices, result_type: Attribute):
        super().__init__(operands=[table, indices], result_types=[result_type], attributes={"axis": IntegerAttr(0, 64)})

    @property
    def rows(self) -> int:
        """V, the table's rows: every index must lie in [0, V)."""
        return shape_of(self.table.type)[0]

    def verify_(self) -> None:
        t, i, r = shape_of(self.table.type), shape_of(self.indices.type), shape_of(self.result.type)
        if self.axis.value.data != 0:
            raise VerifyException(
                f"graph.gather: only axis 0 (rows of the table) is supported, got {self.axis.value.data}"
            )
        if len(t) != 2:
            raise VerifyException(f"graph.gather: table must be rank 2 [V, D], got {t}")
        if not is_index_type(self.indices.type.element_type):
            raise VerifyException(f"graph.gather: indices must be i32, got {self.indices.type.element_type}")
        if len(i) not in (1, 2) or len(i) == 2 and i[0] != 1:
            raise VerifyException(f"graph.gather: indices must be [S] or [1, S], got {i}")
        if r != (i[-1], t[1]):
            raise VerifyException(f"graph.gather: result shape {r}, expected {(i[-1], t[1])}")
        if self.table.type.element_type != self.result.type.element_type:
            raise VerifyException("graph.gather: table and result element types differ")

    def reference(self, table: np.ndarray, indices: np.ndarray) -> np.ndarray:
        idx = np.asarray(indices).reshape(-1).astype(np.int64)
        bad = (idx < 0) | (idx >= table.shape[0])
        if bad.any():
            raise ValueError(f"graph.gather: index {int(idx[bad][0])} outside [0, {table.shape[0]})")
        return np.take(table, idx, axis=0)


# --- data movement of computed tensors ---------------------------------------------------------


def _same_rank_and_type(op: IRDLOperation, a: TensorType, r: TensorType) -> tuple[tuple[int, ...], tuple[int, ...]]:
    sa, sr = shape_of(a), shape_of(r)
    if len(sa) != len(sr) or not sa:
        raise VerifyException(f"{op.name}: input {sa} and result {sr} must have one rank (at least 1)")
    if a.element_type != r.element_type:
        raise VerifyException(f"{op.name}: element types differ")
    return sa, sr


@irdl_op_definition
class SliceOp(_OneToOne):
    """The window of `input` that starts at `starts` (one per axis), stride 1, as large as the
    result: `graph.slice %x {starts = array<i64: 0, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>`."""

    name = "graph.slice"
    input = operand_def(DeviceTensor)  # data movement: any element type
    result = result_def(DeviceTensor)
    starts = attr_def(DenseArrayBase)

    def __init__(self, input, starts: Sequence[int], result_type: Attribute):
        IRDLOperation.__init__(
            self,
            operands=[input],
            result_types=[result_type],
            attributes={"starts": DenseArrayBase.from_list(i64, starts)},
        )

    def offsets(self) -> tuple[int, ...]:
        return tuple(self.starts.get_values())

    def verify_(self) -> None:
        a, r = _same_rank_and_type(self, self.input.type, self.result.type)
        st = self.offsets()
        if len(st) != len(a):
            raise VerifyException(f"graph.slice: {len(st)} starts for a rank-{len(a)} input")
        for i, (d, s, n) in enumerate(zip(a, st, r, strict=True)):
            if s < 0 or n < 1 or s + n > d:
                raise VerifyException(f"graph.slice: axis {i}: window [{s}, {s + n}) does not lie in [0, {d})")

    def reference(self, x: np.ndarray) -> np.ndarray:
        r = shape_of(self.result.type)
        return x[tuple(slice(s, s + n) for s, n in zip(self.offsets(), r, strict=True))]


@irdl_op_definition
class PadOp(_OneToOne):
    """`input` placed at offset `low` (one per axis) in a zero tensor the size of the result:
    `graph.pad %x {low = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<4x3xf32>` (constant-zero
    padding; the high pads are what is left of the result)."""

    name = "graph.pad"
    input = operand_def(DeviceTensor)  # data movement: any element type
    result = result_def(DeviceTensor)
    low = attr_def(DenseArrayBase)

    def __init__(self, input, low: Sequence[int], result_type: Attribute):
        IRDLOperation.__init__(
            self, operands=[input], result_types=[result_type], attributes={"low": DenseArrayBase.from_list(i64, low)}
        )

    def offsets(self) -> tuple[int, ...]:
        return tuple(self.low.get_values())

    def verify_(self) -> None:
        a, r = _same_rank_and_type(self, self.input.type, self.result.type)
        lo = self.offsets()
        if len(lo) != len(a):
            raise VerifyException(f"graph.pad: {len(lo)} low pads for a rank-{len(a)} input")
        for i, (d, s, n) in enumerate(zip(a, lo, r, strict=True)):
            if s < 0 or s + d > n:
                raise VerifyException(f"graph.pad: axis {i}: input of {d} at {s} does not fit the result's {n}")

    def reference(self, x: np.ndarray) -> np.ndarray:
        r = shape_of(self.result.type)
        out = np.zeros(r, np.float32)
        out[tuple(slice(s, s + d) for s, d in zip(self.offsets(), x.shape, strict=True))] = x
        return out


@irdl_op_definition
class ConcatOp(GraphOp):
    """Inputs joined along `axis`: `graph.concat %a, %b {axis = 1} : (tensor<2x3xf32>,
    tensor<2x5xf32>) -> tensor<2x8xf32>`."""

    name = "graph.concat"
    inputs = var_operand_def(DeviceTensor)  # data movement: any element type
    result = result_def(DeviceTensor)
    axis = attr_def(IntegerAttr)
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` `(` type($inputs) `)` `->` type($result)"

    def __init__(self, inputs: Sequence, axis: int, result_type: Attribute):
        super().__init__(
            operands=[list(inputs)], result_types=[result_type], attributes={"axis": IntegerAttr(axis, 64)}
        )

    def verify_(self) -> None:
        r = shape_of(self.result.type)
        ax = self.axis.value.data
        if not self.inputs:
            raise VerifyException("graph.concat: no inputs")
        if not 0 <= ax < len(r):
            raise VerifyException(f"graph.concat: axis {ax} out of range for rank {len(r)}")
        total = 0
        for v in self.inputs:
            s = shape_of(v.type)
            if v.type.element_type != self.result.type.element_type:
                raise VerifyException("graph.concat: element types differ")
            if len(s) != len(r) or any(d != e for i, (d, e) in enumerate(zip(s, r, strict=True)) if i != ax):
                raise VerifyException(f"graph.concat: input {s} does not match result {r} off axis {ax}")
            total += s[ax]
        if total != r[ax]:
            raise VerifyException(f"graph.concat: inputs sum to {total} along axis {ax}, result has {r[ax]}")

    def starts(self) -> list[int]:
        """Where each input begins along `axis`."""
        out, at = [], 0
        for v in self.inputs:
            out.append(at)
            at += shape_of(v.type)[self.axis.value.data]
        return out

    def reference(self, *xs: np.ndarray) -> np.ndarray:
        return np.concatenate(xs, axis=self.axis.value.data)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Values carried to the next iteration of `graph.repeat` (and out of the last)."""

    name = "graph.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(RepeatOp)))
    assembly_format = "($values^ `:` type($values))? attr-dict"


ROLLED_ATTR = "rolled"


@irdl_op_definition
class RepeatOp(RepeatBase):
    """N identical iterations of a region with carried values, kept structured.

    `graph.repeat 4 iter(%h = %x) : (tensor<..>) { ... graph.yield %y : tensor<..> }`.
    Parameters declared in the body are shared by all iterations (tied weights); per-iteration
    weights are read through `graph.iteration_slice`. A repeat marked `{rolled}` (ROLLED_ATTR)
    stands for layers the model as given holds unrolled (`roll-layers`): its results are its
    last trip's values, checkpointed in the body, and not checkpointed again.
    """

    name = "graph.repeat"
    inits = var_operand_def(FloatTensor)
    results_ = var_result_def(FloatTensor)
    YIELD_NAME: ClassVar[str] = "graph.yield"


def _one_slice_per_trip(op: IRDLOperation, slices: int) -> None:
    """`op` (an iteration_slice or _store of a stack of `slices`) sits directly in the body of a
    graph.repeat of as many trips."""
    loop = op.parent_op()
    if not isinstance(loop, RepeatOp):
        raise VerifyException(f"{op.name}: must sit directly in the body of a graph.repeat")
    if loop.count.value.data != slices:
        raise VerifyException(
            f"{op.name}: stacks {slices} slices in a graph.repeat of {loop.count.value.data} iterations"
        )


@irdl_op_definition
class IterationSliceOp(GraphOp):
    """This iteration's slice of a stacked tensor: `graph.iteration_slice %w : tensor<12x768x768xf16>
    -> tensor<768x768xf16>` in the body of `graph.repeat 12` is `%w[i]` on trip i. A rolled
    layer reads its own weights through it (`roll-layers` stacks the layers' weights)."""

    name = "graph.iteration_slice"
    input = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        a, r = shape_of(self.input.type), shape_of(self.result.type)
        if a[1:] != r or self.input.type.element_type != self.result.type.element_type:
            raise VerifyException(
                f"graph.iteration_slice: result {self.result.type} is not one slice of {self.input.type}"
            )
        _one_slice_per_trip(self, a[0])

    def reference(self, *inputs: np.ndarray) -> np.ndarray:
        raise NotImplementedError("graph.iteration_slice depends on the iteration (the golden evaluator runs it)")


@irdl_op_definition
class IterationStoreOp(GraphOp):
    """`stacked` with this trip's slice replaced by `value`: `graph.iteration_store %ys, %h :
    tensor<16x2x8xf32>, tensor<2x8xf32> -> tensor<16x2x8xf32>` in the body of `graph.repeat 16`
    writes %h into %ys[i] on trip i. Carried through the repeat, it gathers a value of every trip
    (a recurrent layer's per-step outputs, a scan's outputs)."""

    name = "graph.iteration_store"
    stacked = operand_def(DeviceTensor)
    value = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)
    traits = traits_def(Pure())
    assembly_format = "$stacked `,` $value attr-dict `:` type($stacked) `,` type($value) `->` type($result)"

    def __init__(self, stacked: SSAValue, value: SSAValue):
        super().__init__(operands=[stacked, value], result_types=[stacked.type])

    def verify_(self) -> None:
        a, v = shape_of(self.stacked.type), shape_of(self.value.type)
        if (
            a[1:] != v
            or self.stacked.type.element_type != self.value.type.element_type
            or self.result.type != self.stacked.type
        ):
            raise VerifyException(
                f"graph.iteration_store: {self.value.type} is not one slice of {self.stacked.type} "
                "(and the result has the stacked type)"
            )
        _one_slice_per_trip(self, a[0])

    def reference(self, *inputs: np.ndarray) -> np.ndarray:
        raise NotImplementedError("graph.iteration_store depends on the iteration (the golden evaluator runs it)")


# --- integers and bools ------------------------------------------------------------------------


def _int64(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return tuple(np.broadcast_arrays(a.astype(np.int64), b.astype(np.int64)))  # type: ignore[return-value]


@irdl_op_definition
class ModOp(_Binary):
    """lhs mod rhs with the divisor's sign (Python's, ONNX Mod fmod=0); on i32 x mod 0 = 0
    (undefined in ONNX; NumPy's value)."""

    name = "graph.mod"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind in "iu":
            a64, b64 = _int64(a, b)
            return np.where(b64 == 0, 0, np.mod(a64, np.where(b64 == 0, 1, b64))).astype(np.int32)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.mod(a, b)


@irdl_op_definition
class FmodOp(_Binary):
    """lhs mod rhs with the dividend's sign (C's fmod, ONNX Mod fmod=1); on i32 x mod 0 = 0."""

    name = "graph.fmod"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind in "iu":
            a64, b64 = _int64(a, b)
            return np.where(b64 == 0, 0, np.fmod(a64, np.where(b64 == 0, 1, b64))).astype(np.int32)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b)


@irdl_op_definition
class AndOp(_Binary):
    """Logical and of i1, bitwise and of i32."""

    name = "graph.and"
    DTYPES: ClassVar[str] = "logical"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.bitwise_and(a, b)


@irdl_op_definition
class OrOp(_Binary):
    """Logical or of i1, bitwise or of i32."""

    name = "graph.or"
    DTYPES: ClassVar[str] = "logical"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.bitwise_or(a, b)


@irdl_op_definition
class XorOp(_Binary):
    """Logical xor of i1, bitwise xor of i32."""

    name = "graph.xor"
    DTYPES: ClassVar[str] = "logical"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.bitwise_xor(a, b)


def _shift(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    a64, b64 = _int64(a, b)
    a64 = a64 & 0xFFFFFFFF
    ok = (b64 >= 0) & (b64 < 32)
    amount = np.where(ok, b64, 0)
    r = (a64 << amount) & 0xFFFFFFFF if left else a64 >> amount
    return np.where(ok, r, 0).astype(np.uint32).view(np.int32)


@irdl_op_definition
class ShiftLeftOp(_Binary):
    """lhs << rhs on the 32-bit word (ONNX BitShift LEFT of unsigned values); shifts by 32 or
    more give 0."""

    name = "graph.shift_left"
    DTYPES: ClassVar[str] = "int"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return _shift(a, b, True)


@irdl_op_definition
class ShiftRightOp(_Binary):
    """lhs >> rhs, logical, on the 32-bit word (ONNX BitShift RIGHT of unsigned values)."""

    name = "graph.shift_right"
    DTYPES: ClassVar[str] = "int"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return _shift(a, b, False)


class _Compare(GraphOp):
    """lhs (cmp) rhs -> i1, NumPy-broadcast; NaN compares false (IEEE)."""

    DTYPES: ClassVar[str] = "numeric"
    lhs = operand_def(DeviceTensor)
    rhs = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def __init__(self, lhs, rhs, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        a, b, r = self.lhs.type, self.rhs.type, self.result.type
        if a.element_type != b.element_type:
            raise VerifyException(f"{self.name}: operand element types differ ({a}, {b})")
        check_dtype(self.name, a.element_type, self.DTYPES)
        if not is_bool_type(r.element_type):
            raise VerifyException(f"{self.name}: result element type must be i1, got {r.element_type}")
        want = broadcast_shape(shape_of(a), shape_of(b))
        if want is None:
            raise VerifyException(f"{self.name}: shapes {shape_of(a)} and {shape_of(b)} do not broadcast")
        if want != shape_of(r):
            raise VerifyException(f"{self.name}: result shape {shape_of(r)}, expected {want}")


@irdl_op_definition
class EqualOp(_Compare):
    name = "graph.equal"
    DTYPES: ClassVar[str] = "any"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.equal(a, b)


@irdl_op_definition
class LessOp(_Compare):
    name = "graph.less"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.less(a, b)


@irdl_op_definition
class LessEqualOp(_Compare):
    name = "graph.less_equal"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.less_equal(a, b)


@irdl_op_definition
class GreaterOp(_Compare):
    name = "graph.greater"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.greater(a, b)


@irdl_op_definition
class GreaterEqualOp(_Compare):
    name = "graph.greater_equal"

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.greater_equal(a, b)


COMPARE_OPS: tuple[type[_Compare], ...] = (EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp)


@irdl_op_definition
class NotOp(ElementwiseUnaryOp):
    """Logical not of i1."""

    name = "graph.not"
    DTYPES: ClassVar[str] = "bool"

    def kernel(self) -> str:
        return "not"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.logical_not(x)


@irdl_op_definition
class BitwiseNotOp(ElementwiseUnaryOp):
    """~x of i32."""

    name = "graph.bitwise_not"
    DTYPES: ClassVar[str] = "int"

    def kernel(self) -> str:
        return "bitwise_not"

    def reference(self, x: np.ndarray) -> np.ndarray:
        return np.invert(x)


WRAP_TYPES = ("i8", "u8", "i16", "u16")


@irdl_op_definition
class WrapOp(ElementwiseUnaryOp):
    """An i32 reduced into the range of a narrower integer type (`to` = i8 | u8 | i16 | u16)
    modulo 2^bits: the wrap-around NumPy's narrow integer arithmetic has, applied after each
    op on values of a narrow ONNX type (carried in i32) that can leave its range."""

    name = "graph.wrap"
    DTYPES: ClassVar[str] = "int"
    to = attr_def(StringAttr)

    def __init__(self, input, to: str = "i8"):
        IRDLOperation.__init__(self, operands=[input], result_types=[input.type], attributes={"to": StringAttr(to)})

    def verify_(self) -> None:
        super().verify_()
        if self.to.data not in WRAP_TYPES:
            raise VerifyException(f"graph.wrap: to must be one of {', '.join(WRAP_TYPES)}, not '{self.to.data}'")

    def kernel(self) -> str:
        return f"wrap_{self.to.data}"

    def reference(self, x: np.ndarray) -> np.ndarray:
        dt = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16}[self.to.data]
        return x.astype(np.int32).astype(dt).astype(np.int32)


@irdl_op_definition
class WhereOp(GraphOp):
    """`graph.where %cond, %x, %y`: x where cond (i1) is true, else y; all three of the result's
    shape (the importer materializes constants at full shape)."""

    name = "graph.where"
    condition = operand_def(DeviceTensor)
    lhs = operand_def(DeviceTensor)
    rhs = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)
    traits = traits_def(Pure())
    assembly_format = (
        "$condition `,` $lhs `,` $rhs attr-dict `:` `(` type($condition) `,` type($lhs) `,` type($rhs) `)` "
        "`->` type($result)"
    )

    def __init__(self, condition, lhs, rhs):
        super().__init__(operands=[condition, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        c, a, b, r = self.condition.type, self.lhs.type, self.rhs.type, self.result.type
        if not is_bool_type(c.element_type):
            raise VerifyException(f"graph.where: condition element type must be i1, got {c.element_type}")
        if not (a.element_type == b.element_type == r.element_type):
            raise VerifyException(f"graph.where: value element types differ ({a}, {b}, {r})")
        check_dtype(self.name, a.element_type, "any")
        if not (shape_of(c) == shape_of(a) == shape_of(b) == shape_of(r)):
            raise VerifyException(
                f"graph.where: condition, values and result must have one shape, got {shape_of(c)}, "
                f"{shape_of(a)}, {shape_of(b)} and {shape_of(r)}"
            )

    def reference(self, c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(c.astype(bool), a, b)


ARG_KINDS = ("max", "min")


@irdl_op_definition
class ArgReduceOp(_OneToOne):
    """`graph.arg_reduce %x {kind = "max"}`: the i32 index of each row's largest (`max`) or
    smallest (`min`) value along the last axis, which the result drops; the first such index, or
    the last with `select_last_index` (ONNX ArgMax/ArgMin). A NaN wins, as in NumPy."""

    name = "graph.arg_reduce"
    input = operand_def(DeviceTensor)
    result = result_def(DeviceTensor)
    kind = attr_def(StringAttr)
    select_last_index = opt_attr_def(UnitAttr)

    def verify_(self) -> None:
        if self.kind.data not in ARG_KINDS:
            raise VerifyException(f"graph.arg_reduce: kind must be max or min, not '{self.kind.data}'")
        check_dtype(self.name, self.input.type.element_type, "numeric")
        if not is_index_type(self.result.type.element_type):
            raise VerifyException(
                f"graph.arg_reduce: result element type must be i32, got {self.result.type.element_type}"
            )
        s = shape_of(self.input.type)
        if len(s) < 2 or shape_of(self.result.type) != s[:-1]:
            raise VerifyException(
                f"graph.arg_reduce: result shape {shape_of(self.result.type)}, expected {s[:-1]} (the input "
                "without its last axis; the input of rank >= 2)"
            )

    def reference(self, x: np.ndarray) -> np.ndarray:
        y = x[..., ::-1] if self.select_last_index is not None else x
        idx = np.argmax(y, axis=-1) if self.kind.data == "max" else np.argmin(y, axis=-1)
        return (x.shape[-1] - 1 - idx if self.select_last_index is not None else idx).astype(np.int32)


GRAPH_OPS: tuple[type[IRDLOperation], ...] = (
    ParameterOp,
    AddOp,
    SubOp,
    MulOp,
    MaxOp,
    GeluOp,
    ReluOp,
    MatmulOp,
    ConvOp,
    PoolOp,
    TransposeOp,
    ReshapeOp,
    ExpOp,
    TanhOp,
    SigmoidOp,
    SqrtOp,
    RsqrtOp,
    ReciprocalOp,
    NegOp,
    AbsOp,
    ErfOp,
    SinOp,
    CosOp,
    LogOp,
    SiluOp,
    FloorOp,
    CeilOp,
    RoundOp,
    SignOp,
    TanOp,
    SinhOp,
    CoshOp,
    AsinOp,
    AcosOp,
    AtanOp,
    AsinhOp,
    AcoshOp,
    AtanhOp,
    SoftplusOp,
    SoftsignOp,
    MinOp,
    DivOp,
    PowOp,
    CastOp,
    SoftmaxOp,
    ReduceOp,
    LayerNormOp,
    RmsNormOp,
    SplitHeadsOp,
    MergeHeadsOp,
    AttentionOp,
    BatchMatmulOp,
    YieldOp,
    RepeatOp,
    IterationSliceOp,
    IterationStoreOp,
    GatherOp,
    ModOp,
    FmodOp,
    AndOp,
    OrOp,
    XorOp,
    ShiftLeftOp,
    ShiftRightOp,
    *COMPARE_OPS,
    NotOp,
    BitwiseNotOp,
    WrapOp,
    WhereOp,
    ArgReduceOp,
    CumSumOp,
    SliceOp,
    PadOp,
    ConcatOp,
)
# The elementwise unary ops, from which the builder and the ONNX importer take theirs.
ELEMENTWISE_UNARY_OPS: tuple[type[ElementwiseUnaryOp], ...] = tuple(
    op for op in GRAPH_OPS if issubclass(op, ElementwiseUnaryOp)
)

Graph = Dialect("graph", list(GRAPH_OPS), [GaussianAttr])
