"""Golden reference evaluator for `graph` functions.

Semantics: every operation computes in float32 from its operands at their storage dtype and the
result is rounded to the result tensor's element type before it feeds the next operation. What
each operation computes is its own `reference` method (`ipu.dialects.graph`); this module walks
the function, handles parameters and `graph.repeat`, and records every value.
This module deliberately does not import `ipu.runtime`: the reference never sees the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, Builtin, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import Func, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.parser import Parser

from ipu.dialects import graph as g
from ipu.dialects.value_names import value_names


class GoldenError(ValueError):
    """Invalid inputs or an operation the golden evaluator cannot interpret."""


@dataclass
class GoldenResult:
    outputs: list[np.ndarray]
    # every op's value by its stable name (`ipu.dialects.value_names`), as checkpoints name it
    values: dict[str, np.ndarray] = field(default_factory=dict)
    # secondary views of an operation, e.g. (name, "scores") for attention: scaled, masked scores
    aux: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)


def load_module(text: str) -> ModuleOp:
    ctx = Context()
    for d in (Builtin, Func, g.Graph):
        ctx.load_dialect(d)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def main_function(module: ModuleOp) -> FuncOp:
    funcs = [op for op in module.walk() if isinstance(op, FuncOp)]
    if not funcs:
        raise GoldenError("module contains no func.func")
    for f in funcs:
        if f.sym_name.data == "main":
            return f
    return funcs[0]


def _arg_names(func_op: FuncOp) -> list[str]:
    """Input names: the function's `ipu.inputs` when declared (an imported model's own names),
    else each argument's name hint, else `arg{i}`."""
    declared = func_op.attributes.get("ipu.inputs")
    if isinstance(declared, ArrayAttr) and len(declared.data) == len(func_op.args):
        return [x.data for x in declared.data if isinstance(x, StringAttr)]
    return [a.name_hint if a.name_hint is not None else f"arg{i}" for i, a in enumerate(func_op.args)]


def _tensor_type(v: SSAValue) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType):
        raise GoldenError(f"value of type {t} is not a tensor")
    return t


def index_bound(func_op: FuncOp, arg: SSAValue) -> int | None:
    """For an integer argument, the bound V every value must lie below: the fewest table rows of
    the `graph.gather`s it indexes (None if it indexes none)."""
    rows = [op.rows for op in func_op.walk() if isinstance(op, g.GatherOp) and op.indices == arg]
    return min(rows) if rows else None


def make_inputs(func_op: FuncOp, seed: int) -> dict[str, np.ndarray]:
    """Seeded standard-normal inputs at each argument's shape and dtype; an integer (index)
    argument draws uniformly from the rows [0, V) of the tables it indexes."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    declared = func_op.attributes.get("onnx.input_dtypes")  # an imported model's own input types
    kinds = [np.dtype(d.data).kind for d in declared.data] if isinstance(declared, ArrayAttr) else []  # type: ignore[attr-defined]
    for k, (name, arg) in enumerate(zip(_arg_names(func_op), func_op.args, strict=True)):
        t = _tensor_type(arg)
        if g.is_index_type(t.element_type):  # indices draw from their tables' rows, other integers from [-8, 8)
            bound = index_bound(func_op, arg)
            unsigned = k < len(kinds) and kinds[k] == "u"
            lo, hi = (0, bound) if bound is not None else (0, 16) if unsigned else (-8, 8)
            out[name] = rng.integers(lo, hi, g.shape_of(t)).astype(np.int32)
            continue
        if g.is_bool_type(t.element_type):
            out[name] = rng.integers(0, 2, g.shape_of(t)).astype(np.bool_)
            continue
        out[name] = rng.standard_normal(g.shape_of(t), dtype=np.float32).astype(g.numpy_dtype(t))
    return out


def check_index_input(name: str, x: np.ndarray, bound: int | None) -> np.ndarray:
    """An integer input narrowed to int32 (an ONNX model's int64 ids are narrowed on the host),
    checked: integral values that fit int32 and, when it indexes tables, lie in [0, V)."""
    if x.dtype.kind == "f" and x.size and not (np.isfinite(x).all() and (x == np.round(x)).all()):
        raise GoldenError(f"input '{name}': integer input holds non-integral values")
    if x.dtype.kind not in "biuf":
        raise GoldenError(f"input '{name}': dtype {x.dtype} is not an integer type")
    flat = x.reshape(-1)
    info = np.iinfo(np.int32)
    big = np.flatnonzero((flat < info.min) | (flat > info.max))
    if big.size:
        raise GoldenError(
            f"input '{name}': value {int(flat[big[0]])} at element {int(big[0])} does not fit int32 "
            "(the device's integer type)"
        )
    if bound is not None:
        out = np.flatnonzero((flat < 0) | (flat >= bound))
        if out.size:
            k = int(out[0])
            why = " (negative indices are not supported)" if flat[k] < 0 else ""
            raise GoldenError(
                f"input '{name}': index {int(flat[k])} at element {k} outside [0, {bound}), the rows of the "
                f"table it indexes{why}"
            )
    return x.astype(np.int32)


def check_inputs(func_op: FuncOp, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`inputs` with every integer (index) input checked and narrowed to int32 (the others as
    given): raises GoldenError naming the input whose value does not fit or is out of range."""
    out = dict(inputs)
    for name, arg in zip(_arg_names(func_op), func_op.args, strict=True):
        el = _tensor_type(arg).element_type
        if name in inputs and g.is_index_type(el):
            out[name] = check_index_input(name, np.asarray(inputs[name]), index_bound(func_op, arg))
        elif name in inputs and g.is_bool_type(el):
            out[name] = np.asarray(inputs[name]).astype(np.bool_)
    return out


def _compute(op: Operation, env: dict[SSAValue, np.ndarray]) -> np.ndarray:
    """The op's own reference semantics (`graph.GraphOp.reference`) on float32 operands (integer
    and bool operands as they are)."""
    if not isinstance(op, g.GraphOp):
        raise GoldenError(f"golden evaluator does not support operation '{op.name}'")
    return op.reference(*(env[v] if env[v].dtype.kind in "biu" else env[v].astype(np.float32) for v in op.operands))


def _check_shape(op: Operation, name: str, value: np.ndarray, v: SSAValue) -> None:
    want = g.shape_of(_tensor_type(v))
    if value.shape != want:
        raise GoldenError(f"operation %{name} '{op.name}': computed shape {value.shape}, expected {want}")


class _Interpreter:
    def __init__(self, names: dict[Operation, str], result: GoldenResult):
        self.names = names
        self.result = result
        self.env: dict[SSAValue, np.ndarray] = {}
        self.params: dict[Operation, np.ndarray] = {}
        self.trips: list[int] = []  # the iteration of each enclosing graph.repeat

    def run_block(self, block: Block) -> list[np.ndarray] | None:
        """Execute `block`; the values of its terminator (return/yield), if any."""
        for op in block.ops:
            if isinstance(op, ReturnOp | g.YieldOp):
                return [self.env[v] for v in op.operands]
            name = self.names[op]
            if isinstance(op, g.RepeatOp):
                self.run_repeat(op, name)
                continue
            if isinstance(op, g.ParameterOp):
                if op not in self.params:
                    self.params[op] = g.parameter_values(op)
                value = self.params[op]
            elif isinstance(op, g.IterationSliceOp):
                value = self.env[op.input][self.trips[-1]]
            elif isinstance(op, g.IterationStoreOp):
                value = self.env[op.stacked].copy()
                value[self.trips[-1]] = self.env[op.value]
            else:
                raw = _compute(op, self.env)
                value = np.asarray(raw).astype(g.numpy_dtype(_tensor_type(op.results[0])))
            if len(op.results) != 1:
                raise GoldenError(f"operation '{op.name}' must have exactly one result")
            _check_shape(op, name, value, op.results[0])
            self.env[op.results[0]] = value
            self.result.values[name] = value
            if isinstance(op, g.AttentionOp):
                q, k = self.env[op.q], self.env[op.k]
                b = self.env[op.bias] if op.bias is not None else None
                self.result.aux[(name, "scores")] = g.attention_scores(
                    q, k, op.scale_value(), op.causal is not None, b, op.positions(), op.key_positions()
                )
        return None

    def run_repeat(self, op: g.RepeatOp, name: str) -> None:
        carried = [self.env[v] for v in op.inits]
        block = op.body.block
        for trip in range(op.count.value.data):
            for arg, val in zip(block.args, carried, strict=True):
                self.env[arg] = val
            self.trips.append(trip)
            out = self.run_block(block)
            self.trips.pop()
            if out is None:
                raise GoldenError(f"operation %{name} 'graph.repeat': body has no graph.yield")
            carried = out
        for r, val in zip(op.results, carried, strict=True):
            _check_shape(op, name, val, r)
            self.env[r] = val
        if carried:
            self.result.values[name] = carried[0]


def evaluate(func_op: FuncOp, inputs: dict[str, np.ndarray]) -> GoldenResult:
    """Interpret `func_op` on `inputs` (keyed by argument name hint, or `arg{i}`).

    `values[name]` is the value of the operation whose result has that stable name (see
    `ipu.dialects.value_names`: its SSA name, or a generated one); for an operation inside a
    `graph.repeat` body it is the value from the last iteration, and for the repeat itself it is
    its first result.
    """
    names = _arg_names(func_op)
    missing = [n for n in names if n not in inputs]
    extra = sorted(set(inputs) - set(names))
    if missing or extra:
        raise GoldenError(f"input mismatch: missing {missing}, unexpected {extra} (expected {names})")
    result = GoldenResult(outputs=[])
    inputs = check_inputs(func_op, inputs)
    interp = _Interpreter(value_names(func_op), result)
    for name, arg in zip(names, func_op.args, strict=True):
        t = _tensor_type(arg)
        x = np.asarray(inputs[name])
        if x.shape != g.shape_of(t):
            raise GoldenError(f"input '{name}': shape {x.shape}, expected {g.shape_of(t)}")
        interp.env[arg] = x.astype(g.numpy_dtype(t))
    outputs = interp.run_block(func_op.body.block)
    result.outputs = outputs if outputs is not None else []
    return result


def _block_flops(block: Block) -> int:
    total = 0
    for op in block.ops:
        if isinstance(op, g.MatmulOp):
            a = g.shape_of(op.lhs.type)
            n = g.shape_of(op.result.type)[1]
            m, k = (a[1], a[0]) if op.flags()[0] else a
            total += 2 * m * k * n
        elif isinstance(op, g.AttentionOp):
            hq, s, d = g.shape_of(op.q.type)
            sk = g.shape_of(op.k.type)[1]
            f = 4 * hq * s * sk * d
            total += f // 2 if op.causal is not None else f
        elif isinstance(op, g.ConvOp):
            total += 2 * op.geometry().macs
        elif isinstance(op, g.RepeatOp):
            total += op.count.value.data * _block_flops(op.body.block)
    return total


def flops(func_op: FuncOp) -> int:
    """Matmul FLOPs (2mkn) plus attention FLOPs (4*Hq*S*Sk*D, halved when causal) plus
    convolution FLOPs (2 x its multiply-accumulates); the body of a `graph.repeat` counts once
    per iteration."""
    return _block_flops(func_op.body.block)
