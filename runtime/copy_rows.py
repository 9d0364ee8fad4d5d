"""The exchange data mover: a compiled loop over row copies (numba, cached on disk).

A phase moves up to ~2M rows of a few words each; NumPy fancy indexing spends most of its time
building index arrays for that, a plain loop over contiguous word slices does not.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def copy_rows(mem32, s_tile, s_word, d_tile, d_word, words):  # noqa: ANN001, ANN201
    """Copy row i's `words[i]` 32-bit words from (s_tile[i], s_word[i]) to (d_tile[i], d_word[i])
    in `mem32` [tiles, words per tile]. Every source row is read before any row is written, as
    the hardware sends from memory as it was when the phase began."""
    total = 0
    for i in range(len(words)):
        total += words[i]
    buf = np.empty(total, np.uint32)
    o = 0
    for i in range(len(words)):
        n = words[i]
        buf[o : o + n] = mem32[s_tile[i], s_word[i] : s_word[i] + n]
        o += n
    o = 0
    for i in range(len(words)):
        n = words[i]
        mem32[d_tile[i], d_word[i] : d_word[i] + n] = buf[o : o + n]
        o += n
