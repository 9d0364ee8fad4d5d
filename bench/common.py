"""What every bench script shares: the mk2 example list and its command line."""

from __future__ import annotations

import argparse
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEFAULT = ["mlp.mlir", "attention_gqa.mlir", "attention_long.mlir", "transformer_block.mlir", "transformer_stack.mlir"]


def example_parser(description: str | None = None) -> argparse.ArgumentParser:
    """`[examples ...] [--target mk2]`; callers add their own options."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("examples", nargs="*", default=DEFAULT)
    ap.add_argument("--target", default="mk2")
    return ap


def example_path(name: str) -> Path:
    """A path as given if it exists, else the file of that name under examples/."""
    return Path(name) if Path(name).exists() else EXAMPLES / name
