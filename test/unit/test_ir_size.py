"""Principle 1: the mk2 MLP's printed IR stays under 1 MB at every level of the ladder (per plan:
until select-finalist keeps one, the module holds each plan finalist as a function)."""

from __future__ import annotations

from conftest import EXAMPLES
from xdsl.dialects import func

from ipu.tools.common import make_context, parse_file
from ipu.transforms.pipeline import compile_passes

LIMIT = 1_000_000


def test_mk2_mlp_ir_size_per_level() -> None:
    ctx = make_context()
    module = parse_file(ctx, EXAMPLES / "mlp.mlir")
    sizes = {"graph": len(str(module))}
    for label, p in compile_passes("mk2"):
        p.apply(ctx, module)
        module.verify()
        funcs = [f for f in module.body.block.ops if isinstance(f, func.FuncOp)]
        sizes[label] = max(len(str(f)) for f in funcs) if len(funcs) > 1 else len(str(module))
    assert len(sizes) == 1 + len(compile_passes("mk2"))  # graph + every pass
    for level, n in sizes.items():
        assert n < LIMIT, f"{level}: {n} bytes"
    # and the final level parses back
    text = str(module)
    from xdsl.parser import Parser

    assert len(str(Parser(make_context(), text).parse_module())) == len(text)
