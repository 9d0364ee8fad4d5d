"""The emulator's fp16 operand loops (numba, cached on disk): a kernel's half operand rows read
from, and its results written to, all tiles' flat memory, each element converted by
`ipu.abi.halves` (bit-identical to NumPy's casts, checked on every fp16 and a sample of fp32
bit patterns in test/unit/test_emulator_halves.py)."""

from __future__ import annotations

from numba import njit

from ipu.abi.halves import bits, narrow, widen


@njit(cache=True, nogil=True)
def widen_rows(mem, start, stride, out):  # noqa: ANN001, ANN201
    """out[i, j] = the fp16 bits mem[start + i stride + j] as float32: `mem` is all tiles' memory
    as one flat uint16 array, row i one tile's operand (flat and contiguous, so it vectorizes)."""
    rows, n = out.shape
    for i in range(rows):
        r, o = mem[start + i * stride : start + i * stride + n], out[i]  # contiguous: the loop vectorizes
        for j in range(n):
            o[j] = widen(r[j])


@njit(cache=True, nogil=True)
def narrow_rows(src, mem, start, stride):  # noqa: ANN001, ANN201
    """mem[start + i stride + j] = float32 src[i, j] as fp16 bits, rounded as NumPy rounds."""
    rows, n = src.shape
    for i in range(rows):
        r, o = src[i], mem[start + i * stride : start + i * stride + n]
        for j in range(n):
            o[j] = narrow(bits(r[j]))
