"""Logical-to-physical tile mappings: which physical tile runs each logical (shard) tile.

A mapping is a block/width interleaving, so it is two integers in the IR and the package however
many tiles the target has: within each whole block of `block` logical tiles, logical tile
`i = r * width + c` runs on physical tile `c * (block // width) + r` of that block (the block's
`rows x width` grid transposed); tiles past the last whole block keep their index. `block=1` is
the identity. Every tile keeps its memory and program, so a mapping changes only positions: the
route delay between tiles and which tiles share a send bus.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


class MappingError(ValueError):
    """A mapping that is not a permutation of the target's tiles."""


@dataclass(frozen=True, order=True)
class TileMapping:
    block: int = 1
    width: int = 1

    def check(self, tiles: int) -> None:
        if self.block < 1 or self.width < 1 or self.block % self.width or self.block > max(tiles, 1):
            raise MappingError(
                f"tile mapping block={self.block} width={self.width} is not a permutation of {tiles} tiles "
                "(need 1 <= width, width divides block, block <= tiles)"
            )

    @property
    def identity(self) -> bool:
        return self.block == 1 or self.width in (1, self.block)

    def permutation(self, tiles: int) -> np.ndarray:
        """`perm[logical] = physical` for all `tiles` tiles (read-only, cached)."""
        return _permutation(self.block, self.width, tiles)

    def physical(self, logical: np.ndarray | int, tiles: int) -> np.ndarray:
        """Physical tile of each logical tile (vectorized)."""
        t = np.asarray(logical, np.int64)
        return t if self.identity else self.permutation(tiles)[t]

    def __str__(self) -> str:
        return "identity" if self.identity else f"block={self.block},width={self.width}"


@lru_cache(maxsize=256)
def _permutation(block: int, width: int, tiles: int) -> np.ndarray:
    t = np.arange(tiles, dtype=np.int64)
    whole = t < (tiles // block) * block
    i = t % block
    perm = np.where(whole, t - i + (i % width) * (block // width) + i // width, t)
    perm.flags.writeable = False
    return perm


IDENTITY = TileMapping()


def candidates(tiles: int, blocks: set[int], widths: set[int], limit: int = 64) -> list[TileMapping]:
    """Identity plus every non-trivial (block, width) from the given block sizes (tile-group sizes
    of the layouts) and widths (tile strides seen in the transfers), smallest first, at most `limit`."""
    out = {IDENTITY}
    for b in sorted(x for x in blocks if 2 < x <= tiles):
        for w in sorted(x for x in widths if 1 < x < b and b % x == 0):
            out.add(TileMapping(b, w))
    return sorted(out)[:limit]
