"""The tile screen's inner loop, compiled by numba (cached on disk): the widest column gap any
member of a phase crosses under every candidate mapping at once, in one pass over the members.

The columns are a [tiles, mappings] table, so a member reads its two tiles' rows (contiguous,
one short vector each) and updates every mapping's maximum together: the member lists (80K pairs
a phase for GPT-2 small on mk2) are read once per phase rather than once per phase and mapping."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def longest_column_gaps(columns: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """best[m] = max over i of |columns[src[i], m] - columns[dst[i], m]| (zeros with no members)."""
    n = columns.shape[1]
    best = np.zeros(n, np.int32)
    for i in range(len(src)):
        a = columns[src[i]]
        b = columns[dst[i]]
        for m in range(n):
            gap = abs(np.int32(a[m]) - np.int32(b[m]))
            if gap > best[m]:
                best[m] = gap
    return best
