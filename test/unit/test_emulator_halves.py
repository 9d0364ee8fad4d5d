"""The emulator's fp16 loops give NumPy's casts bit for bit: every fp16 widened, and fp32 narrowed
over every exponent with the mantissa patterns where rounding decides (ties, halfway +- 1,
subnormal and overflow boundaries, NaN payloads) plus random patterns."""

from __future__ import annotations

import numpy as np

from ipu.abi.halves import narrow_rows, widen_rows


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


def test_kernel_half_helpers_round_as_numpy_does() -> None:
    """`ipu.abi.halves`: `round_half`, `to_half` and `to_float` give NumPy's casts bit for bit."""
    from ipu.abi.halves import round_half, to_float, to_half

    f = _narrowing_cases().view(np.float32)
    with np.errstate(all="ignore"):
        want16 = f.astype(np.float16)
    assert np.array_equal(to_half(f).view(np.uint16), want16.view(np.uint16))
    assert np.array_equal(to_float(want16).view(np.uint32), want16.astype(np.float32).view(np.uint32))
    r = f.copy()
    round_half(r)
    assert np.array_equal(r.view(np.uint32), want16.astype(np.float32).view(np.uint32))


def _numpy_half_scores(q, k, bias, scale, safe):  # noqa: ANN001, ANN202
    """The half attention step's scores and probabilities as NumPy's half ops compute them."""
    s = np.matmul(q, k.transpose(0, 2, 1)).astype(np.float16)
    s = s * np.float16(scale)
    s = s + bias.astype(np.float16)
    p = np.exp((s.astype(np.float32) - safe[:, :, None]).astype(np.float16)).astype(np.float32)
    return s, p


def test_attention_half_steps_match_numpys_half_ops() -> None:
    """The attention update's half scores (scale, bias, subtraction of the max, exp) computed in
    float32 with each result rounded to half give NumPy's half ops bit for bit, overflow included."""
    from ipu.abi.kernels import ONE_BITS, _attention_rows

    rng = np.random.default_rng(3)
    count, qr, kr, d = 3, 5, 7, 16
    for spread in (0.5, 8.0, 40.0):  # 40: products overflow half to inf
        q = (rng.standard_normal((count, qr, d)) * spread).astype(np.float16).astype(np.float32)
        k = (rng.standard_normal((count, kr, d)) * spread).astype(np.float16).astype(np.float32)
        v = rng.standard_normal((count, kr, d)).astype(np.float32)
        bias = (rng.standard_normal((count, qr, kr)) * 3).astype(np.float32)
        scale = np.float32(0.125 * 1.1)
        state = np.zeros((count, qr, d + 2), np.float32)
        state[:, :, d] = -np.inf
        off = np.array([[0, 0, kr]] * count, np.int64)  # query row, key begin, key end
        p = {"in_esize": 2, "scale_bits": int(scale.view(np.uint32)), "k_base": 0, "causal": 0}
        assert p["scale_bits"] != ONE_BITS
        with np.errstate(all="ignore"):
            new, s = _attention_rows(p, q, k, v, bias, off, 1, state)
            want_s, _ = _numpy_half_scores(q, k, bias, scale, np.zeros((count, qr), np.float32))
        assert np.array_equal(np.asarray(s, np.float32).view(np.uint32), want_s.astype(np.float32).view(np.uint32))
        with np.errstate(all="ignore"):
            m = want_s.astype(np.float32).max(axis=2)
            safe = np.where(np.isfinite(m), m, np.float32(0))
            _, pr = _numpy_half_scores(q, k, bias, scale, safe)
            want_acc = np.matmul(pr, v)
            want_sum = pr.sum(axis=2, dtype=np.float32)
        assert np.array_equal(new[:, :, d + 1], want_sum, equal_nan=True)
        assert np.array_equal(new[:, :, :d], want_acc, equal_nan=True)
