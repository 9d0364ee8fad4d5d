"""Build a `graph`-dialect model in Python and get the `builtin.ModuleOp` the tools take.

    from ipu.builder import GraphBuilder
    b = GraphBuilder("main")
    x = b.input("x", (64, 256), "f16")
    w = b.parameter("w1", (256, 1024), "f16", std=0.02, seed=1)
    h = b.gelu(b.add(b.matmul(x, w, name="h"), b.parameter("b1", (1024,), "f16", seed=2), name="hb"), name="g")
    b.output(h)
    module = b.build()          # verified; `ipu.compile(module, target="sim16")`

Every method appends one `graph` op and returns its result (an `SSAValue`). `name=` becomes the
result's SSA name hint, which is what checkpoints, `ipu-run --bisect` and error messages report,
so names must be unique and valid SSA names. Shapes and dtypes are checked as each op is added
(a `ValueError` naming the op), and each op is verified at once, so a mistake is reported where
it is made rather than when the module is compiled. Parameters are hoisted to the top of their
block, ahead of the computation, as the hand-written examples declare them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f16,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ipu.dialects import graph as g

DType = str | type | np.dtype | Float16Type | Float32Type
Values = SSAValue | Sequence[SSAValue]

_NAME = re.compile(r"[A-Za-z_$.-][\w$.-]*")
_STRIPPED_SUFFIX = re.compile(r"_\d+$")  # xDSL drops it from a name hint


def element_type(dtype: DType) -> Float16Type | Float32Type:
    """The builtin element type for "f16"/"f32", a NumPy float16/float32 dtype, or f16/f32 itself."""
    if isinstance(dtype, Float16Type | Float32Type):
        return dtype
    try:
        dt = np.dtype({"f16": "float16", "f32": "float32"}.get(dtype, dtype) if isinstance(dtype, str) else dtype)
    except TypeError:
        dt = None
    if dt == np.float16:
        return f16
    if dt == np.float32:
        return f32
    raise ValueError(f"unsupported dtype {dtype!r}: the graph dialect holds f16 or f32 tensors")


def tensor_type(shape: Sequence[int], dtype: DType) -> TensorType:
    """`tensor<shape x dtype>`, with every dimension a positive integer."""
    dims = tuple(shape)
    if not dims or not all(isinstance(d, int | np.integer) and d > 0 for d in dims):
        raise ValueError(f"shape {dims} must be a non-empty sequence of positive integers")
    return TensorType(element_type(dtype), [int(d) for d in dims])


def _shape(v: SSAValue) -> tuple[int, ...]:
    return g.shape_of(v.type)


def _dtype(v: SSAValue) -> str:
    return "f16" if isinstance(v.type.element_type, Float16Type) else "f32"


def _describe(v: SSAValue) -> str:
    name = f"%{v.name_hint}" if v.name_hint else "value"
    return f"{name} {_shape(v)} {_dtype(v)}"


class GraphBuilder:
    """Builds one graph function (`func.func @<name>`) in a module, op by op.

    Inputs become the function's arguments in call order, outputs its results in call order
    (`output0`, `output1`, ... in the package unless named)."""

    def __init__(self, name: str = "main"):
        self.name = name
        self._top = Block()
        self._blocks: list[Block] = [self._top]  # innermost last: repeat bodies under construction
        self._params: dict[int, int] = {}  # id(block) -> parameters hoisted to its top so far
        self._names: set[str] = set()
        self._outputs: list[SSAValue] = []
        self._output_names: list[str | None] = []
        self._module: builtin.ModuleOp | None = None

    # -- declarations ---------------------------------------------------------------------------

    def input(self, name: str, shape: Sequence[int], dtype: DType = "f16") -> SSAValue:
        """A host input: the next function argument, fed by name (`inputs[name]`) at run time
        (dtype "f16", "f32", or "i32" for the ids of an embedding lookup)."""
        self._open()
        if len(self._blocks) > 1:
            raise ValueError(f"input {name!r}: inputs are declared at function level, not inside a repeat body")
        # "i32": integer ids (the indices of `gather`), the device's one integer type
        t = (
            TensorType(i32, list(tensor_type(shape, "f32").get_shape()))
            if dtype == "i32"
            else tensor_type(shape, dtype)
        )
        hint = self._claim(name, "input")
        arg = self._top.insert_arg(t, len(self._top.args))
        arg.name_hint = hint
        return arg

    def parameter(
        self,
        symbol: str,
        shape: Sequence[int],
        dtype: DType = "f16",
        *,
        std: float = 0.02,
        seed: int = 0,
        values: np.ndarray | float | Sequence[float] | None = None,
        name: str | None = None,
    ) -> SSAValue:
        """A weight with symbol `symbol`: `values` (an array of `shape`, or one number for all
        elements) as dense data, else N(0, std^2) samples from `seed` (`#graph.gaussian`). Its
        SSA name is `name`, by default the symbol. Declared at the top of the current block (a
        repeat body's parameters are shared by all iterations)."""
        self._open()
        t = tensor_type(shape, dtype)
        if values is not None:
            v = np.asarray(values, dtype=np.float64)
            if v.size != 1 and v.shape != tuple(shape):
                raise ValueError(f"graph.parameter {symbol!r}: values of shape {v.shape}, expected {tuple(shape)}")
            if not np.all(np.isfinite(v)):
                raise ValueError(f"graph.parameter {symbol!r}: values must be finite")
            full = np.broadcast_to(v.reshape(-1) if v.size == 1 else v, tuple(shape))
            dt = np.dtype(g.numpy_dtype(t)).newbyteorder("<")
            init: Any = DenseIntOrFPElementsAttr(t, BytesAttr(np.ascontiguousarray(full, dtype=dt).tobytes()))
        else:
            if std < 0:
                raise ValueError(f"graph.parameter {symbol!r}: std must be non-negative, got {std}")
            init = g.GaussianAttr(int(seed), float(std))
        op = g.ParameterOp(symbol, init, t)
        name = symbol if name is None else name
        self._verify(op, name)
        self._claim(symbol, "graph.parameter", ssa_name=name == symbol)  # symbols share the value names' namespace
        if name != symbol:
            try:
                self._claim(name, "graph.parameter")
            except ValueError:
                self._names.discard(symbol)
                raise
        op.result.name_hint = name
        block = self._blocks[-1]
        k = self._params.get(id(block), 0)
        if k < len(block.ops):
            block.insert_op_before(op, list(block.ops)[k])
        else:
            block.add_op(op)
        self._params[id(block)] = k + 1
        return op.result

    def output(self, *values: SSAValue, name: str | None = None) -> None:
        """Return `values` from the function (in order); `name` names a single output in the
        package (`ipu.outputs`; default `output<i>`). An input or a parameter returned as it is
        is copied on the device (`graph.cast` to its own type)."""
        self._open()
        if len(self._blocks) > 1:
            raise ValueError("output: outputs are returned at function level, not from inside a repeat body")
        if name is not None and len(values) != 1:
            raise ValueError("output: name= names a single output; call output() once per named value")
        taken = {n or f"output{i}" for i, n in enumerate(self._output_names)}
        if name is not None and name in taken:
            raise ValueError(f"output: an output is already named {name!r}")
        for v in values:
            self._check_value(v, "output")
            if isinstance(v.owner, Block) or isinstance(v.owner, g.ParameterOp):
                # an input or a parameter unchanged: a device copy into the output's own buffer
                v = self._emit(g.CastOp(v, v.type), None)
            self._outputs.append(v)
            self._output_names.append(name)

    # -- elementwise ----------------------------------------------------------------------------

    def add(self, lhs: SSAValue, rhs: SSAValue, *, name: str | None = None) -> SSAValue:
        """lhs + rhs, broadcasting like NumPy (e.g. a bias vector over rows)."""
        return self._binary(g.AddOp, lhs, rhs, name)

    def sub(self, lhs: SSAValue, rhs: SSAValue, *, name: str | None = None) -> SSAValue:
        """lhs - rhs, broadcasting like NumPy."""
        return self._binary(g.SubOp, lhs, rhs, name)

    def mul(self, lhs: SSAValue, rhs: SSAValue, *, name: str | None = None) -> SSAValue:
        """lhs * rhs, broadcasting like NumPy."""
        return self._binary(g.MulOp, lhs, rhs, name)

    def max(self, lhs: SSAValue, rhs: SSAValue, *, name: str | None = None) -> SSAValue:
        """Elementwise maximum, broadcasting like NumPy."""
        return self._binary(g.MaxOp, lhs, rhs, name)

    def min(self, lhs: SSAValue, rhs: SSAValue, *, name: str | None = None) -> SSAValue:
        """Elementwise minimum, broadcasting like NumPy."""
        return self._binary(g.MinOp, lhs, rhs, name)

    def div(self, lhs: SSAValue, rhs: SSAValue, *, name: str | None = None) -> SSAValue:
        """lhs / rhs, broadcasting like NumPy."""
        return self._binary(g.DivOp, lhs, rhs, name)

    def pow(self, lhs: SSAValue, rhs: SSAValue, *, name: str | None = None) -> SSAValue:
        """lhs ** rhs, broadcasting like NumPy."""
        return self._binary(g.PowOp, lhs, rhs, name)

    # gelu, relu, exp, tanh, ...: one method per `graph.ELEMENTWISE_UNARY_OPS` op, added below the class

    def cast(self, x: SSAValue, dtype: DType, *, name: str | None = None) -> SSAValue:
        """`x` at another precision (f16 <-> f32, round to nearest even)."""
        self._check_value(x, "graph.cast")
        return self._emit(g.CastOp(x, tensor_type(_shape(x), dtype)), name)

    # -- shaped ops -----------------------------------------------------------------------------

    def matmul(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        *,
        transpose_lhs: bool = False,
        transpose_rhs: bool = False,
        name: str | None = None,
    ) -> SSAValue:
        """[m,k] x [k,n] -> [m,n] with fp32 accumulation (`transpose_*` reads an operand as its
        transpose: lhs [k,m], rhs [n,k])."""
        self._check_value(lhs, "graph.matmul")
        self._check_value(rhs, "graph.matmul")
        a, b = _shape(lhs), _shape(rhs)
        if len(a) != 2 or len(b) != 2:
            raise self._error(
                "graph.matmul", name, f"operands must be rank 2, got {_describe(lhs)} and {_describe(rhs)}"
            )
        self._same_dtype("graph.matmul", name, lhs, rhs)
        m, k = (a[1], a[0]) if transpose_lhs else a
        k2, n = (b[1], b[0]) if transpose_rhs else b
        if k != k2:
            raise self._error(
                "graph.matmul", name, f"contraction sizes differ ({k} vs {k2}): {_describe(lhs)} x {_describe(rhs)}"
            )
        op = g.MatmulOp(lhs, rhs, TensorType(lhs.type.element_type, [m, n]))
        if transpose_lhs:
            op.attributes["transpose_lhs"] = UnitAttr()
        if transpose_rhs:
            op.attributes["transpose_rhs"] = UnitAttr()
        return self._emit(op, name)

    def gather(self, table: SSAValue, ids: SSAValue, *, name: str | None = None) -> SSAValue:
        """Embedding lookup: rows of `table` [V, D] by i32 `ids` [S] or [1, S] -> [S, D]."""
        self._check_value(table, "graph.gather")
        t, i = _shape(table), g.shape_of(ids.type)
        if (
            len(t) != 2
            or not g.is_index_type(ids.type.element_type)
            or len(i) not in (1, 2)
            or len(i) == 2
            and i[0] != 1
        ):
            raise self._error(
                "graph.gather",
                name,
                f"needs a [V, D] table and i32 ids [S] or [1, S], got {_describe(table)} and {ids.type}",
            )
        return self._emit(g.GatherOp(table, ids, TensorType(table.type.element_type, [i[-1], t[1]])), name)

    def transpose(self, x: SSAValue, perm: Sequence[int], *, name: str | None = None) -> SSAValue:
        """Permute the axes of `x`: result axis i is input axis perm[i]."""
        self._check_value(x, "graph.transpose")
        s, p = _shape(x), [int(i) for i in perm]
        if sorted(p) != list(range(len(s))):
            raise self._error("graph.transpose", name, f"perm {p} is not a permutation of the axes of {_describe(x)}")
        # `TransposeOp.__init__` passes `operands=` to a base that does not take it: build generically
        op = g.TransposeOp.create(
            operands=[x],
            result_types=[TensorType(x.type.element_type, [s[i] for i in p])],
            attributes={"perm": DenseArrayBase.from_list(i64, p)},
        )
        return self._emit(op, name)

    def reshape(self, x: SSAValue, shape: Sequence[int], *, name: str | None = None) -> SSAValue:
        """Row-major reshape to `shape` (same number of elements)."""
        self._check_value(x, "graph.reshape")
        t = tensor_type(shape, x.type.element_type)
        if int(np.prod(_shape(x))) != int(np.prod(tuple(shape))):
            raise self._error("graph.reshape", name, f"{_describe(x)} cannot hold shape {tuple(shape)}")
        return self._emit(g.ReshapeOp(x, t), name)

    def softmax(self, x: SSAValue, axis: int = -1, *, name: str | None = None) -> SSAValue:
        """Numerically stable softmax along `axis`."""
        self._check_value(x, "graph.softmax")
        self._axis("graph.softmax", name, x, axis)
        op = g.SoftmaxOp(x)
        if axis != -1:
            op.attributes["axis"] = IntegerAttr(axis, 64)
        return self._emit(op, name)

    def reduce(self, x: SSAValue, kind: str, axis: int, *, name: str | None = None) -> SSAValue:
        """Reduce `axis` away with `kind` = sum | max | mean."""
        self._check_value(x, "graph.reduce")
        if kind not in g.REDUCE_KINDS:
            raise self._error("graph.reduce", name, f"kind {kind!r} is not one of {g.REDUCE_KINDS}")
        ax = self._axis("graph.reduce", name, x, axis)
        s = [d for i, d in enumerate(_shape(x)) if i != ax]
        if not s:
            raise self._error("graph.reduce", name, f"reducing {_describe(x)} would leave a rank-0 tensor")
        op = g.ReduceOp(x, TensorType(x.type.element_type, s))
        op.attributes["kind"] = StringAttr(kind)
        op.attributes["axis"] = IntegerAttr(axis, 64)
        return self._emit(op, name)

    def layer_norm(
        self,
        x: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        *,
        epsilon: float | None = None,
        name: str | None = None,
    ) -> SSAValue:
        """(x - mean) / sqrt(var + epsilon) * gamma + beta over the last axis (epsilon 1e-5 by default)."""
        self._norm_operands("graph.layer_norm", name, x, gamma, beta)
        op = g.LayerNormOp.create(operands=[x, gamma, beta], result_types=[x.type])
        if epsilon is not None:
            op.attributes["epsilon"] = FloatAttr(float(epsilon), f64)
        return self._emit(op, name)

    def rms_norm(
        self, x: SSAValue, gamma: SSAValue, *, epsilon: float | None = None, name: str | None = None
    ) -> SSAValue:
        """x / sqrt(mean(x^2) + epsilon) * gamma over the last axis (epsilon 1e-5 by default)."""
        self._norm_operands("graph.rms_norm", name, x, gamma)
        op = g.RmsNormOp.create(operands=[x, gamma], result_types=[x.type])
        if epsilon is not None:
            op.attributes["epsilon"] = FloatAttr(float(epsilon), f64)
        return self._emit(op, name)

    def split_heads(self, x: SSAValue, heads: int, *, name: str | None = None) -> SSAValue:
        """[S, H*D] -> [H, S, D]."""
        self._check_value(x, "graph.split_heads")
        s = _shape(x)
        if len(s) != 2 or heads <= 0 or s[1] % heads:
            raise self._error("graph.split_heads", name, f"{heads} heads do not divide the columns of {_describe(x)}")
        op = g.SplitHeadsOp(x, TensorType(x.type.element_type, [heads, s[0], s[1] // heads]))
        op.attributes["heads"] = IntegerAttr(heads, 64)
        return self._emit(op, name)

    def merge_heads(self, x: SSAValue, *, name: str | None = None) -> SSAValue:
        """[H, S, D] -> [S, H*D]."""
        self._check_value(x, "graph.merge_heads")
        s = _shape(x)
        if len(s) != 3:
            raise self._error(
                "graph.merge_heads", name, f"input must be rank 3 [heads, seq, head_dim], got {_describe(x)}"
            )
        return self._emit(g.MergeHeadsOp(x, TensorType(x.type.element_type, [s[1], s[0] * s[2]])), name)

    def attention(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        *,
        form: str = "materialized",
        causal: bool = False,
        scale: float | None = None,
        bias: SSAValue | None = None,
        name: str | None = None,
    ) -> SSAValue:
        """softmax(q k^T * scale [+ bias] [+ causal mask]) v: q [Hq, S, D], k and v [Hkv, Sk, D]
        with Hq a multiple of Hkv (grouped-query attention). `form` = materialized keeps the
        scores in SRAM, streamed runs an online softmax over key blocks; `scale` defaults to
        1/sqrt(D); `bias` [Hq or 1, S, Sk] is added to the scaled scores (-inf hides a key)."""
        op_name = "graph.attention"
        for x in (q, k, v) if bias is None else (q, k, v, bias):
            self._check_value(x, op_name)
        qs, ks, vs = _shape(q), _shape(k), _shape(v)
        if len(qs) != 3 or len(ks) != 3 or len(vs) != 3:
            raise self._error(op_name, name, "q, k and v must be rank 3 [heads, seq, head_dim]")
        if ks != vs:
            raise self._error(op_name, name, f"k {ks} and v {vs} differ")
        if qs[0] % ks[0]:
            raise self._error(op_name, name, f"{qs[0]} query heads are not a multiple of {ks[0]} KV heads")
        if qs[2] != ks[2]:
            raise self._error(op_name, name, f"head_dim {qs[2]} (q) vs {ks[2]} (k, v)")
        if causal and qs[1] != ks[1]:
            raise self._error(op_name, name, f"causal attention needs equal query and key lengths ({qs[1]} vs {ks[1]})")
        if form not in g.ATTENTION_FORMS:
            raise self._error(op_name, name, f"form {form!r} is not one of {g.ATTENTION_FORMS}")
        if bias is not None and (
            len(_shape(bias)) != 3 or _shape(bias)[0] not in (1, qs[0]) or _shape(bias)[1:] != (qs[1], ks[1])
        ):
            raise self._error(op_name, name, f"bias {_shape(bias)} is not [{qs[0]} or 1, {qs[1]}, {ks[1]}]")
        self._same_dtype(op_name, name, q, k, v, *([] if bias is None else [bias]))
        operands = [q, k, v] if bias is None else [q, k, v, bias]
        op = g.AttentionOp.create(operands=operands, result_types=[q.type], attributes={"form": StringAttr(form)})
        if causal:
            op.attributes["causal"] = UnitAttr()
        if scale is not None:
            op.attributes["scale"] = FloatAttr(float(scale), f32)
        return self._emit(op, name)

    # -- structure ------------------------------------------------------------------------------

    def repeat(
        self,
        count: int,
        carried: Values,
        body: Callable[..., Values],
        *,
        carry_names: Sequence[str] | None = None,
        name: str | Sequence[str] | None = None,
    ) -> Any:
        """`graph.repeat count`: run `body` `count` times with `carried` values threaded through.

        `body` receives the carried values as block arguments (one positional argument each),
        adds ops through this builder, and returns the next values (same types, same order).
        The result is the last iteration's values: one `SSAValue` when one value is carried,
        else a list. `carry_names` names the block arguments, `name` the results."""
        self._open()
        inits = [carried] if isinstance(carried, SSAValue) else list(carried)
        if not inits:
            raise ValueError("graph.repeat: carry at least one value")
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"graph.repeat: count must be a positive integer, got {count!r}")
        for v in inits:
            self._check_value(v, "graph.repeat")
        block = Block(arg_types=[v.type for v in inits])
        arg_names = list(carry_names) if carry_names is not None else [None] * len(inits)
        if len(arg_names) != len(inits):
            raise ValueError(f"graph.repeat: {len(arg_names)} carry_names for {len(inits)} carried values")
        for a, n in zip(block.args, arg_names, strict=True):
            a.name_hint = self._claim(n, "graph.repeat") if n is not None else None
        self._blocks.append(block)
        try:
            out = body(*block.args)
        finally:
            self._blocks.pop()
        outs = [out] if isinstance(out, SSAValue) else list(out) if out is not None else []
        types = [v.type for v in inits]
        if [v.type for v in outs if isinstance(v, SSAValue)] != types or len(outs) != len(types):
            got = [str(v.type) if isinstance(v, SSAValue) else repr(v) for v in outs]
            raise ValueError(
                f"graph.repeat: the body must return the carried types {[str(t) for t in types]}, returned {got}"
            )
        block.add_op(g.YieldOp.create(operands=outs))
        op = g.RepeatOp(count, inits, Region(block))
        names = [name] if isinstance(name, str) or name is None else list(name)
        if name is not None and len(names) != len(op.results):
            raise ValueError(f"graph.repeat: {len(names)} names for {len(op.results)} results")
        self._emit(op, None)
        for r, n in zip(op.results, names if name is not None else [None] * len(op.results), strict=True):
            r.name_hint = self._claim(n, "graph.repeat") if n is not None else None
        return op.results[0] if isinstance(carried, SSAValue) else list(op.results)

    def build(self) -> builtin.ModuleOp:
        """The verified module (a fresh copy each call, so the caller may transform it freely).
        Adding ops after the first build is an error."""
        if self._module is None:
            if not self._outputs:
                raise ValueError(f"function @{self.name} has no outputs: call output() first")
            out_names = [n or f"output{i}" for i, n in enumerate(self._output_names)]
            if len(set(out_names)) != len(out_names):
                raise ValueError(f"output names {out_names} are not unique")
            self._top.add_op(func.ReturnOp(*self._outputs))
            ftype = FunctionType.from_lists([a.type for a in self._top.args], [v.type for v in self._outputs])
            f = func.FuncOp(self.name, ftype, Region(self._top))
            if any(n is not None for n in self._output_names):
                f.attributes["ipu.outputs"] = builtin.ArrayAttr([StringAttr(n) for n in out_names])
            self._module = builtin.ModuleOp([f])
            try:
                self._module.verify()
            except (VerifyException, DiagnosticException) as e:
                raise ValueError(f"the built module does not verify: {e}") from None
        return self._module.clone()

    # -- helpers --------------------------------------------------------------------------------

    def _open(self) -> None:
        if self._module is not None:
            raise ValueError(f"function @{self.name} is already built; start a new GraphBuilder")

    def _claim(self, name: str, what: str, ssa_name: bool = True) -> str:
        """Reserve `name`, unique among value names and parameter symbols; an SSA name hint
        (`ssa_name`) must also be valid and kept by xDSL as written."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{what}: name {name!r} must be a non-empty string")
        if ssa_name and not _NAME.fullmatch(name):
            raise ValueError(f"{what}: name {name!r} is not a valid SSA name ([A-Za-z_$.-] then [A-Za-z0-9_$.-]*)")
        if ssa_name and _STRIPPED_SUFFIX.search(name):
            raise ValueError(
                f"{what}: name {name!r} ends in _<digits>, which xDSL strips from SSA names; use e.g. 'h1'"
            )
        if name in self._names:
            raise ValueError(f"{what}: name {name!r} is already used (names identify checkpoints, so must be unique)")
        self._names.add(name)
        return name

    def _check_value(self, v: Any, what: str) -> None:
        if not isinstance(v, SSAValue):
            raise TypeError(f"{what}: expected a value returned by this builder, got {type(v).__name__}")
        if not isinstance(v.type, TensorType):
            raise TypeError(f"{what}: {v} is not a tensor")
        home = v.block if isinstance(v.owner, Block) else v.owner.parent_block()
        if not any(home is b for b in self._blocks):
            raise ValueError(
                f"{what}: {_describe(v)} is not visible here (defined by another builder, or inside a repeat body; "
                "use the repeat's results)"
            )

    def _error(self, op_name: str, name: str | None, msg: str) -> ValueError:
        return ValueError(f"{op_name}{f' %{name}' if name else ''}: {msg}")

    def _same_dtype(self, op_name: str, name: str | None, *vals: SSAValue) -> None:
        if len({v.type.element_type for v in vals}) != 1:
            raise self._error(op_name, name, "element types differ: " + ", ".join(_describe(v) for v in vals))

    def _axis(self, op_name: str, name: str | None, x: SSAValue, axis: int) -> int:
        rank = len(_shape(x))
        if not isinstance(axis, int) or not -rank <= axis < rank:
            raise self._error(op_name, name, f"axis {axis} out of range for {_describe(x)}")
        return axis % rank

    def _norm_operands(self, op_name: str, name: str | None, x: SSAValue, *scales: SSAValue) -> None:
        for v in (x, *scales):
            self._check_value(v, op_name)
        self._same_dtype(op_name, name, x, *scales)
        last = _shape(x)[-1:]
        for v in scales:
            if _shape(v) != last:
                raise self._error(
                    op_name, name, f"scale/shift {_describe(v)} must have shape {last} for {_describe(x)}"
                )

    def _binary(self, cls: type[Operation], lhs: SSAValue, rhs: SSAValue, name: str | None) -> SSAValue:
        op_name = cls.name  # type: ignore[attr-defined]
        self._check_value(lhs, op_name)
        self._check_value(rhs, op_name)
        self._same_dtype(op_name, name, lhs, rhs)
        shape = g.broadcast_shape(_shape(lhs), _shape(rhs))
        if shape is None:
            raise self._error(op_name, name, f"shapes do not broadcast: {_describe(lhs)} and {_describe(rhs)}")
        return self._emit(cls(lhs, rhs, TensorType(lhs.type.element_type, list(shape))), name)

    def _unary(self, cls: type[Operation], x: SSAValue, name: str | None) -> SSAValue:
        self._check_value(x, cls.name)  # type: ignore[attr-defined]
        return self._emit(cls(x), name)

    def _verify(self, op: Operation, name: str | None) -> None:
        try:
            op.verify()
        except (VerifyException, DiagnosticException) as e:
            raise self._error(op.name, name, str(e)) from None

    def _emit(self, op: Operation, name: str | None) -> SSAValue:
        """Verify `op`, append it to the current block and name its (first) result."""
        self._open()
        if name is not None:
            self._claim(name, op.name)  # before anything is added, so a bad name leaves no trace
        try:
            self._verify(op, name)
        except ValueError:
            if name is not None:
                self._names.discard(name)
            raise
        self._blocks[-1].add_op(op)
        if name is not None and op.results:
            op.results[0].name_hint = name
        return op.results[0] if op.results else None  # type: ignore[return-value]


def _unary_method(cls: type[g.ElementwiseUnaryOp]) -> Callable[..., SSAValue]:
    """`GraphBuilder.<mnemonic>(x, *, name=None)` appending one `cls` op."""

    def method(self: GraphBuilder, x: SSAValue, *, name: str | None = None) -> SSAValue:
        return self._unary(cls, x, name)

    method.__name__ = method.__qualname__ = cls.name.removeprefix("graph.")
    method.__doc__ = f"`{cls.name}`: {(cls.__doc__ or cls.name).strip().splitlines()[0]}"
    return method


# Each elementwise unary op of the graph dialect is a builder method of its mnemonic (b.relu(x)).
for _op in g.ELEMENTWISE_UNARY_OPS:
    _name = _op.name.removeprefix("graph.")
    assert not hasattr(GraphBuilder, _name), f"builder method {_name} would hide {_op.name}"
    setattr(GraphBuilder, _name, _unary_method(_op))


__all__ = ["GraphBuilder", "element_type", "tensor_type"]
