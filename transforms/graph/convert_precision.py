"""`convert-precision{dtype=f16}`: compute a graph-level model in half precision.

Every float32 tensor inside the function (parameters, op results, `graph.repeat` carried values)
becomes float16; the function keeps its float32 interface, with one `graph.cast` after each float
argument and before each float result, so a model's inputs and outputs (and an ONNX oracle's)
are unchanged. Matmuls still accumulate in float32 (the AMP's partials). Casts the conversion
makes trivial (f16 to f16) are removed. Run it before plan-ops; `ipu.compile(..., precision=
"f16")` and `ipu-run --precision f16` run it and check the result against the half-precision
model (the golden evaluator rounds every op's result to float16) and the oracle with float16
tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.ir import Attribute, Block
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph
from ipu.transforms.levels import expect_level

DTYPES = {"f16": builtin.f16, "f32": builtin.f32}


def _narrow(t: Attribute, to: Attribute) -> Attribute:
    if isinstance(t, TensorType) and isinstance(t.element_type, Float32Type):
        return TensorType(to, t.get_shape())
    return t


def _narrow_ops(block: Block, to: Attribute) -> None:
    """Narrow the results of `block`'s ops and, inside their regions, the block arguments too."""
    for op in block.ops:
        for r in op.results:
            r._type = _narrow(r.type, to)  # noqa: SLF001 -- retyping in place keeps every use
        for region in op.regions:
            for b in region.blocks:
                for arg in b.args:
                    arg._type = _narrow(arg.type, to)  # noqa: SLF001
                _narrow_ops(b, to)


def _drop_trivial_casts(f: func.FuncOp) -> None:
    """Drop casts to the same type, except an output's copy of an input or a weight (the output
    must be a buffer the programs write)."""
    for op in list(f.walk()):
        if not isinstance(op, graph.CastOp) or op.input.type != op.result.type:
            continue
        returned = any(isinstance(u.operation, func.ReturnOp) for u in op.result.uses)
        if not (returned and isinstance(op.input.owner, Block | graph.ParameterOp)):
            op.result.replace_all_uses_with(op.input)
            op.detach()
            op.erase()


def convert_function(f: func.FuncOp, to: Attribute) -> int:
    """Narrow `f`'s body to `to`; returns the number of float tensors converted at the interface."""
    block = f.body.block
    entry_casts = []
    for arg in block.args:
        if isinstance(arg.type, TensorType) and isinstance(arg.type.element_type, Float32Type):
            c = graph.CastOp(arg, TensorType(to, arg.type.get_shape()))
            c.result.name_hint = arg.name_hint
            entry_casts.append((arg, c))
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp):
        raise DiagnosticException(f"convert-precision: @{f.sym_name.data} does not end in func.return")
    out_types = [o.type for o in ret.arguments]
    _narrow_ops(block, to)  # the arguments keep their type: their casts' results are narrowed
    for arg, c in reversed(entry_casts):
        arg.replace_all_uses_with(c.result)
        block.insert_op_before(c, block.first_op)
        c.operands[0] = arg
    for i, (v, want) in enumerate(zip(list(ret.arguments), out_types, strict=True)):
        if v.type != want:
            back = graph.CastOp(v, want)
            back.result.name_hint = f"{v.name_hint or 'out'}.f32" if v.name_hint else None
            block.insert_op_before(back, ret)
            ret.operands[i] = back.result
    _drop_trivial_casts(f)
    return len(entry_casts) + len(out_types)


_GRAPH_LEVEL = (graph.GraphOp, graph.ParameterOp, graph.YieldOp, graph.RepeatOp, func.ReturnOp)


@dataclass(frozen=True)
class ConvertPrecisionPass(ModulePass):
    """Compute the graph in `dtype` (f16), keeping the functions' float32 interfaces."""

    name = "convert-precision"
    dtype: str = "f16"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("graph",))
        to = DTYPES.get(self.dtype)
        if to is None:
            raise DiagnosticException(f"convert-precision: dtype must be one of {sorted(DTYPES)}, not '{self.dtype}'")
        if isinstance(to, Float32Type):
            return
        for f in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            bad = next((o for o in f.body.block.ops if not isinstance(o, _GRAPH_LEVEL)), None)
            if bad is not None:
                raise DiagnosticException(
                    f"convert-precision: {bad.name} is not a graph-level op (run it before plan-ops)"
                )
            convert_function(f, to)
            f.function_type = builtin.FunctionType.from_lists(
                [a.type for a in f.body.block.args], [o.type for o in f.body.block.last_op.operands]
            )
