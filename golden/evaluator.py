"""Golden reference evaluator for `graph` functions.

Semantics: every operation computes in float32 from its operands at their storage dtype and the
result is rounded to the result tensor's element type before it feeds the next operation.
This module deliberately does not import `ipu.runtime`: the reference never sees the package.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp, TensorType
from xdsl.dialects.func import Func, FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser

from ipu.dialects import graph as g


class GoldenError(ValueError):
    """Invalid inputs or an operation the golden evaluator cannot interpret."""


@dataclass
class GoldenResult:
    outputs: list[np.ndarray]
    values: dict[int, np.ndarray] = field(default_factory=dict)


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
    return [a.name_hint if a.name_hint is not None else f"arg{i}" for i, a in enumerate(func_op.args)]


def _tensor_type(v: SSAValue) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType):
        raise GoldenError(f"value of type {t} is not a tensor")
    return t


def make_inputs(func_op: FuncOp, seed: int) -> dict[str, np.ndarray]:
    """Seeded standard-normal inputs at each argument's shape and dtype."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name, arg in zip(_arg_names(func_op), func_op.args, strict=True):
        t = _tensor_type(arg)
        out[name] = rng.standard_normal(g.shape_of(t), dtype=np.float32).astype(g.numpy_dtype(t))
    return out


_SQRT_2_OVER_PI = np.float32(math.sqrt(2.0 / math.pi))


def gelu(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    inner = _SQRT_2_OVER_PI * (x + np.float32(0.044715) * x * x * x)
    return np.float32(0.5) * x * (np.float32(1.0) + np.tanh(inner))


_BINARY: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    g.AddOp: np.add,
    g.SubOp: np.subtract,
    g.MulOp: np.multiply,
    g.MaxOp: np.maximum,
}


def _compute(op: Operation, args: list[np.ndarray]) -> np.ndarray:
    f = [a.astype(np.float32) for a in args]
    if type(op) in _BINARY:
        return _BINARY[type(op)](f[0], f[1])
    if isinstance(op, g.GeluOp):
        return gelu(f[0])
    if isinstance(op, g.ReluOp):
        return np.maximum(f[0], np.float32(0.0))
    if isinstance(op, g.MatmulOp):
        ta, tb = op.flags()
        return np.matmul(f[0].T if ta else f[0], f[1].T if tb else f[1])
    if isinstance(op, g.TransposeOp):
        return np.transpose(f[0], tuple(op.perm.get_values()))
    if isinstance(op, g.ReshapeOp):
        return f[0].reshape(g.shape_of(op.result.type))
    raise GoldenError(f"golden evaluator does not support operation '{op.name}'")


def evaluate(func_op: FuncOp, inputs: dict[str, np.ndarray]) -> GoldenResult:
    """Interpret `func_op` on `inputs` (keyed by argument name hint, or `arg{i}`)."""
    names = _arg_names(func_op)
    missing = [n for n in names if n not in inputs]
    extra = sorted(set(inputs) - set(names))
    if missing or extra:
        raise GoldenError(f"input mismatch: missing {missing}, unexpected {extra} (expected {names})")
    env: dict[SSAValue, np.ndarray] = {}
    for name, arg in zip(names, func_op.args, strict=True):
        t = _tensor_type(arg)
        x = np.asarray(inputs[name])
        if x.shape != g.shape_of(t):
            raise GoldenError(f"input '{name}': shape {x.shape}, expected {g.shape_of(t)}")
        env[arg] = x.astype(g.numpy_dtype(t))

    result = GoldenResult(outputs=[])
    index = 0
    for op in func_op.body.block.ops:
        if isinstance(op, ReturnOp):
            result.outputs = [env[v] for v in op.operands]
            break
        if isinstance(op, g.ParameterOp):
            value = g.parameter_values(op)
        else:
            raw = _compute(op, [env[v] for v in op.operands])
            value = raw.astype(g.numpy_dtype(_tensor_type(op.results[0])))
        if len(op.results) != 1:
            raise GoldenError(f"operation '{op.name}' must have exactly one result")
        want = g.shape_of(_tensor_type(op.results[0]))
        if value.shape != want:
            raise GoldenError(f"operation #{index} '{op.name}': computed shape {value.shape}, expected {want}")
        env[op.results[0]] = value
        result.values[index] = value
        index += 1
    return result
