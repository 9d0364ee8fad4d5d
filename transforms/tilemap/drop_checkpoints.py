"""`drop-checkpoints`: remove the numerical check's samples of intermediate values.

Each `tilemap.checkpoint` becomes one instruction in every tile program holding its value and a
host read when the program runs: a twelve-layer model spends about a fifth of its code on them,
and code shares the executable region with the exchange instructions. Without them the outputs
are still compared with the reference (they are host reads, not checkpoints); what is lost is
the per-value check and `--bisect`. `ipu-run --no-checkpoints` compiles this way.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ipu.dialects import tilemap
from ipu.transforms.levels import expect_level


class EraseCheckpoint(RewritePattern):
    """A checkpoint has no results: erasing it only ends its buffer's life earlier."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tilemap.CheckpointOp, rewriter: PatternRewriter) -> None:
        rewriter.erase_op(op)


@dataclass(frozen=True)
class DropCheckpointsPass(ModulePass):
    """Erase every `tilemap.checkpoint` (run between map-tiles and place-storage)."""

    name = "drop-checkpoints"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        expect_level(op, self.name, ("tilemap", "exchange"))
        PatternRewriteWalker(EraseCheckpoint(), apply_recursively=False).rewrite_module(op)


__all__ = ["DropCheckpointsPass"]
