"""The tile screen's inner loop, compiled by numba (cached on disk): the widest column gap any
member of a phase crosses under one candidate mapping, in one pass over the members (NumPy
needed five passes and three temporaries per phase and mapping)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def longest_column_gap(column: np.ndarray, src: np.ndarray, dst: np.ndarray) -> int:
    """max over i of |column[src[i]] - column[dst[i]]| (0 with no members)."""
    best = 0
    for i in range(len(src)):
        gap = abs(np.int64(column[src[i]]) - np.int64(column[dst[i]]))
        if gap > best:
            best = gap
    return best
