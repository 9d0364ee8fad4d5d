"""What every bench script shares: the mk2 example list and its command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import builtin, func

from ipu.api import parse
from ipu.context import make_context
from ipu.golden.evaluator import main_function

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEFAULT = ["mlp.mlir", "attention_gqa.mlir", "attention_long.mlir", "transformer_block.mlir", "transformer_stack.mlir"]


def example_parser(description: str | None = None) -> argparse.ArgumentParser:
    """`[examples ...] [--target mk2]`; callers add their own options."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("examples", nargs="*", default=DEFAULT)
    ap.add_argument("--target", default="mk2")
    return ap


def example_path(name: str) -> Path:
    """A path as given if it exists, else the file of that name under examples/ (`.mlir` optional)."""
    if Path(name).exists():
        return Path(name)
    p = EXAMPLES / name
    return p if p.exists() or p.suffix else p.with_suffix(".mlir")


def parse_example(path: Path) -> tuple[func.FuncOp, Context, builtin.ModuleOp]:
    """(the reference's graph function, a fresh context, the module to compile), parsed twice so
    the reference never sees the compiled IR."""
    ref = main_function(parse(Path(path)))
    ctx = make_context()
    return ref, ctx, parse(Path(path))
