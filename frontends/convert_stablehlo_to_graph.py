"""`convert-stablehlo-to-graph`: a StableHLO module (JAX's `jax.jit(f).lower(*args)`) becomes a
graph-level module with one `func.func @main`.

The op-by-op lowering lives in `frontends/stablehlo_import.py` (one rule per StableHLO op, over
values through the builder the ONNX importer shares, then `raise-graph-ops`: attention, norms,
GeLU, head reshapes); this pass
applies it in place, so `ipu-opt f.mlir -p convert-stablehlo-to-graph,ipu-compile` works on
JAX's text. An op it cannot express fails with a diagnostic naming the StableHLO op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ipu.transforms.levels import expect_level


@dataclass(frozen=True)
class ConvertStablehloToGraphPass(ModulePass):
    """Replace the module's StableHLO functions with the graph function computing @main."""

    name = "convert-stablehlo-to-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expect_level(op, self.name, ("stablehlo", "graph"))
        from ipu.frontends.stablehlo_import import import_stablehlo

        graph = import_stablehlo(op, "the module")
        for o in list(op.body.block.ops):
            o.detach()
            o.erase()
        for o in list(graph.body.block.ops):
            o.detach()
            op.body.block.add_op(o)
        for k in [k for k in op.attributes if k.startswith("mhlo.") or k.startswith("jax.")]:
            del op.attributes[k]
        op.attributes.update(graph.attributes)
        if "sym_name" in op.properties:
            del op.properties["sym_name"]
