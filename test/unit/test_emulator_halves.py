"""The emulator's fp16 loops give NumPy's casts bit for bit: every fp16 widened, and fp32 narrowed
over every exponent with the mantissa patterns where rounding decides (ties, halfway +- 1,
subnormal and overflow boundaries, NaN payloads) plus random patterns."""

from __future__ import annotations

import numpy as np

from ipu.runtime.halves import narrow_rows, widen_rows


def test_every_half_widens_as_numpy_does() -> None:
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    out = np.empty((1, 1 << 16), np.float32)
    widen_rows(h, 0, 1 << 16, out)
    assert np.array_equal(out.view(np.uint32)[0], h.view(np.float16).astype(np.float32).view(np.uint32))


def _narrowing_cases() -> np.ndarray:
    """Sign x every exponent x low-mantissa patterns around fp16's rounding points, and random bits."""
    low = np.arange(1 << 14, dtype=np.uint32)  # every pattern of the 14 bits normal rounding reads
    high = np.array([0, 1, 0x1FF, 0x200, 0x3FF], np.uint32) << np.uint32(14)
    mant = (high[:, None] | low[None, :]).reshape(-1)
    # the subnormal rounding reads up to 24 bits: every pattern of the low 11 and the bits around the cut
    sub = np.arange(1 << 12, dtype=np.uint32)[:, None] << np.uint32(11) | np.array([0, 1, 0x400, 0x7FF], np.uint32)
    mant = np.concatenate([mant, sub.reshape(-1) & np.uint32(0x7FFFFF)])
    exps = np.arange(256, dtype=np.uint32) << np.uint32(23)
    bits = (exps[:, None] | mant[None, :]).reshape(-1)
    rand = np.random.default_rng(0).integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    both = np.concatenate([bits, rand])
    return np.concatenate([both, both | np.uint32(0x80000000)])


def test_narrowing_rounds_as_numpy_does() -> None:
    bits = _narrowing_cases()
    f = bits.view(np.float32).reshape(1, -1)
    out = np.empty(f.size, np.uint16)
    narrow_rows(f, out, 0, f.size)
    with np.errstate(all="ignore"):
        want = f.astype(np.float16).view(np.uint16).reshape(-1)
    bad = np.flatnonzero(out != want)
    assert not bad.size, f"{bits[bad[0]]:#010x}: {out[bad[0]]:#06x}, NumPy {want[bad[0]]:#06x}"


def test_rows_are_strided_in_flat_memory() -> None:
    """Row i of the operand lives at start + i * stride of the flat memory; nothing else moves."""
    mem = np.zeros(64, np.uint16)
    v = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 65504.0]], np.float32)
    narrow_rows(v, mem, 5, 20)
    assert mem[5:8].tolist() == v[0].astype(np.float16).view(np.uint16).tolist()
    assert mem[25:28].tolist() == v[1].astype(np.float16).view(np.uint16).tolist()
    assert np.count_nonzero(mem) == 6
    back = np.empty((2, 3), np.float32)
    widen_rows(mem, 5, 20, back)
    assert np.array_equal(back, v)
