"""NumPy helpers for the tables of the ABI, shared by the compiler and the runtime (no IR, no target)."""

from __future__ import annotations

import numpy as np


def lex_order(*cols: np.ndarray) -> np.ndarray:
    """The stable order sorting rows by `cols` (major first), as `np.lexsort(cols[::-1])`, with
    the columns' value ranges packed into as few int64 words as hold them (usually one or two
    sorts instead of one per column)."""
    n = len(cols[0])
    words: list[np.ndarray] = []
    cur, bits = None, 0
    for c in cols if n else ():
        lo = int(c.min())
        b = (int(c.max()) - lo).bit_length()
        if b == 0:  # constant: does not order anything
            continue
        if b > 62:  # too wide to pack: a word of its own
            if cur is not None:
                words.append(cur)
            words.append(c)
            cur, bits = None, 0
        elif cur is not None and bits + b <= 62:
            cur, bits = (cur << b) | (c - lo), bits + b
        else:
            if cur is not None:
                words.append(cur)
            cur, bits = c - lo, b
    if cur is not None:
        words.append(cur)
    if not words:
        return np.arange(n)
    if len(words) == 1:
        return np.argsort(words[0], kind="stable")
    return np.lexsort(words[::-1])
